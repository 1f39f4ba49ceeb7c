/**
 * The compiler: NetworkPolicies, Pods and Namespaces -> one NetworkPolicyEndpoint table per
 * selected Pod and one NetworkPolicyPeerSet per policy (ADR 0005), with the standard Kubernetes
 * semantics (reference C.7). Pure and deterministic: the same world gives byte-identical tables,
 * which is what lets any number of stateless instances write them without coordination.
 *
 * Bits: one per (policy, rule) and direction, in policy-name then rule order. A rule splits into
 * more bits only where one bitmap cannot say it: an egress named port resolving to different
 * ports on different destination Pods (one bit per resolved port), and ipBlocks-with-except of
 * one rule that nest (an except of one would clear the other). Past MAX_RULE_BITS a direction
 * fails closed and the problem is reported on the endpoint and on every policy involved.
 */
import {
  compileLabelSelector,
  selectorMatches,
  SELECTS_EVERYTHING,
  type CompiledSelector,
  type LabelSelector,
} from "../core/label-selector.js";
import { compareStrings } from "../core/order.js";
import type { Labels } from "../core/labels.js";
import {
  MAX_RULE_BITS,
  type AddressGroup,
  type CidrEntry,
  type DirectionTable,
  type EndpointSpec,
  type NetpolProblem,
  type PeerGroupRef,
  type PeerSetSpec,
  type PortEntry,
  type RuleBit,
} from "../kinds/netpol.js";
import type { MemberEntry } from "./member-index.js";
import {
  cidrContains,
  cidrContainsIp,
  cidrsOverlap,
  formatCidr,
  parseCidr,
  parseIpv4,
  type Cidr,
} from "./ipv4.js";
import {
  isEligiblePod,
  type Direction,
  type NetpolNamespace,
  type NetpolPod,
  type NetpolPolicy,
  type PolicyPort,
  type PolicyRule,
  type Protocol,
} from "./observed.js";

export interface NetpolWorld {
  readonly policies: readonly NetpolPolicy[];
  readonly pods: readonly NetpolPod[];
  readonly namespaces: readonly NetpolNamespace[];
}

export interface DesiredEndpoint {
  readonly namespace: string;
  readonly name: string;
  readonly podUid: string;
  readonly spec: EndpointSpec;
  readonly problems: readonly NetpolProblem[];
  /**
   * A policy with egress named ports applies: its bits split by destination Pods, so other Pods'
   * events can change this table (plan-scope.ts finds such tables by a label).
   */
  readonly egressNamedPorts: boolean;
}

export interface DesiredPeerSet {
  readonly namespace: string;
  readonly name: string;
  readonly policyUid: string;
  /** The NetworkPolicy's metadata.generation the groups were computed from. */
  readonly policyGeneration: number;
  readonly spec: PeerSetSpec;
  readonly problems: readonly NetpolProblem[];
  /**
   * For the member index (member-index.ts): per Pod in any group, "<namespace>/<name>" -> its
   * entry (group -> the addresses it put there). Lets a Pod event find and edit only the peer
   * sets its entry changes in.
   */
  readonly members: ReadonlyMap<string, MemberEntry>;
  /** A peer has a namespaceSelector: a Namespace's labels can change the groups. */
  readonly namespaceSelected: boolean;
}

export interface CompiledNetpol {
  /** Sorted by namespace, then name. */
  readonly endpoints: readonly DesiredEndpoint[];
  readonly peerSets: readonly DesiredPeerSet[];
}

// ---- policies with compiled selectors

type CompiledPeer =
  | { readonly kind: "ipBlock"; readonly cidr: Cidr; readonly except: readonly Cidr[] }
  | {
      readonly kind: "selector";
      readonly pods: CompiledSelector;
      /** null: only the policy's own namespace. */
      readonly namespaces: CompiledSelector | null;
    }
  | { readonly kind: "nothing" };

interface CompiledRule {
  readonly index: number;
  readonly ports: readonly PolicyPort[] | null;
  /** null: every peer. */
  readonly peers: readonly CompiledPeer[] | null;
}

