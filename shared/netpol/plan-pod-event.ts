/**
 * A Pod event planned as one Pod's entry changing (its endpoint table and its entry in the peer
 * sets that list it or should), instead of a recompute of the world. Every case it cannot decide
 * exactly goes to the full recompute ("full"), so a Pod event ends where a full recompute ends,
 * byte for byte; "stale" re-runs the event. Pure. Which cases, and why: docs/code-notes.md
 * (netpol/plan-pod-event.ts).
 */
import type { Labels } from "../core/labels.js";
import { compareStrings } from "../core/order.js";
import { peerSetSpecSchema, type PeerSetSpec } from "../kinds/netpol.js";
import {
  POLICY_GENERATION_ANNOTATION,
  addressesOfMemberLabel,
  isMemberLabelKey,
  memberLabelKey,
  memberLabelValue,
  podEventSelectors,
  type MemberEntry,
} from "./member-index.js";
import { isEligiblePod, type NetpolPod, type NetpolPolicy } from "./observed.js";
import {
  compileEndpoint,
  mainGroupNames,
  podGroupEntries,
  policyRulesFromGroups,
  selectsEndpoint,
  sortedAddresses,
  type CompiledPolicy,
  type PolicyRules,
} from "./plan-tables.js";
import { tableKeyOf, type TableWrite } from "./plan-scope.js";
import { DEFAULT_MAX_PEER_SET_BYTES, peerSetTooLarge } from "./peer-set-bound.js";
import {
  desiredEndpointTable,
  peerSetTable,
  tableFits,
  type DesiredTable,
  type StoredTable,
} from "./table-objects.js";

export interface PodEventWorld {
  readonly namespace: string;
  readonly name: string;
  /** The live Pod; null when it is gone. */
  readonly pod: NetpolPod | null;
  /** The labels of the Pod's Namespace; undefined when it is gone. */
  readonly namespaceLabels: Labels | undefined;
  /** Every NetworkPolicy of the cluster, compiled (compilePolicy). */
  readonly policies: readonly CompiledPolicy[];
}

export interface PodEventScope {
  /** Every policy compiled, in namespace then name order. */
  readonly compiled: readonly CompiledPolicy[];
  /** Per policy key: the Pod's entry in its peer set (non-empty only). */
  readonly entries: ReadonlyMap<string, MemberEntry>;
  /** Policies that select the Pod as an endpoint, in name order. */
  readonly selecting: readonly CompiledPolicy[];
  /** Label selectors whose union is every peer set whose entry for the Pod must change. */
  readonly selectors: readonly string[];
  /** Peer sets the endpoint's split bits come from (policies with egress named ports). */
  readonly splitSources: readonly string[];
}

const policyKey = (p: NetpolPolicy): string => tableKeyOf(p.namespace, p.name);

const hasEgressNamedPorts = (c: CompiledPolicy): boolean =>
  c.policy.egressIsolation &&
  c.egress.some((r) => r.ports?.some((port) => typeof port.port === "string") === true);

/** What the event touches, from the world alone. */
export function podEventScope(world: PodEventWorld): PodEventScope {
  const compiled = [...world.policies].sort(
    (a, b) =>
      compareStrings(a.policy.namespace, b.policy.namespace) ||
      compareStrings(a.policy.name, b.policy.name),
  );
  const entries = new Map<string, MemberEntry>();
  const pod = world.pod;
  const eligible = pod !== null && isEligiblePod(pod);
  const namespaces = new Map(
    world.namespaceLabels === undefined ? [] : [[world.namespace, world.namespaceLabels]],
  );
  for (const c of compiled) {
    if (!eligible) break;
    const found = podGroupEntries(c, pod, namespaces);
    if (found.size > 0) entries.set(policyKey(c.policy), found);
  }
  const selecting = eligible ? compiled.filter((c) => selectsEndpoint(c, pod)) : [];
  return {
    compiled,
    entries,
    selecting,
    selectors: podEventSelectors(tableKeyOf(world.namespace, world.name), entries),
    splitSources: selecting.filter(hasEgressNamedPorts).map((c) => policyKey(c.policy)),
  };
}

export type PodEventPlan =
  | {
      readonly kind: "writes";
      /** Peer sets first (a new reference must find its group), then the endpoint table. */
      readonly peerSets: readonly TableWrite[];
      readonly endpoint: readonly TableWrite[];
      /** The endpoint's problems (none: TooManyRules goes to the full recompute). */
      readonly considered: { readonly endpoints: number; readonly peerSets: number };
    }
  | { readonly kind: "full"; readonly reason: string }
  | { readonly kind: "stale"; readonly reason: string };

