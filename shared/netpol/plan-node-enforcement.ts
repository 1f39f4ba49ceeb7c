/**
 * What a node agent enforces for each Pod of its node (issue 31; docs/netpol.md "The node
 * agent"): pure, from the Pods on the node, the NetworkPolicyEndpoint stored for each, and, for a
 * Pod without a current table, its namespace's NetworkPolicies. A Pod is enforced from its table
 * when one is stored for it; without one it is open only when no policy selects it, and dropped
 * (fail closed) in each direction a selecting policy isolates: its table is not computed yet.
 */
import type { DirectionTable, EndpointSpec } from "../kinds/netpol.js";
import { parseIpv4 } from "./ipv4.js";
import { isEligiblePod, type Direction, type NetpolPod, type NetpolPolicy } from "./observed.js";
import { compilePolicy, selectsEndpoint } from "./plan-tables.js";

/** A stored NetworkPolicyEndpoint as read: its owner (the Pod's uid) and spec, or unreadable. */
export type ObservedEndpoint =
  | { readonly readable: true; readonly ownerUid: string; readonly spec: EndpointSpec }
  | { readonly readable: false; readonly message: string };

/** A namespace's NetworkPolicies as read: each parsed, or unreadable (named, with why). */
export type ObservedPolicy =
  | { readonly readable: true; readonly policy: NetpolPolicy }
  | { readonly readable: false; readonly name: string; readonly message: string };

export interface NodeObservation {
  /** The Pods bound to the node, parsed. */
  readonly pods: readonly NetpolPod[];
  /** Stored tables by "<namespace>/<name>"; a Pod without one is absent. */
  readonly endpoints: ReadonlyMap<string, ObservedEndpoint>;
  /** Policies by namespace, for the namespaces podsAwaitingPolicies names. */
  readonly policies: ReadonlyMap<string, readonly ObservedPolicy[]>;
}

/** What one direction of a Pod gets: no filter, everything dropped, or its table. */
export type DirectionVerdict =
  | { readonly kind: "open" }
  | { readonly kind: "drop" }
  | { readonly kind: "table"; readonly table: DirectionTable };

export type PodState = "tables" | "unselected" | "awaiting-tables" | "unreadable" | "address-clash";

export interface PodEnforcement {
  readonly namespace: string;
  readonly name: string;
  /** Its IPv4 addresses (status.podIPs). */
  readonly ips: readonly string[];
  /** Its Node's IP as its table says: ingress from there is always allowed. */
  readonly nodeIP: string | null;
  readonly ingress: DirectionVerdict;
  readonly egress: DirectionVerdict;
  readonly state: PodState;
  /** Why, for people and logs. */
  readonly reason: string;
}

export interface NodeEnforcement {
  /** Eligible Pods of the node, by namespace and name. */
  readonly pods: readonly PodEnforcement[];
  /** Every address of those Pods, numerically sorted: the addresses the node knows. */
  readonly knownIPs: readonly string[];
}

const key = (pod: { readonly namespace: string; readonly name: string }): string =>
  `${pod.namespace}/${pod.name}`;

const OPEN: DirectionVerdict = { kind: "open" };
const DROP: DirectionVerdict = { kind: "drop" };

/** The stored table is this Pod's: its owner is the Pod as it is now, not an earlier one of the name. */
function currentTable(pod: NetpolPod, stored: ObservedEndpoint | undefined) {
  if (stored === undefined || !stored.readable) return stored;
  return stored.ownerUid === "" || pod.uid === "" || stored.ownerUid === pod.uid
    ? stored
    : undefined;
}

/**
 * The Pods that need their namespace's policies read: eligible, without a current table. Which
 * namespaces the shell lists policies in (usually none once every table is stored).
 */
export function namespacesAwaitingTables(
  pods: readonly NetpolPod[],
  endpoints: ReadonlyMap<string, ObservedEndpoint>,
): string[] {
  const namespaces = new Set<string>();
  for (const pod of pods.filter(isEligiblePod)) {
    const stored = currentTable(pod, endpoints.get(key(pod)));
    if (stored === undefined || !stored.readable) namespaces.add(pod.namespace);
  }
  return [...namespaces].sort();
}

