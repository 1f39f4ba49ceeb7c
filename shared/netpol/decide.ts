/**
 * The datapath as a pure function: would this packet pass, judged only from the stored tables
 * (NetworkPolicyEndpoint and NetworkPolicyPeerSet specs), never from a policy, Pod or Namespace.
 * Per reference C.4: longest-prefix lookups in each CIDR table (whose bits already include those
 * of containing CIDRs), then allow = (prim | groups | (supp & ~except)) & ports != 0.
 *
 * Tables are parsed once per table object (WeakMap) into numbers, and a u64 bitmap is two u32
 * halves: a decision then costs no parsing and no BigInt, as a datapath's lookups would not.
 */
import type { DirectionTable, EndpointSpec, PeerSetSpec } from "../kinds/netpol.js";
import { parseCidr, parseIpv4 } from "./ipv4.js";
import type { Direction, Protocol } from "./observed.js";

export interface StoredTables {
  /** NetworkPolicyEndpoint specs by "<namespace>/<name>". */
  readonly endpoints: ReadonlyMap<string, EndpointSpec>;
  /** NetworkPolicyPeerSet specs by "<namespace>/<name>". */
  readonly peerSets: ReadonlyMap<string, PeerSetSpec>;
}

export interface Packet {
  /** The Pod whose tables are asked: the destination for ingress, the source for egress. */
  readonly namespace: string;
  readonly pod: string;
  readonly direction: Direction;
  /** The other end's address. */
  readonly peerIP: string;
  readonly protocol: Protocol;
  /** Destination port. */
  readonly port: number;
}

export interface Decision {
  readonly allow: boolean;
  /** Why, for people: "not isolated", "from its node", "fail closed", "no rule", or the bits. */
  readonly reason: string;
  /** Names of the rule bits that allowed the packet. */
  readonly rules: readonly string[];
}

export const tableKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** A u64 bitmap as two unsigned 32-bit halves. */
interface Bits {
  hi: number;
  lo: number;
}

const bitsOf = (hex: string): Bits => ({
  hi: parseInt(hex.slice(0, 8), 16),
  lo: parseInt(hex.slice(8), 16),
});

interface PreparedCidr {
  readonly mask: number;
  readonly network: number;
  readonly prefix: number;
  readonly bits: Bits;
}

interface PreparedDirection {
  readonly cidrs: readonly PreparedCidr[];
  readonly withExcept: readonly PreparedCidr[];
  readonly excepts: readonly PreparedCidr[];
  readonly groups: readonly { peerSet: string; group: string; bits: Bits }[];
  readonly ports: readonly { protocol: string; first: number; last: number; bits: Bits }[];
}

const prepared = new WeakMap<DirectionTable, PreparedDirection>();
const preparedGroups = new WeakMap<PeerSetSpec, Map<string, ReadonlySet<string>>>();

function prepareCidrs(entries: DirectionTable["cidrs"]): PreparedCidr[] {
  return entries.flatMap((entry) => {
    const cidr = parseCidr(entry.cidr);
    if (cidr === null) return [];
    const mask = cidr.prefix === 0 ? 0 : (0xffffffff << (32 - cidr.prefix)) >>> 0;
    return [{ mask, network: cidr.network, prefix: cidr.prefix, bits: bitsOf(entry.bits) }];
  });
}

function prepare(table: DirectionTable): PreparedDirection {
  let found = prepared.get(table);
  if (found === undefined) {
    found = {
      cidrs: prepareCidrs(table.cidrs),
      withExcept: prepareCidrs(table.cidrsWithExcept),
      excepts: prepareCidrs(table.excepts),
      groups: table.peerGroups.map((g) => ({ ...g, bits: bitsOf(g.bits) })),
      ports: table.ports.map((p) => ({
        protocol: p.protocol,
        first: p.port ?? 1,
        last: p.port === undefined ? 65535 : (p.endPort ?? p.port),
        bits: bitsOf(p.bits),
      })),
    };
    prepared.set(table, found);
  }
  return found;
}