export interface CompiledPolicy {
  readonly policy: NetpolPolicy;
  readonly podSelector: CompiledSelector;
  readonly ingress: readonly CompiledRule[];
  readonly egress: readonly CompiledRule[];
  readonly problems: NetpolProblem[];
}

function selectorOrNothing(
  selector: LabelSelector,
  path: string,
  problems: NetpolProblem[],
): CompiledSelector {
  const compiled = compileLabelSelector(selector, path);
  if (compiled.ok) return compiled.selector;
  for (const e of compiled.errors)
    problems.push({ reason: "InvalidSelector", message: `${e.path}: ${e.message}` });
  return { kind: "nothing" };
}

function compilePeer(
  peer: NonNullable<PolicyRule["peers"]>[number],
  path: string,
  problems: NetpolProblem[],
): CompiledPeer {
  if (peer.kind === "ipBlock") {
    const cidr = parseCidr(peer.cidr);
    // IPv6 (or unparsable) blocks never contain an IPv4 packet's address.
    if (cidr === null) return { kind: "nothing" };
    const except = peer.except.flatMap((e) => {
      const c = parseCidr(e);
      return c === null ? [] : [c];
    });
    return { kind: "ipBlock", cidr, except };
  }
  if (peer.podSelector === null && peer.namespaceSelector === null) return { kind: "nothing" };
  return {
    kind: "selector",
    pods:
      peer.podSelector === null
        ? SELECTS_EVERYTHING
        : selectorOrNothing(peer.podSelector, `${path}.podSelector`, problems),
    namespaces:
      peer.namespaceSelector === null
        ? null
        : selectorOrNothing(peer.namespaceSelector, `${path}.namespaceSelector`, problems),
  };
}

function compileRules(
  rules: readonly PolicyRule[],
  direction: Direction,
  problems: NetpolProblem[],
): CompiledRule[] {
  return rules.map((rule, index) => ({
    index,
    ports: rule.ports,
    peers:
      rule.peers === null
        ? null
        : rule.peers.map((p, i) =>
            compilePeer(p, `spec.${direction}[${index}].peers[${i}]`, problems),
          ),
  }));
}

/** Whether a peer of the policy selects by namespace labels (its groups depend on them). */
export const selectsNamespaces = (c: CompiledPolicy): boolean =>
  [...c.ingress, ...c.egress].some(
    (rule) => rule.peers?.some((p) => p.kind === "selector" && p.namespaces !== null) === true,
  );

export function compilePolicy(policy: NetpolPolicy): CompiledPolicy {
  const problems: NetpolProblem[] = [];
  return {
    policy,
    podSelector: selectorOrNothing(policy.podSelector, "spec.podSelector", problems),
    ingress: policy.ingressIsolation ? compileRules(policy.ingress, "ingress", problems) : [],
    egress: policy.egressIsolation ? compileRules(policy.egress, "egress", problems) : [],
    problems,
  };
}

// ---- peers

interface PeerContext {
  readonly policyNamespace: string;
  readonly namespaceLabels: ReadonlyMap<string, Labels>;
  /** Eligible Pods by namespace, in name order. */
  readonly podsByNamespace: ReadonlyMap<string, readonly NetpolPod[]>;
  readonly allPods: readonly NetpolPod[];
}

/**
 * The Pods a rule's peers can select, so a rule does not test every Pod of the cluster: all of
 * them when a peer is an ipBlock or there are no peers, else those of the namespaces the
 * selector peers reach (a Pod whose Namespace is unknown has no namespace labels, as below).
 */
function candidatePods(rule: CompiledRule, ctx: PeerContext): readonly NetpolPod[] {
  if (rule.peers === null || rule.peers.some((p) => p.kind === "ipBlock")) return ctx.allPods;
  const namespaces = new Set<string>();
  for (const peer of rule.peers) {
    if (peer.kind !== "selector") continue;
    if (peer.namespaces === null) namespaces.add(ctx.policyNamespace);
    else {
      for (const ns of ctx.podsByNamespace.keys()) {
        if (selectorMatches(peer.namespaces, ctx.namespaceLabels.get(ns))) namespaces.add(ns);
      }
    }
  }
  return [...namespaces].flatMap((ns) => ctx.podsByNamespace.get(ns) ?? []);
}

