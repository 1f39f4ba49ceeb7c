/**
 * Whether a watched change concerns the node agent's node (issue 31): a hint, as events are for
 * the functions. The agent re-reads everything its node enforces on every sync, so this only
 * spares syncs for changes elsewhere in the cluster: NetworkPolicyEndpoints of Pods on other
 * nodes, peer sets no table of the node references, policies of namespaces without a Pod here.
 * The scope is what the last completed sync read, a cache safe to lose (none: sync).
 */

export type HintKind = "Pod" | "NetworkPolicyEndpoint" | "NetworkPolicyPeerSet" | "NetworkPolicy";

export interface AgentHint {
  readonly kind: HintKind;
  readonly namespace: string;
  readonly name: string;
}

/** What the last completed sync read, by "<namespace>/<name>" (namespaces by name). */
export interface NodeScope {
  /** The node's Pods (Pod events come from a watch of this node's Pods only). */
  readonly pods: ReadonlySet<string>;
  /** Peer sets the node's tables reference. */
  readonly peerSets: ReadonlySet<string>;
  /** Namespaces with a Pod on the node: a policy there may select a Pod without a table. */
  readonly namespaces: ReadonlySet<string>;
}

export type HintDecision =
  { readonly sync: true; readonly why: string } | { readonly sync: false; readonly why: string };

export function planAgentHint(hint: AgentHint, scope: NodeScope | null): HintDecision {
  const key = `${hint.namespace}/${hint.name}`;
  if (scope === null) return { sync: true, why: "no sync has completed yet" };
  switch (hint.kind) {
    case "Pod":
      return { sync: true, why: `Pod ${key} is on this node` };
    case "NetworkPolicyEndpoint":
      return scope.pods.has(key)
        ? { sync: true, why: `the table of ${key}, a Pod of this node` }
        : { sync: false, why: `${key} is not a Pod of this node` };
    case "NetworkPolicyPeerSet":
      return scope.peerSets.has(key)
        ? { sync: true, why: `peer set ${key} is referenced here` }
        : { sync: false, why: `no table of this node references peer set ${key}` };
    case "NetworkPolicy":
      return scope.namespaces.has(hint.namespace)
        ? { sync: true, why: `namespace ${hint.namespace} has a Pod on this node` }
        : { sync: false, why: `namespace ${hint.namespace} has no Pod on this node` };
  }
}
