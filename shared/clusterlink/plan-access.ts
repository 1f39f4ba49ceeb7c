/**
 * Pure: ClusterLink's access decision (reference B.6) for one connection, from the live
 * policies: the PrivilegedAccessPolicy tier first, then AccessPolicy; in each a matching deny beats
 * a matching allow; nothing matching is upstream's `<default deny>`. What cannot be evaluated
 * fails closed: an unknown deny denies what it could have matched, an unknown allow allows
 * nothing. Matching in full: docs/code-notes.md (clusterlink/plan-access.ts).
 */
import { selectorMatches, type CompiledSelector } from "../core/label-selector.js";
import { compileWorkloadItem } from "../kinds/clusterlink.js";

/** Upstream's attribute keys. */
export const ATTRIBUTES = {
  clientNamespace: "client.clusterlink.net/namespace",
  clientServiceAccount: "client.clusterlink.net/service-account",
  clientLabelPrefix: "client.clusterlink.net/labels.",
  peerName: "peer.clusterlink.net/name",
  peerLabelPrefix: "peer.clusterlink.net/labels.",
  exportName: "export.clusterlink.net/name",
  exportNamespace: "export.clusterlink.net/namespace",
  exportLabelPrefix: "export.clusterlink.net/labels.",
} as const;

export const DEFAULT_DENY = "<default deny>";

export type Attributes = Readonly<Record<string, string>>;

/** A policy as listed: its spec as stored, not trusted to match the schema. */
export interface StoredPolicy {
  /** "namespace/name" for an AccessPolicy, "name" for a PrivilegedAccessPolicy. */
  readonly name: string;
  readonly privileged: boolean;
  /** "" for a PrivilegedAccessPolicy. */
  readonly namespace: string;
  readonly spec: unknown;
}

type Item = { readonly selector: CompiledSelector } | { readonly unevaluable: true };

/** A policy ready to decide with: every item compiled, and what could not be. */
export interface LivePolicy {
  readonly name: string;
  readonly privileged: boolean;
  readonly namespace: string;
  /** A deny also when the stored action is neither: what it is cannot be trusted to be an allow. */
  readonly action: "allow" | "deny";
  readonly actionKnown: boolean;
  readonly from: readonly Item[];
  readonly to: readonly Item[];
  /** Why (part of) the policy cannot be evaluated; empty when all of it can. */
  readonly problems: readonly string[];
}

/** Attributes whose keys start with `prefix` have values nobody knows yet, and why. */
export interface UnknownAttributes {
  readonly prefix: string;
  readonly why: string;
}

export interface AccessRequest {
  readonly source: Attributes;
  readonly destination: Attributes;
  /** Namespace of the Import (egress side) or Export (ingress side): where AccessPolicies count. */
  readonly namespace: string;
  readonly unknown?: readonly UnknownAttributes[];
}

export interface AccessDecision {
  readonly action: "allow" | "deny";
  /** The deciding policy, `<default deny>`, or (plan-authz) what denied before any policy. */
  readonly policy: string;
  readonly tier: "privileged" | "namespaced" | "default" | "precondition";
  /** A deny policy decided without being evaluated in full: it failed closed. */
  readonly failedClosed?: true;
  /** Why, when the policy name alone does not say it. */
  readonly message?: string;
  /** Policies that cannot be evaluated and could have applied to this connection. */
  readonly unevaluable?: readonly string[];
}

const UNEVALUABLE: Item = { unevaluable: true };

function compileSide(value: unknown, path: string, problems: string[]): Item[] {
  if (!Array.isArray(value)) {
    problems.push(`${path}: a list of workloadSelector items is required`);
    return [UNEVALUABLE];
  }
  return value.map((item: unknown, i) => {
    const compiled = compileWorkloadItem(item, `${path}[${i}]`);
    if (compiled.kind === "selector") return { selector: compiled.selector };
    problems.push(...compiled.problems);
    return UNEVALUABLE;
  });
}

/**
 * A policy as it can be evaluated. An action that is neither allow nor deny cannot be trusted
 * to be an allow: it counts as a deny.
 */