function selectorPeerMatches(peer: CompiledPeer, pod: NetpolPod, ctx: PeerContext): boolean {
  if (peer.kind !== "selector") return false;
  const inNamespace =
    peer.namespaces === null
      ? pod.namespace === ctx.policyNamespace
      : selectorMatches(peer.namespaces, ctx.namespaceLabels.get(pod.namespace));
  return inNamespace && selectorMatches(peer.pods, pod.labels);
}

function ipBlockAllows(peer: CompiledPeer, ip: number): boolean {
  return (
    peer.kind === "ipBlock" &&
    cidrContainsIp(peer.cidr, ip) &&
    !peer.except.some((e) => cidrContainsIp(e, ip))
  );
}

const hasSelectorPeers = (rule: CompiledRule): boolean =>
  rule.peers !== null && rule.peers.some((p) => p.kind === "selector");

const numericPorts = (ports: readonly PolicyPort[]): PolicyPort[] =>
  ports.filter((p) => typeof p.port !== "string");
const namedPorts = (ports: readonly PolicyPort[]): PolicyPort[] =>
  ports.filter((p) => typeof p.port === "string");

function resolveNamedPort(
  pod: NetpolPod,
  port: PolicyPort,
): { protocol: Protocol; port: number } | null {
  const found = pod.namedPorts.find((n) => n.name === port.port && n.protocol === port.protocol);
  return found === undefined ? null : { protocol: found.protocol, port: found.port };
}

const splitKey = (protocol: Protocol, port: number): string => `${protocol}/${port}`;
const groupName = (direction: Direction, index: number, split?: string): string =>
  split === undefined ? `${direction}_${index}` : `${direction}_${index}:${split}`;

/** Distinct addresses in numeric address order (each parsed once, not once per comparison). */
export function sortedAddresses(addresses: Iterable<string>): string[] {
  const keyed = [...new Set(addresses)].map((a) => ({ a, n: parseIpv4(a) ?? 0 }));
  return keyed.sort((x, y) => x.n - y.n).map((x) => x.a);
}

/** A resolved egress named port: one split bit and one address group. */
export interface SplitPort {
  readonly protocol: Protocol;
  readonly port: number;
}

/** Per egress rule with named ports: resolved port key -> the port (in key order). */
type Splits = ReadonlyMap<string, SplitPort>;

/** The addresses one Pod puts into the address groups of one rule. */
interface RuleMembership {
  /** Addresses in the `<direction>_<index>` group (empty: not selected, or no such group). */
  readonly main: readonly string[];
  /** Per resolved named port key: addresses in the `<direction>_<index>:<key>` group. */
  readonly splits: ReadonlyMap<string, { readonly port: SplitPort; addresses: string[] }>;
}

const NO_SPLITS: RuleMembership["splits"] = new Map();
const NO_PODS: PeerContext["podsByNamespace"] = new Map();

/**
 * What `pod` (a candidate of the rule) adds to the rule's groups: its addresses to the main group
 * when a selector peer selects it; and for an egress rule with named ports, per named port that
 * resolves on it, the addresses the rule's peers allow (all of them when a selector peer or no
 * peer list selects it, else those inside an ipBlock).
 */
function ruleMembership(
  direction: Direction,
  rule: CompiledRule,
  hasMainGroup: boolean,
  pod: NetpolPod,
  ctx: PeerContext,
): RuleMembership {
  const bySelector =
    rule.peers !== null && rule.peers.some((p) => selectorPeerMatches(p, pod, ctx));
  const main = hasMainGroup && bySelector ? pod.ips : [];
  const named = direction === "egress" && rule.ports !== null ? namedPorts(rule.ports) : [];
  if (named.length === 0) return { main, splits: NO_SPLITS };
  const splits = new Map<string, { port: SplitPort; addresses: string[] }>();
  const addresses = pod.ips.filter((ip) => {
    if (rule.peers === null || bySelector) return true;
    const value = parseIpv4(ip) ?? 0;
    return rule.peers.some((p) => ipBlockAllows(p, value));
  });
  if (addresses.length === 0) return { main, splits: NO_SPLITS };
  for (const item of named) {
    const resolved = resolveNamedPort(pod, item);
    if (resolved === null) continue;
    const key = splitKey(resolved.protocol, resolved.port);
    const found = splits.get(key);
    if (found === undefined) splits.set(key, { port: resolved, addresses: [...addresses] });
    else found.addresses.push(...addresses);
  }
  return { main, splits };
}