function groupsOf(peerSet: PeerSetSpec): Map<string, ReadonlySet<string>> {
  let found = preparedGroups.get(peerSet);
  if (found === undefined) {
    found = new Map(peerSet.groups.map((g) => [g.name, new Set(g.addresses)]));
    preparedGroups.set(peerSet, found);
  }
  return found;
}

const NONE: Bits = { hi: 0, lo: 0 };

function lpm(entries: readonly PreparedCidr[], ip: number): Bits {
  let best: PreparedCidr | null = null;
  for (const entry of entries) {
    if ((ip & entry.mask) >>> 0 !== entry.network) continue;
    if (best === null || entry.prefix > best.prefix) best = entry;
  }
  return best === null ? NONE : best.bits;
}

function ruleNames(table: DirectionTable, bits: Bits): string[] {
  return table.rules
    .filter((r) => ((r.bit >= 32 ? bits.hi >>> (r.bit - 32) : bits.lo >>> r.bit) & 1) === 1)
    .map((r) => r.name);
}

/** Bits of the rules whose peers include the address: prim | groups | (supp & ~except). */
function peerBits(t: PreparedDirection, tables: StoredTables, packet: Packet, ip: number): Bits {
  const prim = lpm(t.cidrs, ip);
  const supp = lpm(t.withExcept, ip);
  const except = lpm(t.excepts, ip);
  let hi = prim.hi | (supp.hi & ~except.hi);
  let lo = prim.lo | (supp.lo & ~except.lo);
  for (const ref of t.groups) {
    const peerSet = tables.peerSets.get(tableKey(packet.namespace, ref.peerSet));
    if (peerSet !== undefined && groupsOf(peerSet).get(ref.group)?.has(packet.peerIP)) {
      hi |= ref.bits.hi;
      lo |= ref.bits.lo;
    }
  }
  return { hi, lo };
}

/** Bits of the rules whose ports include the packet's protocol and port. */
function portBits(t: PreparedDirection, packet: Packet): Bits {
  let hi = 0;
  let lo = 0;
  for (const entry of t.ports) {
    if (entry.protocol !== "any" && entry.protocol !== packet.protocol) continue;
    if (packet.port < entry.first || packet.port > entry.last) continue;
    hi |= entry.bits.hi;
    lo |= entry.bits.lo;
  }
  return { hi, lo };
}

/** Allowed without looking at rules: not selected, not isolated, fail closed, its own node. */
function shortcut(endpoint: EndpointSpec | undefined, packet: Packet): Decision | null {
  if (endpoint === undefined)
    return { allow: true, reason: "no policy selects the pod", rules: [] };
  const table = endpoint[packet.direction];
  if (!table.isolated) {
    return { allow: true, reason: `not isolated for ${packet.direction}`, rules: [] };
  }
  if (table.failClosed) return { allow: false, reason: "fail closed: too many rules", rules: [] };
  if (packet.direction === "ingress" && endpoint.nodeIP === packet.peerIP) {
    return { allow: true, reason: "from its node", rules: [] };
  }
  return null;
}

export function decide(tables: StoredTables, packet: Packet): Decision {
  const endpoint = tables.endpoints.get(tableKey(packet.namespace, packet.pod));
  if (endpoint === undefined)
    return { allow: true, reason: "no policy selects the pod", rules: [] };
  const early = shortcut(endpoint, packet);
  if (early !== null) return early;
  const ip = parseIpv4(packet.peerIP);
  if (ip === null) return { allow: false, reason: "peer is not an IPv4 address", rules: [] };
  const table = endpoint[packet.direction];
  const t = prepare(table);
  const peers = peerBits(t, tables, packet, ip);
  const ports = portBits(t, packet);
  const allowed = { hi: (peers.hi & ports.hi) >>> 0, lo: (peers.lo & ports.lo) >>> 0 };
  if (allowed.hi === 0 && allowed.lo === 0) {
    return { allow: false, reason: "no rule allows it", rules: [] };
  }
  return { allow: true, reason: "allowed by rules", rules: ruleNames(table, allowed) };
}
