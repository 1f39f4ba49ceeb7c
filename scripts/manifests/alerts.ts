/**
 * The on-call alerts of sdewan-functions, written once: scripts/manifests/monitoring.ts renders
 * them as a PrometheusRule (manifests/monitoring/prometheus-rule.yaml, for prometheus-operator)
 * and as a plain Prometheus rule file (manifests/monitoring/sdewan-alerts.rules.yml, for a
 * Prometheus configured by hand, and for promtool). Each alert links its runbook section in
 * docs/runbooks.md (a heading named after the alert); test/unit/monitoring checks both ways.
 *
 * The expressions use only metrics the code registers (shared/runtime/metrics.ts,
 * connector/metrics.ts) and never a job or instance name, so they hold however the scrape
 * configuration names its targets. Counters whose labelled series appear at their first
 * increment (a first dead letter, a first CNF rejection) are matched by `firstOrIncrease`, as
 * `increase()` over a window alone misses a series that starts at 1.
 */
import { buildWebhookConfiguration } from "../../shared/admission/webhook-config.js";

export type Severity = "critical" | "warning";

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  /** Prometheus duration, e.g. "10m"; "0s" fires on the first evaluation. */
  readonly for: string;
  readonly severity: Severity;
  /** One line, with {{ $labels.x }} / {{ $value }} templates. */
  readonly summary: string;
  readonly description: string;
}

export const RULE_GROUP = "sdewan-functions";
export const RUNBOOKS_DOC = "docs/runbooks.md";

/** GitHub's anchor of a `## <alert>` heading. */
export const runbookAnchor = (alert: string): string => alert.toLowerCase();
export const runbookUrl = (alert: string): string => `${RUNBOOKS_DOC}#${runbookAnchor(alert)}`;

/** The webhook's timeoutSeconds as the shipped ValidatingWebhookConfiguration sets it. */
export function webhookTimeoutSeconds(): number {
  const timeouts = buildWebhookConfiguration({ clientConfig: { url: "https://x/" } }).webhooks.map(
    (w) => w.timeoutSeconds,
  );
  return Math.min(...timeouts);
}

/**
 * The p99 the webhook may take: half its timeout, the other half left for the API server's
 * connection, TLS and queueing; at the timeout the API server applies failurePolicy instead.
 */
export const webhookLatencyBudgetSeconds = (): number => webhookTimeoutSeconds() / 2;

/** Series of `selector` that grew within `window`, or appeared within it (a first increment). */
function firstOrIncrease(selector: string, window: string): string {
  return `(increase(${selector}[${window}]) > 0) or (${selector} unless ${selector} offset ${window})`;
}

/** What the CNF client counts when the CNF did not answer (shared/cnf/errors.ts). */
export const CNF_UNREACHABLE_REASONS = ["unreachable", "timeout", "login-failed", "bad-reply"];
/** The CNF answered and refused: the rule as sent is wrong for it, or it is broken or busy. */
export const CNF_REJECTION_REASONS = [
  "invalid",
  "not-allowed",
  "unauthorized",
  "server-error",
  "busy",
];

const WEBHOOK = 'function="validate-admission"';
/** Failures of a function: a handler threw (outcome error), or a JSON function answered 5xx. */
const FAILED = 'outcome=~"error|http-5.."';