// ---- per-policy compiled rules (shared by all its endpoints)

/** One rule of a policy as its endpoints' bits need it. */
export interface RulePlan {
  readonly direction: Direction;
  readonly rule: CompiledRule;
  /** The `<direction>_<index>` group exists: the rule has selector peers and a non-split bit. */
  readonly hasMainGroup: boolean;
  readonly splits: Splits;
}

/** A policy's rules with their split bits: what an endpoint's table is assembled from. */
export interface PolicyRules {
  readonly compiled: CompiledPolicy;
  readonly rules: Readonly<Record<Direction, readonly RulePlan[]>>;
}

interface PolicyPlan extends PolicyRules {
  readonly peerSet: PeerSetSpec;
  readonly members: ReadonlyMap<string, MemberEntry>;
}

function hasMainBit(direction: Direction, rule: CompiledRule): boolean {
  return direction === "ingress" || rule.ports === null || numericPorts(rule.ports).length > 0;
}

const podKeyOf = (pod: { namespace: string; name: string }): string =>
  `${pod.namespace}/${pod.name}`;

const byKey = <T>(entries: Iterable<[string, T]>): [string, T][] =>
  [...entries].sort(([a], [b]) => compareStrings(a, b));

function planPolicy(
  compiled: CompiledPolicy,
  pods: Omit<PeerContext, "policyNamespace">,
): PolicyPlan {
  const ctx: PeerContext = { ...pods, policyNamespace: compiled.policy.namespace };
  const groups: AddressGroup[] = [];
  const members = new Map<string, Map<string, string[]>>();
  const join = (pod: NetpolPod, group: string, addresses: readonly string[]): void => {
    if (addresses.length === 0) return;
    const key = podKeyOf(pod);
    let entry = members.get(key);
    if (entry === undefined) members.set(key, (entry = new Map<string, string[]>()));
    const listed = entry.get(group);
    if (listed === undefined) entry.set(group, [...addresses]);
    else listed.push(...addresses);
  };
  const plan = (direction: Direction, rule: CompiledRule): RulePlan => {
    const hasMainGroup = hasSelectorPeers(rule) && hasMainBit(direction, rule);
    const needsPods =
      hasMainGroup ||
      (direction === "egress" && rule.ports !== null && namedPorts(rule.ports).length > 0);
    const main: string[] = [];
    const buckets = new Map<string, { port: SplitPort; addresses: string[] }>();
    for (const pod of needsPods ? candidatePods(rule, ctx) : []) {
      const membership = ruleMembership(direction, rule, hasMainGroup, pod, ctx);
      main.push(...membership.main);
      join(pod, groupName(direction, rule.index), membership.main);
      for (const [key, split] of membership.splits) {
        const bucket = buckets.get(key) ?? { port: split.port, addresses: [] };
        bucket.addresses.push(...split.addresses);
        buckets.set(key, bucket);
        join(pod, groupName(direction, rule.index, key), split.addresses);
      }
    }
    if (hasMainGroup)
      groups.push({ name: groupName(direction, rule.index), addresses: sortedAddresses(main) });
    const sorted = byKey(buckets);
    for (const [key, bucket] of sorted) {
      groups.push({
        name: groupName(direction, rule.index, key),
        addresses: sortedAddresses(bucket.addresses),
      });
    }
    return { direction, rule, hasMainGroup, splits: new Map(sorted.map(([k, b]) => [k, b.port])) };
  };
  return {
    compiled,
    rules: {
      ingress: compiled.ingress.map((r) => plan("ingress", r)),
      egress: compiled.egress.map((r) => plan("egress", r)),
    },
    peerSet: { groups },
    members: new Map(
      byKey(members).map(([pod, entry]) => [
        pod,
        new Map([...entry].map(([group, addresses]) => [group, sortedAddresses(addresses)])),
      ]),
    ),
  };
}