class Handover extends Error {
  constructor(
    readonly kind: "full" | "stale",
    reason: string,
  ) {
    super(reason);
  }
}

const full = (reason: string): never => {
  throw new Handover("full", reason);
};

/** A stored peer set usable for a delta: computed from exactly this spec, by this version. */
function usablePeerSet(
  stored: StoredTable | null,
  policy: CompiledPolicy,
  key: string,
): PeerSetSpec {
  if (stored === null) return full(`peer set ${key} not written yet`);
  const generation = Number(stored.annotations[POLICY_GENERATION_ANNOTATION] ?? "NaN");
  if (stored.ownerUid !== policy.policy.uid) return full(`peer set ${key} has another owner`);
  if (generation > policy.policy.generation) {
    throw new Handover("stale", `peer set ${key} reflects a newer spec than the one read`);
  }
  if (generation !== policy.policy.generation)
    return full(`peer set ${key} reflects an older spec`);
  const spec = peerSetSpecSchema.safeParse(stored.parsed?.spec);
  if (!spec.success) return full(`peer set ${key} does not parse`);
  return spec.data;
}

const hasTooManyRules = (problems: readonly { reason: string }[] | undefined): boolean =>
  (problems ?? []).some((p) => p.reason === "TooManyRules");

interface PeerSetDelta {
  readonly groups: PeerSetSpec["groups"];
  readonly write: TableWrite | null;
}

/**
 * The addresses the member index says the Pod put into the peer set, after checking that taking
 * them out cannot drop another member's: every member indexed, none sharing one of them.
 */
function indexedEntry(stored: StoredTable, key: string, memberKey: string): string[] {
  const current = stored.labels[memberKey];
  const old = current === undefined ? [] : addressesOfMemberLabel(current);
  if (old === null) return full(`peer set ${key}: the Pod's entry is not indexed`);
  const others = new Set<string>();
  for (const [label, value] of Object.entries(stored.labels)) {
    if (label === memberKey || !isMemberLabelKey(label)) continue;
    const addresses = addressesOfMemberLabel(value);
    if (addresses === null) return full(`peer set ${key}: a member is not indexed`);
    for (const a of addresses) others.add(a);
  }
  if (old.some((a) => others.has(a))) return full(`peer set ${key}: an address is shared`);
  return old;
}

/** The Pod's entry taken out of a stored peer set and its wanted entry put in. */
function peerSetDelta(
  stored: StoredTable,
  spec: PeerSetSpec,
  policy: CompiledPolicy,
  memberKey: string,
  wanted: MemberEntry,
): PeerSetDelta {
  const key = tableKeyOf(stored.namespace, stored.name);
  const taken = new Set(indexedEntry(stored, key, memberKey));
  const names = new Set(spec.groups.map((g) => g.name));
  for (const name of wanted.keys())
    if (!names.has(name)) return full(`peer set ${key}: a split group is new (${name})`);
  const mains = new Set(mainGroupNames(policy));
  const groups = spec.groups.map((g) => {
    const kept = g.addresses.filter((a) => !taken.has(a));
    const addresses = sortedAddresses([...kept, ...(wanted.get(g.name) ?? [])]);
    if (addresses.length === 0 && !mains.has(g.name))
      full(`peer set ${key}: a split group empties (${g.name})`);
    return { name: g.name, addresses };
  });
  const labels: Record<string, string> = { ...stored.labels };
  delete labels[memberKey];
  if (wanted.size > 0) labels[memberKey] = memberLabelValue(wanted);
  const desired = peerSetTable(
    {
      namespace: stored.namespace,
      name: stored.name,
      policyUid: policy.policy.uid,
      policyGeneration: policy.policy.generation,
      spec: { groups },
      problems: stored.parsed?.status.problems ?? [],
    },
    labels,
  );
  const write: TableWrite | null =
    desired.content === stored.content
      ? null
      : { action: "replace", desired, resourceVersion: stored.resourceVersion, previous: stored };
  return { groups, write };
}

function endpointWrite(stored: StoredTable | null, desired: DesiredTable | null): TableWrite[] {
  if (desired === null) return stored === null ? [] : [{ action: "delete", stored }];
  if (stored === null) return [{ action: "create", desired }];
  if (stored.content === desired.content) return [];
  return [
    { action: "replace", desired, resourceVersion: stored.resourceVersion, previous: stored },
  ];
}