function fromTable(
  pod: NetpolPod,
  spec: EndpointSpec,
): Omit<PodEnforcement, "namespace" | "name" | "ips"> {
  const verdict = (direction: Direction): DirectionVerdict => {
    const table = spec[direction];
    if (!table.isolated) return OPEN;
    return table.failClosed ? DROP : { kind: "table", table };
  };
  return {
    nodeIP: spec.nodeIP ?? pod.nodeIP,
    ingress: verdict("ingress"),
    egress: verdict("egress"),
    state: "tables",
    reason: "enforced from its NetworkPolicyEndpoint",
  };
}

/** No current table: open when nothing selects the Pod; dropped where a selecting policy isolates. */
function withoutTable(
  pod: NetpolPod,
  policies: readonly ObservedPolicy[],
): Omit<PodEnforcement, "namespace" | "name" | "ips"> {
  const unreadable = policies.flatMap((p) => (p.readable ? [] : [p.name]));
  const selecting = policies.flatMap((p) =>
    p.readable && selectsEndpoint(compilePolicy(p.policy), pod) ? [p.policy] : [],
  );
  // A policy that cannot be read might select the Pod, for either direction: fail closed.
  const ingress = unreadable.length > 0 || selecting.some((p) => p.ingressIsolation);
  const egress = unreadable.length > 0 || selecting.some((p) => p.egressIsolation);
  const base = { nodeIP: pod.nodeIP, ingress: ingress ? DROP : OPEN, egress: egress ? DROP : OPEN };
  if (unreadable.length > 0) {
    const reason = `NetworkPolicy ${unreadable.sort().join(", ")} cannot be read: dropped until it can`;
    return { ...base, state: "unreadable", reason };
  }
  if (selecting.length === 0)
    return { ...base, state: "unselected", reason: "no policy selects it" };
  const names = selecting.map((p) => p.name).sort();
  const reason = `selected by ${names.join(", ")}; its tables are not stored yet: dropped until they are`;
  return { ...base, state: "awaiting-tables", reason };
}

function enforce(
  pod: NetpolPod,
  observation: NodeObservation,
): Omit<PodEnforcement, "namespace" | "name" | "ips"> {
  const stored = currentTable(pod, observation.endpoints.get(key(pod)));
  if (stored !== undefined && !stored.readable) {
    return {
      nodeIP: pod.nodeIP,
      ingress: DROP,
      egress: DROP,
      state: "unreadable",
      reason: `its NetworkPolicyEndpoint cannot be read (${stored.message}): dropped until it can`,
    };
  }
  if (stored !== undefined) return fromTable(pod, stored.spec);
  return withoutTable(pod, observation.policies.get(pod.namespace) ?? []);
}

const byAddress = (a: string, b: string): number => (parseIpv4(a) ?? 0) - (parseIpv4(b) ?? 0);

/** Every eligible Pod of the node and what it gets; an address two Pods claim is dropped for both. */
export function planNodeEnforcement(observation: NodeObservation): NodeEnforcement {
  const eligible = observation.pods
    .filter(isEligiblePod)
    .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
  const claims = new Map<string, number>();
  for (const pod of eligible) for (const ip of pod.ips) claims.set(ip, (claims.get(ip) ?? 0) + 1);
  const pods = eligible.map((pod): PodEnforcement => {
    const who = { namespace: pod.namespace, name: pod.name, ips: [...pod.ips].sort(byAddress) };
    const clash = pod.ips.filter((ip) => (claims.get(ip) ?? 0) > 1);
    if (clash.length > 0) {
      const reason = `address ${clash.join(", ")} is claimed by another Pod of the node too: dropped`;
      return {
        ...who,
        nodeIP: pod.nodeIP,
        ingress: DROP,
        egress: DROP,
        state: "address-clash",
        reason,
      };
    }
    return { ...who, ...enforce(pod, observation) };
  });
  return { pods, knownIPs: [...claims.keys()].sort(byAddress) };
}