/**
 * The addresses one Pod puts into each address group of a policy's peer set (group name ->
 * addresses; groups it is not in are absent), given its Namespace's labels (by namespace name,
 * built once per event): what a Pod event
 * changes in a peer set, computed without any other Pod. Consistent with planPolicy by
 * construction (both use ruleMembership).
 */
export function podGroupEntries(
  compiled: CompiledPolicy,
  pod: NetpolPod,
  namespaceLabels: ReadonlyMap<string, Labels>,
): Map<string, readonly string[]> {
  const entries = new Map<string, readonly string[]>();
  if (!isEligiblePod(pod)) return entries;
  const ctx: PeerContext = {
    policyNamespace: compiled.policy.namespace,
    namespaceLabels,
    podsByNamespace: NO_PODS,
    allPods: [],
  };
  const add = (name: string, addresses: readonly string[]): void => {
    if (addresses.length === 0) return;
    entries.set(name, sortedAddresses([...(entries.get(name) ?? []), ...addresses]));
  };
  for (const direction of ["ingress", "egress"] as const) {
    for (const rule of compiled[direction]) {
      const hasMainGroup = hasSelectorPeers(rule) && hasMainBit(direction, rule);
      const membership = ruleMembership(direction, rule, hasMainGroup, pod, ctx);
      add(groupName(direction, rule.index), membership.main);
      for (const [key, split] of membership.splits)
        add(groupName(direction, rule.index, key), split.addresses);
    }
  }
  return entries;
}

/** The groups a policy's peer set has whatever the Pods: one main group per such rule. */
export function mainGroupNames(compiled: CompiledPolicy): string[] {
  return (["ingress", "egress"] as const).flatMap((direction) =>
    compiled[direction]
      .filter((rule) => hasSelectorPeers(rule) && hasMainBit(direction, rule))
      .map((rule) => groupName(direction, rule.index)),
  );
}

const SPLIT_GROUP = /^(ingress|egress)_(\d+):(TCP|UDP|SCTP)\/(\d+)$/;

/**
 * A policy's rules with the split bits its stored peer set's groups name (`egress_<i>:<key>`):
 * what an endpoint table needs of other Pods, read from the peer set instead of from every Pod.
 */
export function policyRulesFromGroups(
  compiled: CompiledPolicy,
  groupNames: readonly string[],
): PolicyRules {
  const splitsOf = new Map<string, Map<string, SplitPort>>();
  for (const name of groupNames) {
    const match = SPLIT_GROUP.exec(name);
    if (match === null) continue;
    const [, direction = "", index = "", protocol = "TCP", port = "0"] = match;
    const rule = `${direction}_${index}`;
    const splits = splitsOf.get(rule) ?? new Map<string, SplitPort>();
    const resolved = { protocol: protocol as Protocol, port: Number(port) };
    splits.set(splitKey(resolved.protocol, resolved.port), resolved);
    splitsOf.set(rule, splits);
  }
  const plan = (direction: Direction, rule: CompiledRule): RulePlan => ({
    direction,
    rule,
    hasMainGroup: hasSelectorPeers(rule) && hasMainBit(direction, rule),
    splits: new Map(byKey(splitsOf.get(groupName(direction, rule.index)) ?? [])),
  });
  return {
    compiled,
    rules: {
      ingress: compiled.ingress.map((r) => plan("ingress", r)),
      egress: compiled.egress.map((r) => plan("egress", r)),
    },
  };
}

// ---- per-endpoint bits

type PortSpec = Omit<PortEntry, "bits">;

/** What one bit allows: its peers and its ports. */
interface BitPiece {
  readonly name: string;
  readonly policy: string;
  readonly cidrs: readonly Cidr[];
  readonly withExcept: readonly { readonly cidr: Cidr; readonly except: readonly Cidr[] }[];
  readonly groups: readonly Omit<PeerGroupRef, "bits">[];
  readonly ports: readonly PortSpec[];
}

