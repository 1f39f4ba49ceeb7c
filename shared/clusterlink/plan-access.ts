/**
 * Pure: ClusterLink's access decision (reference B.6) for one connection, from the live
 * policies. The PrivilegedAccessPolicy tier is asked first, then the AccessPolicy tier (only
 * policies in the namespace of the Import or Export the decision is for); in each tier a
 * matching deny beats a matching allow; nothing matching is upstream's `<default deny>`.
 *
 * A policy matches when one of its `from` items selects the source attributes and one of its
 * `to` items selects the destination attributes. A workloadSelector is a label selector over
 * the attributes (keys as upstream names them, e.g. `client.clusterlink.net/namespace`,
 * `export.clusterlink.net/labels.app`); workloadSets are not supported upstream either and
 * select nothing, as does an invalid selector (admission refuses both).
 */
import { compileLabelSelector, selectorMatches } from "../core/label-selector.js";
import type { AccessPolicySpec } from "../rules/clusterlink-kinds.js";

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

export interface LivePolicy {
  /** "namespace/name" for an AccessPolicy, "name" for a PrivilegedAccessPolicy. */
  readonly name: string;
  readonly privileged: boolean;
  /** "" for a PrivilegedAccessPolicy. */
  readonly namespace: string;
  readonly spec: AccessPolicySpec;
}

export interface AccessRequest {
  readonly source: Attributes;
  readonly destination: Attributes;
  /** Namespace of the Import (egress side) or Export (ingress side): where AccessPolicies count. */
  readonly namespace: string;
}

export interface AccessDecision {
  readonly action: "allow" | "deny";
  /** The deciding policy, or `<default deny>`. */
  readonly policy: string;
  readonly tier: "privileged" | "namespaced" | "default";
}

type Items = AccessPolicySpec["from"];

function itemsSelect(items: Items, attributes: Attributes): boolean {
  return items.some((item) => {
    if (item.workloadSelector === undefined) return false;
    const compiled = compileLabelSelector(item.workloadSelector, "workloadSelector");
    return compiled.ok && selectorMatches(compiled.selector, attributes);
  });
}

export const policyMatches = (spec: AccessPolicySpec, request: AccessRequest): boolean =>
  itemsSelect(spec.from, request.source) && itemsSelect(spec.to, request.destination);

/** Deny before allow; within one action, the first by name, so the answer names one policy. */
function decideTier(policies: readonly LivePolicy[], request: AccessRequest): LivePolicy | null {
  const matching = policies
    .filter((p) => policyMatches(p.spec, request))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return (
    matching.find((p) => p.spec.action === "deny") ??
    matching.find((p) => p.spec.action === "allow") ??
    null
  );
}

export function decideAccess(
  policies: readonly LivePolicy[],
  request: AccessRequest,
): AccessDecision {
  const privileged = decideTier(
    policies.filter((p) => p.privileged),
    request,
  );
  if (privileged !== null) {
    return { action: privileged.spec.action, policy: privileged.name, tier: "privileged" };
  }
  const namespaced = decideTier(
    policies.filter((p) => !p.privileged && p.namespace === request.namespace),
    request,
  );
  if (namespaced !== null) {
    return { action: namespaced.spec.action, policy: namespaced.name, tier: "namespaced" };
  }
  return { action: "deny", policy: DEFAULT_DENY, tier: "default" };
}