export function compilePolicy(stored: StoredPolicy): LivePolicy {
  const spec: Record<string, unknown> =
    typeof stored.spec === "object" && stored.spec !== null
      ? (stored.spec as Record<string, unknown>)
      : {};
  const problems: string[] = [];
  const action = spec["action"];
  if (action !== "allow" && action !== "deny")
    problems.push(`spec.action: ${JSON.stringify(action) ?? "absent"} is neither allow nor deny`);
  const from = compileSide(spec["from"], "spec.from", problems);
  const to = compileSide(spec["to"], "spec.to", problems);
  const { name, privileged, namespace } = stored;
  return {
    name,
    privileged,
    namespace,
    action: action === "allow" ? "allow" : "deny",
    actionKnown: action === "allow" || action === "deny",
    from,
    to,
    problems,
  };
}

type Match = "yes" | "no" | "unknown";

function itemMatch(
  item: Item,
  attributes: Attributes,
  unknown: readonly UnknownAttributes[],
): Match {
  if (!("selector" in item)) return "unknown";
  const { selector } = item;
  if (selector.kind === "nothing") return "no";
  const isUnknown = (key: string): boolean => unknown.some((u) => key.startsWith(u.prefix));
  const known = selector.requirements.filter((r) => !isUnknown(r.key));
  if (!selectorMatches({ kind: "requirements", requirements: known }, attributes)) return "no";
  return known.length === selector.requirements.length ? "yes" : "unknown";
}

function sideMatch(
  items: readonly Item[],
  attributes: Attributes,
  unknown: readonly UnknownAttributes[],
): Match {
  const matches = items.map((item) => itemMatch(item, attributes, unknown));
  return matches.includes("yes") ? "yes" : matches.includes("unknown") ? "unknown" : "no";
}

export function policyMatch(policy: LivePolicy, request: AccessRequest): Match {
  const unknown = request.unknown ?? [];
  const from = sideMatch(policy.from, request.source, unknown);
  if (from === "no") return "no";
  const to = sideMatch(policy.to, request.destination, unknown);
  if (to === "no") return "no";
  return from === "yes" && to === "yes" && policy.actionKnown ? "yes" : "unknown";
}

const byName = (a: LivePolicy, b: LivePolicy): number =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : 0;

function failedClosedMessage(policy: LivePolicy, request: AccessRequest): string {
  if (policy.problems.length > 0)
    return `deny policy ${policy.name} cannot be evaluated, so it denies what it could match: ${policy.problems.join("; ")}`;
  const why = (request.unknown ?? []).map((u) => u.why).join("; ");
  return `deny policy ${policy.name} may match: ${why}`;
}

/**
 * Deny before allow; a definite deny before one that failed closed; within one kind, the first
 * by name, so the answer names one policy whatever the listing order.
 */
function decideTier(
  policies: readonly LivePolicy[],
  request: AccessRequest,
  tier: "privileged" | "namespaced",
): AccessDecision | null {
  const matched = [...policies]
    .sort(byName)
    .map((policy) => ({ policy, match: policyMatch(policy, request) }));
  const first = (action: "allow" | "deny", match: Match): LivePolicy | undefined =>
    matched.find((m) => m.policy.action === action && m.match === match)?.policy;
  const deny = first("deny", "yes");
  if (deny !== undefined) return { action: "deny", policy: deny.name, tier };
  const maybeDeny = first("deny", "unknown");
  if (maybeDeny !== undefined) {
    const message = failedClosedMessage(maybeDeny, request);
    return { action: "deny", policy: maybeDeny.name, tier, failedClosed: true, message };
  }
  const allow = first("allow", "yes");
  return allow === undefined ? null : { action: "allow", policy: allow.name, tier };
}

export function decideAccess(
  policies: readonly LivePolicy[],
  request: AccessRequest,
): AccessDecision {
  const privileged = policies.filter((p) => p.privileged);
  const namespaced = policies.filter((p) => !p.privileged && p.namespace === request.namespace);
  const decision = decideTier(privileged, request, "privileged") ??
    decideTier(namespaced, request, "namespaced") ?? {
      action: "deny",
      policy: DEFAULT_DENY,
      tier: "default",
    };
  const unevaluable = [...privileged, ...namespaced]
    .filter((p) => p.problems.length > 0 && policyMatch(p, request) !== "no")
    .map((p) => p.name)
    .sort();
  return unevaluable.length === 0 ? decision : { ...decision, unevaluable };
}