const ALL_IPV4: Cidr = { network: 0, prefix: 0 };

function portSpec(port: PolicyPort): PortSpec {
  if (port.port === null) return { protocol: port.protocol };
  const first = port.port as number;
  return port.endPort === null
    ? { protocol: port.protocol, port: first }
    : { protocol: port.protocol, port: first, endPort: port.endPort };
}

function portsFor(
  direction: Direction,
  ports: readonly PolicyPort[] | null,
  endpoint: NetpolPod,
): PortSpec[] {
  if (ports === null) return [{ protocol: "any" }];
  return ports.flatMap((port) => {
    if (typeof port.port !== "string") return [portSpec(port)];
    // Ingress named ports resolve on the endpoint's own containers; egress ones are split bits.
    if (direction === "egress") return [];
    const resolved = resolveNamedPort(endpoint, port);
    return resolved === null ? [] : [resolved];
  });
}

/** Groups ipBlocks-with-except into chunks whose blocks do not overlap: one bit per chunk. */
function disjointChunks<T extends { readonly cidr: Cidr }>(blocks: readonly T[]): T[][] {
  const chunks: T[][] = [];
  for (const block of blocks) {
    const chunk = chunks.find((c) => c.every((b) => !cidrsOverlap(b.cidr, block.cidr)));
    if (chunk === undefined) chunks.push([block]);
    else chunk.push(block);
  }
  return chunks;
}

function rulePieces(plan: RulePlan, policy: NetpolPolicy, endpoint: NetpolPod): BitPiece[] {
  const { direction, rule } = plan;
  const name = `${policy.namespace}:${policy.name}_${direction}_${rule.index}`;
  const pieces: BitPiece[] = [];
  if (hasMainBit(direction, rule)) {
    const peers = rule.peers;
    const cidrs: Cidr[] =
      peers === null
        ? [ALL_IPV4]
        : peers.flatMap((p) => (p.kind === "ipBlock" && p.except.length === 0 ? [p.cidr] : []));
    const withExcept =
      peers === null
        ? []
        : peers.flatMap((p) =>
            p.kind === "ipBlock" && p.except.length > 0 ? [{ cidr: p.cidr, except: p.except }] : [],
          );
    const groups = plan.hasMainGroup
      ? [{ peerSet: policy.name, group: groupName(direction, rule.index) }]
      : [];
    const ports = portsFor(direction, rule.ports, endpoint);
    const [first = [], ...more] = disjointChunks(withExcept);
    pieces.push({ name, policy: policy.name, cidrs, withExcept: first, groups, ports });
    more.forEach((chunk, i) =>
      pieces.push({
        name: `${name}#${i + 1}`,
        policy: policy.name,
        cidrs: [],
        withExcept: chunk,
        groups: [],
        ports,
      }),
    );
  }
  for (const [key, bucket] of plan.splits) {
    pieces.push({
      name: `${name}:${key}`,
      policy: policy.name,
      cidrs: [],
      withExcept: [],
      groups: [{ peerSet: policy.name, group: groupName(direction, rule.index, key) }],
      ports: [{ protocol: bucket.protocol, port: bucket.port }],
    });
  }
  return pieces;
}

// ---- table assembly

export const bitsToHex = (bits: bigint): string => bits.toString(16).padStart(16, "0");

/** Merges entries with the same CIDR, then adds to each the bits of every containing CIDR. */
function lpmEntries(entries: readonly { cidr: Cidr; bit: number }[]): CidrEntry[] {
  const byCidr = new Map<string, { cidr: Cidr; bits: bigint }>();
  for (const { cidr, bit } of entries) {
    const key = formatCidr(cidr);
    const entry = byCidr.get(key) ?? { cidr, bits: 0n };
    entry.bits |= 1n << BigInt(bit);
    byCidr.set(key, entry);
  }
  const all = [...byCidr.values()].sort(
    (a, b) => a.cidr.network - b.cidr.network || a.cidr.prefix - b.cidr.prefix,
  );
  return all.map((entry) => {
    let bits = 0n;
    for (const outer of all) if (cidrContains(outer.cidr, entry.cidr)) bits |= outer.bits;
    return { cidr: formatCidr(entry.cidr), bits: bitsToHex(bits) };
  });
}