export function alertRules(): AlertRule[] {
  const budget = webhookLatencyBudgetSeconds();
  const unreachable = `sdewan_cnf_failures_total{reason=~"${CNF_UNREACHABLE_REASONS.join("|")}"}`;
  const rejected = `sdewan_cnf_failures_total{reason=~"${CNF_REJECTION_REASONS.join("|")}"}`;
  const deadLettered = "sdewan_connector_events_dead_lettered_total";
  return [
    {
      alert: "SdewanRulesNotInSync",
      expr: "max by (namespace, cnf) (sdewan_rules_not_in_sync) > 0",
      for: "10m",
      severity: "warning",
      summary:
        "{{ $value }} rule(s) of CNF {{ $labels.namespace }}/{{ $labels.cnf }} not in sync for 10 minutes",
      description:
        "The last resyncs of CNF {{ $labels.namespace }}/{{ $labels.cnf }} left rules that are not applied on every ready pod: rejected, failing, Stalled, or waiting for the CNF. Their status conditions say which and why.",
    },
    {
      alert: "SdewanRulesDriftRepeatedly",
      expr: "max by (namespace, cnf) (sdewan_rules_repeated_drift) > 0",
      for: "0s",
      severity: "warning",
      summary:
        "{{ $value }} rule(s) of CNF {{ $labels.namespace }}/{{ $labels.cnf }} keep drifting after they are applied",
      description:
        "The resync of CNF {{ $labels.namespace }}/{{ $labels.cnf }} keeps finding rules it applied changed or missing on a pod and writing them back (RepeatedDrift): the CNF accepts writes it does not keep, or something on it undoes them. The rules are not in sync.",
    },
    {
      alert: "SdewanEventsDeadLettered",
      expr: `sum by (route, reason) (${firstOrIncrease(deadLettered, "10m")}) > 0`,
      for: "0s",
      severity: "warning",
      summary:
        "The connector gave up on events of route {{ $labels.route }} ({{ $labels.reason }})",
      description:
        "Events of route {{ $labels.route }} were dead-lettered in the last 10 minutes (reason {{ $labels.reason }}): their objects were not handled and wait for the next change or resync.",
    },
    {
      alert: "SdewanCnfUnreachable",
      expr: `sum by (function, reason) (rate(${unreachable}[5m])) > 0`,
      for: "10m",
      severity: "critical",
      summary: "{{ $labels.function }} cannot reach CNFs ({{ $labels.reason }}) for 10 minutes",
      description:
        "CNF REST calls of {{ $labels.function }} keep failing with {{ $labels.reason }} after the in-process retry: rules are not applied to the CNFs it cannot reach.",
    },
    {
      alert: "SdewanCnfRejectingRules",
      expr: `sum by (function, reason) (${firstOrIncrease(rejected, "10m")}) > 0`,
      for: "1m",
      severity: "warning",
      summary: "CNFs refuse calls of {{ $labels.function }} ({{ $labels.reason }})",
      description:
        "A CNF answered calls of {{ $labels.function }} with an error ({{ $labels.reason }}) in the last 10 minutes: a rule the CNF will not accept as it is (invalid), or a CNF that is failing, busy or refusing the credentials.",
    },
    {
      alert: "SdewanWebhookErrors",
      expr:
        `sum(rate(sdewan_events_total{${WEBHOOK},${FAILED}}[5m]))` +
        ` / sum(rate(sdewan_events_total{${WEBHOOK}}[5m])) > 0.05`,
      for: "5m",
      severity: "critical",
      summary: "validate-admission fails {{ $value | humanizePercentage }} of admission reviews",
      description:
        "The admission webhook answers more than 5% of AdmissionReviews with a server error: the API server applies the webhook's failurePolicy to them (Fail: rule writes are refused).",
    },
    {
      alert: "SdewanWebhookSlow",
      expr:
        `histogram_quantile(0.99, sum by (le) (rate(sdewan_event_duration_seconds_bucket{${WEBHOOK}}[5m])))` +
        ` > ${budget}`,
      for: "10m",
      severity: "warning",
      summary: `validate-admission p99 latency {{ $value | humanizeDuration }} is over its ${budget} s budget`,
      description: `The admission webhook's p99 latency is over ${budget} s, half the ${webhookTimeoutSeconds()} s timeoutSeconds of its ValidatingWebhookConfiguration: slower reviews time out and get the failurePolicy.`,
    },
    {
      alert: "SdewanConnectorWatchSilent",
      expr: 'sum by (route, kind) (increase(sdewan_connector_watch_restarts_total{reason="inactive"}[30m])) >= 2',
      for: "0s",
      severity: "warning",
      summary:
        "The connector's watch of {{ $labels.kind }} (route {{ $labels.route }}) keeps going silent",
      description:
        "Watches of {{ $labels.kind }} sent no event and no bookmark for watch.inactivity at least twice in 30 minutes: changes reach the functions only after each re-list, late.",
    },
    {
      alert: "SdewanConnectorRelistLoop",
      expr: "sum by (route, kind) (increase(sdewan_connector_relists_total[15m])) > 3",
      for: "5m",
      severity: "warning",
      summary: "The connector re-lists {{ $labels.kind }} (route {{ $labels.route }}) in a loop",
      description:
        "More than 3 LISTs of {{ $labels.kind }} in 15 minutes after the initial one: its watch keeps failing or expiring, and each re-list costs the API server a full LIST.",
    },
    {
      alert: "SdewanConnectorNotReady",
      expr: "max by (instance) (sdewan_connector_ready) == 0",
      for: "10m",
      severity: "critical",
      summary: "The connector {{ $labels.instance }} has not finished its initial lists",
      description:
        "sdewan_connector_ready has been 0 for 10 minutes: a route cannot list its resources, so no event of it is delivered.",
    },
    {
      alert: "SdewanClusterLinkPeerUnreachable",
      expr: "max by (peer) (sdewan_clusterlink_peer_unreachable) > 0",
      for: "5m",
      severity: "warning",
      summary: "ClusterLink Peer {{ $labels.peer }} has been unreachable for 5 minutes",
      description:
        "No gateway of Peer {{ $labels.peer }} answers clusterlink-peer-health's heartbeat (PeerReachable False, after 5 failures in a row): Imports naming it fail over to their other sources, and one with no other usable source is not Ready (NoUsableSource).",
    },
    {
      alert: "SdewanNetpolFailClosed",
      expr: "max by (direction) (sdewan_netpol_endpoints_fail_closed) > 0",
      // Deterministic (the policies need more bits than the datapath has) and never self-healing:
      // waiting would only delay the page.
      for: "0s",
      severity: "critical",
      summary:
        "{{ $value }} Pod(s) deny all {{ $labels.direction }} traffic: their NetworkPolicies need more than 64 rule bits",
      description:
        "network-policy-sync's last recompute of every table left {{ $value }} endpoint table(s) whose {{ $labels.direction }} fails closed: the policies selecting those Pods need more rule bits than the datapath's 64, so all their {{ $labels.direction }} traffic is denied, what the policies allow included. Each such Pod and policy has a FailClosed Event.",
    },
    {
      alert: "SdewanFunctionErrors",
      expr:
        `sum by (function) (rate(sdewan_events_total{${FAILED}}[5m]))` +
        " / sum by (function) (rate(sdewan_events_total[5m])) > 0.05",
      for: "10m",
      severity: "warning",
      summary: "{{ $labels.function }} fails {{ $value | humanizePercentage }} of its events",
      description:
        "More than 5% of the events of {{ $labels.function }} end with an unexpected exception (outcome error) or a 5xx: a bug or an environment the function does not expect, not a CNF or rule problem (those are outcomes retry and permanent).",
    },
  ];
}