/** The peer sets the selectors found: each one's delta. */
function peerSetDeltas(
  scope: PodEventScope,
  found: readonly StoredTable[],
  memberKey: string,
  maxBytes: number,
): { groupsAfter: Map<string, PeerSetSpec["groups"]>; writes: TableWrite[] } {
  const byKey = new Map(scope.compiled.map((c) => [policyKey(c.policy), c]));
  const groupsAfter = new Map<string, PeerSetSpec["groups"]>();
  const writes: TableWrite[] = [];
  const sorted = [...found].sort((a, b) =>
    compareStrings(tableKeyOf(a.namespace, a.name), tableKeyOf(b.namespace, b.name)),
  );
  for (const stored of sorted) {
    const key = tableKeyOf(stored.namespace, stored.name);
    if (groupsAfter.has(key)) continue; // found by two selectors
    const policy = byKey.get(key) ?? full(`peer set ${key} has no policy`);
    const spec = usablePeerSet(stored, policy, key);
    if (peerSetTooLarge(stored.parsed?.status.problems)) {
      // Stored failing closed, without an index: the Pod is found because it should be listed,
      // and listing one more cannot make it fit. Left as it is (peer-set-bound.ts).
      groupsAfter.set(key, spec.groups);
      continue;
    }
    const wanted = scope.entries.get(key) ?? new Map<string, readonly string[]>();
    const delta = peerSetDelta(stored, spec, policy, memberKey, wanted);
    if (delta.write?.action === "replace" && !tableFits(delta.write.desired, maxBytes)) {
      full(`peer set ${key} outgrows its bound`);
    }
    groupsAfter.set(key, delta.groups);
    if (delta.write !== null) writes.push(delta.write);
  }
  return { groupsAfter, writes };
}

/** The Pod's endpoint table, its split bits taken from the peer sets as they will be. */
function desiredEndpoint(
  world: PodEventWorld,
  scope: PodEventScope,
  splitSources: ReadonlyMap<string, StoredTable | null>,
  groupsAfter: ReadonlyMap<string, PeerSetSpec["groups"]>,
): DesiredTable | null {
  if (world.pod === null || scope.selecting.length === 0) return null;
  const selecting: PolicyRules[] = scope.selecting.map((c) => {
    const key = policyKey(c.policy);
    if (!hasEgressNamedPorts(c)) return policyRulesFromGroups(c, []);
    const groups =
      groupsAfter.get(key) ?? usablePeerSet(splitSources.get(key) ?? null, c, key).groups;
    return policyRulesFromGroups(
      c,
      groups.map((g) => g.name),
    );
  });
  const compiled = compileEndpoint(world.pod, selecting);
  if (compiled === null) return null;
  if (compiled.tooManyRules.length > 0) full("the endpoint has too many rules");
  return desiredEndpointTable(compiled.endpoint);
}

/** The stored tables a Pod event read (podEventScope says which). */
export interface PodEventTables {
  /** The Pod's endpoint table. */
  readonly ownTable: StoredTable | null;
  /** The peer sets scope.selectors listed. */
  readonly found: readonly StoredTable[];
  /** scope.splitSources as read (null: does not exist). */
  readonly splitSources: ReadonlyMap<string, StoredTable | null>;
}

/** The writes of one Pod event; `maxPeerSetBytes`: the peer sets' bound (peer-set-bound.ts). */
export function planPodEvent(
  world: PodEventWorld,
  scope: PodEventScope,
  { ownTable, found, splitSources }: PodEventTables,
  maxPeerSetBytes: number = DEFAULT_MAX_PEER_SET_BYTES,
): PodEventPlan {
  try {
    const memberKey = memberLabelKey(tableKeyOf(world.namespace, world.name));
    const deltas = peerSetDeltas(scope, found, memberKey, maxPeerSetBytes);
    if (hasTooManyRules(ownTable?.parsed?.status.problems)) {
      return { kind: "full", reason: "the endpoint had too many rules" };
    }
    const desired = desiredEndpoint(world, scope, splitSources, deltas.groupsAfter);
    return {
      kind: "writes",
      peerSets: deltas.writes,
      endpoint: endpointWrite(ownTable, desired),
      considered: { endpoints: desired === null ? 0 : 1, peerSets: deltas.groupsAfter.size },
    };
  } catch (error) {
    if (error instanceof Handover) return { kind: error.kind, reason: error.message };
    throw error;
  }
}