const portKey = (p: PortSpec): string => `${p.protocol}/${p.port ?? ""}/${p.endPort ?? ""}`;

function portEntries(pieces: readonly BitPiece[]): PortEntry[] {
  const byKey = new Map<string, { spec: PortSpec; bits: bigint }>();
  pieces.forEach((piece, bit) => {
    for (const spec of piece.ports) {
      const entry = byKey.get(portKey(spec)) ?? { spec, bits: 0n };
      entry.bits |= 1n << BigInt(bit);
      byKey.set(portKey(spec), entry);
    }
  });
  return [...byKey.values()]
    .sort(
      (a, b) =>
        compareStrings(a.spec.protocol, b.spec.protocol) ||
        (a.spec.port ?? 0) - (b.spec.port ?? 0) ||
        (a.spec.endPort ?? 0) - (b.spec.endPort ?? 0),
    )
    .map(({ spec, bits }) => ({ ...spec, bits: bitsToHex(bits) }));
}

function groupEntries(pieces: readonly BitPiece[]): PeerGroupRef[] {
  const byKey = new Map<string, { ref: Omit<PeerGroupRef, "bits">; bits: bigint }>();
  pieces.forEach((piece, bit) => {
    for (const ref of piece.groups) {
      const key = `${ref.peerSet}\u0000${ref.group}`;
      const entry = byKey.get(key) ?? { ref, bits: 0n };
      entry.bits |= 1n << BigInt(bit);
      byKey.set(key, entry);
    }
  });
  return [...byKey.entries()]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([, { ref, bits }]) => ({ ...ref, bits: bitsToHex(bits) }));
}

export const OPEN_DIRECTION: DirectionTable = {
  isolated: false,
  failClosed: false,
  rules: [],
  cidrs: [],
  cidrsWithExcept: [],
  excepts: [],
  peerGroups: [],
  ports: [],
};

function directionTable(isolated: boolean, pieces: readonly BitPiece[]): DirectionTable {
  if (!isolated) return OPEN_DIRECTION;
  if (pieces.length > MAX_RULE_BITS) return { ...OPEN_DIRECTION, isolated: true, failClosed: true };
  const rules: RuleBit[] = pieces.map((p, bit) => ({ bit, name: p.name }));
  const withBits = <T>(pick: (p: BitPiece) => readonly T[]) =>
    pieces.flatMap((p, bit) => pick(p).map((value) => ({ value, bit })));
  return {
    isolated: true,
    failClosed: false,
    rules,
    cidrs: lpmEntries(withBits((p) => p.cidrs).map(({ value, bit }) => ({ cidr: value, bit }))),
    cidrsWithExcept: lpmEntries(
      withBits((p) => p.withExcept).map(({ value, bit }) => ({ cidr: value.cidr, bit })),
    ),
    excepts: lpmEntries(
      withBits((p) => p.withExcept.flatMap((b) => b.except)).map(({ value, bit }) => ({
        cidr: value,
        bit,
      })),
    ),
    peerGroups: groupEntries(pieces),
    ports: portEntries(pieces),
  };
}

// ---- the whole world

const byNamespaceAndName = <T extends { namespace: string; name: string }>(a: T, b: T): number =>
  compareStrings(a.namespace, b.namespace) || compareStrings(a.name, b.name);

function tooManyRules(direction: Direction, count: number, where: string): NetpolProblem {
  return {
    reason: "TooManyRules",
    message: `${where}: ${count} ${direction} rule bits exceed the datapath's ${MAX_RULE_BITS}; all ${direction} traffic is denied`,
  };
}

function groupByNamespace<T extends { readonly namespace: string }>(
  items: readonly T[],
): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const group = groups.get(item.namespace);
    if (group === undefined) groups.set(item.namespace, [item]);
    else group.push(item);
  }
  return groups;
}

/** Whether the policy's podSelector selects the Pod (same namespace). */
export const selectsEndpoint = (compiled: CompiledPolicy, pod: NetpolPod): boolean =>
  compiled.policy.namespace === pod.namespace && selectorMatches(compiled.podSelector, pod.labels);

