/**
 * reconcile-rule: add/update/delete of an SDEWAN rule CR -> apply, update or delete that rule on
 * every ready pod of its CNF; finalizer; status. The event only names the rule: it is re-read
 * together with its CNF (observeRuleAndCnf), and the one-rule case of shared/sync does the rest.
 */
import type { IntakeEvent } from "../../shared/events/types.js";
import { defaultKubeClient, type KubeClient } from "../../shared/kube/index.js";
import { byKind, RULE_KIND_NAMES } from "../../shared/rules/index.js";
import type { EventFunction, HandlerContext } from "../../shared/runtime/function.js";
import { done, malformed, type Outcome } from "../../shared/runtime/outcome.js";
import { observeRuleAndCnf, parseRuleObject } from "../../shared/sync/observe.js";
import { syncRules } from "../../shared/sync/sync.js";
import { kubeFailureOutcome } from "../../shared/sync/apply-rule.js";
import { ruleResource } from "../../shared/kube/resources.js";

export interface ReconcileRuleOptions {
  /** Tests pass a client built from a test user's KubeConfig; default: in-cluster or KUBECONFIG. */
  readonly kube?: () => KubeClient;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

async function reconcile(
  event: Extract<IntakeEvent, { type: "object" }>,
  ctx: HandlerContext,
  options: ReconcileRuleOptions,
): Promise<Outcome> {
  const { ref } = event;
  const entry = byKind(ref.kind);
  if (entry === undefined) {
    return malformed(
      "UnknownKind",
      `reconcile-rule does not handle kind ${ref.kind}; supported kinds: ${RULE_KIND_NAMES.join(", ")}`,
    );
  }
  if (ref.namespace === "") {
    return malformed("MissingNamespace", `${ref.kind} ${ref.name}: rule kinds are namespaced`);
  }
  const kube = (options.kube ?? defaultKubeClient)().withCalls(ctx.calls);
  const observed = await observeRuleAndCnf(kube, ruleResource(entry), {
    namespace: ref.namespace,
    name: ref.name,
  });
  // Deleted (and released) before we got here: the finalizer path already cleaned the CNF.
  if (observed === undefined) return done("gone");
  const { raw, observation } = observed;
  const rule = parseRuleObject(raw);
  const report = await syncRules(
    {
      kube,
      env: options.env ?? process.env,
      calls: ctx.calls,
      signal: ctx.signal,
      log: ctx.log,
      now: () => new Date().toISOString(),
    },
    { observation, rules: [rule], readMode: "items", whileWaiting: "retry" },
  );
  const writes = report.pods.reduce((n, p) => n + p.writes.length, 0);
  ctx.log.debug(
    {
      rule: `${ref.kind} ${ref.namespace}/${ref.name}`,
      cnfWrites: writes,
      pods: report.pods.length,
    },
    "rule synced",
  );
  return report.outcome;
}

export function createReconcileRule(options: ReconcileRuleOptions = {}): EventFunction {
  return {
    name: "reconcile-rule",
    kind: "event",
    async handle(event, ctx) {
      if (event.type === "resync") {
        return malformed(
          "WrongFunction",
          "reconcile-rule takes rule events; send resync events to on-deployment-ready",
        );
      }
      try {
        return await reconcile(event, ctx, options);
      } catch (error) {
        return kubeFailureOutcome(error, "reading the rule and its CNF");
      }
    },
  };
}

export const reconcileRule: EventFunction = createReconcileRule();

export default reconcileRule;
