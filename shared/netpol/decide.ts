/**
 * The datapath as a pure function: would this packet pass, judged only from the stored tables
 * (NetworkPolicyEndpoint and NetworkPolicyPeerSet specs), never from a policy, Pod or Namespace.
 * Per reference C.4: longest-prefix lookups in each CIDR table (whose bits already include those
 * of containing CIDRs), then allow = (prim | groups | (supp & ~except)) & ports != 0.
 */
import type { DirectionTable, EndpointSpec, PeerSetSpec } from "../rules/netpol-kinds.js";
import { parseCidr, parseIpv4, cidrContainsIp, type Cidr } from "./ipv4.js";
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

function lpmBits(entries: DirectionTable["cidrs"], ip: number): bigint {
  let best: { cidr: Cidr; bits: string } | null = null;
  for (const entry of entries) {
    const cidr = parseCidr(entry.cidr);
    if (cidr === null || !cidrContainsIp(cidr, ip)) continue;
    if (best === null || cidr.prefix > best.cidr.prefix) best = { cidr, bits: entry.bits };
  }
  return best === null ? 0n : BigInt(`0x${best.bits}`);
}

function groupBits(
  table: DirectionTable,
  namespace: string,
  peerIP: string,
  tables: StoredTables,
): bigint {
  let bits = 0n;
  for (const ref of table.peerGroups) {
    const group = tables.peerSets
      .get(tableKey(namespace, ref.peerSet))
      ?.groups.find((g) => g.name === ref.group);
    if (group?.addresses.includes(peerIP)) bits |= BigInt(`0x${ref.bits}`);
  }
  return bits;
}

function portBits(table: DirectionTable, protocol: Protocol, port: number): bigint {
  let bits = 0n;
  for (const entry of table.ports) {
    if (entry.protocol !== "any" && entry.protocol !== protocol) continue;
    if (entry.port !== undefined && (port < entry.port || port > (entry.endPort ?? entry.port)))
      continue;
    bits |= BigInt(`0x${entry.bits}`);
  }
  return bits;
}

function ruleNames(table: DirectionTable, bits: bigint): string[] {
  return table.rules.filter((r) => (bits >> BigInt(r.bit)) & 1n).map((r) => r.name);
}

export function decide(tables: StoredTables, packet: Packet): Decision {
  const endpoint = tables.endpoints.get(tableKey(packet.namespace, packet.pod));
  if (endpoint === undefined)
    return { allow: true, reason: "no policy selects the pod", rules: [] };
  const table = endpoint[packet.direction];
  if (!table.isolated)
    return { allow: true, reason: `not isolated for ${packet.direction}`, rules: [] };
  if (table.failClosed) return { allow: false, reason: "fail closed: too many rules", rules: [] };
  if (packet.direction === "ingress" && endpoint.nodeIP === packet.peerIP) {
    return { allow: true, reason: "from its node", rules: [] };
  }
  const ip = parseIpv4(packet.peerIP);
  if (ip === null) return { allow: false, reason: "peer is not an IPv4 address", rules: [] };
  const peers =
    lpmBits(table.cidrs, ip) |
    groupBits(table, packet.namespace, packet.peerIP, tables) |
    (lpmBits(table.cidrsWithExcept, ip) & ~lpmBits(table.excepts, ip));
  const allowed = peers & portBits(table, packet.protocol, packet.port);
  if (allowed === 0n) return { allow: false, reason: "no rule allows it", rules: [] };
  return { allow: true, reason: "allowed by rules", rules: ruleNames(table, allowed) };
}