/** A direction past MAX_RULE_BITS: the policies involved, for their peer sets' status. */
export interface TooManyRulesFinding {
  readonly direction: Direction;
  readonly count: number;
  readonly policies: readonly CompiledPolicy[];
}

/**
 * The table of one eligible Pod from the policies of its namespace that select it (in name
 * order), or null when none does.
 */
export function compileEndpoint(
  pod: NetpolPod,
  selecting: readonly PolicyRules[],
): { endpoint: DesiredEndpoint; tooManyRules: TooManyRulesFinding[] } | null {
  if (selecting.length === 0) return null;
  const problems: NetpolProblem[] = [];
  const findings: TooManyRulesFinding[] = [];
  const table = (direction: Direction): DirectionTable => {
    const applying = selecting.filter((p) =>
      direction === "ingress"
        ? p.compiled.policy.ingressIsolation
        : p.compiled.policy.egressIsolation,
    );
    const pieces = applying.flatMap((p) =>
      p.rules[direction].flatMap((r) => rulePieces(r, p.compiled.policy, pod)),
    );
    if (applying.length > 0 && pieces.length > MAX_RULE_BITS) {
      problems.push(
        tooManyRules(
          direction,
          pieces.length,
          `policies ${applying.map((p) => p.compiled.policy.name).join(", ")}`,
        ),
      );
      findings.push({ direction, count: pieces.length, policies: applying.map((p) => p.compiled) });
    }
    return directionTable(applying.length > 0, pieces);
  };
  const endpoint: DesiredEndpoint = {
    namespace: pod.namespace,
    name: pod.name,
    podUid: pod.uid,
    spec: {
      podIPs: [...pod.ips],
      ...(pod.nodeIP === null ? {} : { nodeIP: pod.nodeIP }),
      ingress: table("ingress"),
      egress: table("egress"),
    },
    problems,
    egressNamedPorts: selecting.some(
      (p) =>
        p.compiled.policy.egressIsolation &&
        p.compiled.egress.some((r) => r.ports?.some((port) => typeof port.port === "string")),
    ),
  };
  return { endpoint, tooManyRules: findings };
}

export function compileNetworkPolicies(world: NetpolWorld): CompiledNetpol {
  const namespaceLabels = new Map(world.namespaces.map((ns) => [ns.name, ns.labels]));
  const eligible = world.pods.filter(isEligiblePod).sort(byNamespaceAndName);
  const pods = { namespaceLabels, podsByNamespace: groupByNamespace(eligible), allPods: eligible };
  const plans = [...world.policies]
    .sort(byNamespaceAndName)
    .map((p) => planPolicy(compilePolicy(p), pods));
  const policyProblems = new Map(plans.map((p) => [p.compiled, [...p.compiled.problems]]));
  const plansByNamespace = groupByNamespace(
    plans.map((plan) => ({ ...plan, namespace: plan.compiled.policy.namespace })),
  );
  const endpoints: DesiredEndpoint[] = [];
  for (const pod of eligible) {
    const selecting = (plansByNamespace.get(pod.namespace) ?? []).filter((p) =>
      selectorMatches(p.compiled.podSelector, pod.labels),
    );
    const compiled = compileEndpoint(pod, selecting);
    if (compiled === null) continue;
    for (const finding of compiled.tooManyRules) {
      for (const policy of finding.policies)
        policyProblems
          .get(policy)
          ?.push(tooManyRules(finding.direction, finding.count, `endpoint ${pod.name}`));
    }
    endpoints.push(compiled.endpoint);
  }
  const peerSets = plans.map((p) => ({
    namespace: p.compiled.policy.namespace,
    name: p.compiled.policy.name,
    policyUid: p.compiled.policy.uid,
    policyGeneration: p.compiled.policy.generation,
    spec: p.peerSet,
    problems: policyProblems.get(p.compiled) ?? [],
    members: p.members,
    namespaceSelected: selectsNamespaces(p.compiled),
  }));
  return { endpoints, peerSets };
}
