/**
 * A node's enforcement (plan-node-enforcement.ts) as one nftables table (docs/netpol.md "The node
 * agent"; ADR 0014). Pure and deterministic: the same tables render the same script, which
 * replaces the whole table in one transaction. One rule per rule bit and kind of peer, a chain per
 * distinct direction table, a verdict map by Pod address, a set per address group.
 * How the bitmaps become rules: docs/code-notes.md (netpol/plan-nft-ruleset.ts).
 */
import { createHash } from "node:crypto";
import type { DirectionTable, PeerSetSpec } from "../kinds/netpol.js";
import { formatIpv4, parseCidr, parseIpv4 } from "./ipv4.js";
import type { Direction, Protocol } from "./observed.js";
import type { DirectionVerdict, NodeEnforcement } from "./plan-node-enforcement.js";

/** An inclusive range of IPv4 addresses as unsigned 32-bit numbers. */
export interface AddressRange {
  readonly first: number;
  readonly last: number;
}

export interface PortRange {
  readonly protocol: Protocol;
  readonly first: number;
  readonly last: number;
}

/** Which peers one rule accepts: every address, ranges, a named address set, ranges less excepts. */
export type PeerMatch =
  | { readonly kind: "any" }
  | { readonly kind: "ranges"; readonly ranges: readonly AddressRange[] }
  | { readonly kind: "group"; readonly set: string }
  | {
      readonly kind: "except";
      readonly ranges: readonly AddressRange[];
      readonly except: readonly AddressRange[];
    };

export interface ChainRule {
  readonly peers: PeerMatch;
  /** "any": every protocol (ICMP too) and port. */
  readonly ports: readonly PortRange[] | "any";
  /** The rule bit's name (`<ns>:<policy>_<direction>_<index>`). */
  readonly comment: string;
}

/** One direction table as a chain: the first rule that matches allows; none: drop. */
export interface ChainProgram {
  readonly direction: Direction;
  /** Ingress from this address (the Pod's node) is always allowed. */
  readonly nodeIP: string | null;
  readonly rules: readonly ChainRule[];
}

/** What a Pod address gets in one direction: a chain to jump to, or drop. */
export type AddressVerdict = { readonly chain: string } | "drop";

export interface RulesetPlan {
  /** Every address of the node's Pods: through a pod interface, any other address is dropped. */
  readonly knownIPs: readonly string[];
  /** Address sets by name: the groups of peer sets the chains reference. */
  readonly groups: ReadonlyMap<string, readonly string[]>;
  readonly chains: ReadonlyMap<string, ChainProgram>;
  readonly verdicts: Readonly<Record<Direction, ReadonlyMap<string, AddressVerdict>>>;
}

export interface RulesetOptions {
  /** The nftables table (family inet) the agent owns. */
  readonly table: string;
  /**
   * Interfaces the node's Pods are reached through (the pod bridge, or `veth*`-style patterns):
   * traffic through them from or to an address no Pod of the node has is dropped.
   */
  readonly podInterfaces: readonly string[];
}

export interface RulesetStats {
  readonly pods: number;
  readonly chains: number;
  readonly rules: number;
  readonly sets: number;
  /** Elements of every set and map. */
  readonly elements: number;
  readonly bytes: number;
}

const PROTOCOLS: readonly Protocol[] = ["TCP", "UDP", "SCTP"];

const hash = (text: string): string => createHash("sha256").update(text).digest("hex").slice(0, 16);

/** Whether bit `bit` is set in 16 hex digits (bit 0 is the last digit's lowest bit). */
function hasBit(bits: string, bit: number): boolean {
  const digit = parseInt(bits[15 - Math.floor(bit / 4)] ?? "0", 16);
  return ((digit >> (bit % 4)) & 1) === 1;
}

/** Overlapping or adjacent ranges merged, sorted. */
function mergeRanges<T extends { first: number; last: number }>(ranges: readonly T[]): T[] {
  const sorted = [...ranges].sort((a, b) => a.first - b.first || a.last - b.last);
  const merged: T[] = [];
  for (const range of sorted) {
    const last = merged[merged.length - 1];
    if (last !== undefined && range.first <= last.last + 1) {
      merged[merged.length - 1] = { ...last, last: Math.max(last.last, range.last) };
    } else {
      merged.push({ ...range });
    }
  }
  return merged;
}

function rangesWithBit(entries: DirectionTable["cidrs"], bit: number): AddressRange[] {
  return mergeRanges(
    entries.flatMap((entry) => {
      if (!hasBit(entry.bits, bit)) return [];
      const cidr = parseCidr(entry.cidr);
      if (cidr === null) return [];
      return [{ first: cidr.network, last: cidr.network + 2 ** (32 - cidr.prefix) - 1 }];
    }),
  );
}

function portsWithBit(entries: DirectionTable["ports"], bit: number): PortRange[] | "any" {
  const ranges: PortRange[] = [];
  for (const entry of entries) {
    if (!hasBit(entry.bits, bit)) continue;
    if (entry.protocol === "any" && entry.port === undefined) return "any";
    const first = entry.port ?? 1;
    const last = entry.port === undefined ? 65535 : (entry.endPort ?? entry.port);
    const protocols = entry.protocol === "any" ? PROTOCOLS : [entry.protocol];
    for (const protocol of protocols) ranges.push({ protocol, first, last });
  }
  return PROTOCOLS.flatMap((protocol) =>
    mergeRanges(ranges.filter((r) => r.protocol === protocol)),
  );
}

const coversAll = (ranges: readonly AddressRange[]): boolean =>
  ranges.length === 1 && ranges[0]?.first === 0 && ranges[0].last === 0xffffffff;

/** The address set of one group of a peer set, by a name nft accepts. */
export const groupSetName = (namespace: string, peerSet: string, group: string): string =>
  `g_${hash(`${namespace}/${peerSet}/${group}`)}`;

/** One direction table of an endpoint in `namespace` as a chain program. */
export function chainProgram(
  table: DirectionTable,
  direction: Direction,
  namespace: string,
  nodeIP: string | null,
): ChainProgram {
  const rules: ChainRule[] = [];
  for (const { bit, name } of [...table.rules].sort((a, b) => a.bit - b.bit)) {
    const ports = portsWithBit(table.ports, bit);
    if (ports !== "any" && ports.length === 0) continue;
    const add = (peers: PeerMatch) => rules.push({ peers, ports, comment: name });
    const prim = rangesWithBit(table.cidrs, bit);
    if (prim.length > 0) add(coversAll(prim) ? { kind: "any" } : { kind: "ranges", ranges: prim });
    const groups = new Set(
      table.peerGroups
        .filter((g) => hasBit(g.bits, bit))
        .map((g) => groupSetName(namespace, g.peerSet, g.group)),
    );
    for (const set of [...groups].sort()) add({ kind: "group", set });
    const supp = rangesWithBit(table.cidrsWithExcept, bit);
    const except = rangesWithBit(table.excepts, bit);
    if (supp.length > 0) add({ kind: "except", ranges: supp, except });
  }
  return { direction, nodeIP: direction === "ingress" ? nodeIP : null, rules };
}

/** The addresses of each referenced group, IPv4 only; a group not stored is empty (matches nothing). */
function groupAddresses(
  namespace: string,
  table: DirectionTable,
  peerSets: ReadonlyMap<string, PeerSetSpec>,
  into: Map<string, readonly string[]>,
): void {
  for (const ref of table.peerGroups) {
    const name = groupSetName(namespace, ref.peerSet, ref.group);
    if (into.has(name)) continue;
    const group = peerSets
      .get(`${namespace}/${ref.peerSet}`)
      ?.groups.find((g) => g.name === ref.group);
    const addresses = (group?.addresses ?? []).filter((a) => parseIpv4(a) !== null);
    into.set(name, [...new Set(addresses)].sort(byAddress));
  }
}

const byAddress = (a: string, b: string): number => (parseIpv4(a) ?? 0) - (parseIpv4(b) ?? 0);

/**
 * The node's ruleset as data: chains shared by identical tables, the groups they reference, and
 * each Pod address's verdict per direction. `peerSets` by "<namespace>/<name>".
 */
export function planNodeRuleset(
  enforcement: NodeEnforcement,
  peerSets: ReadonlyMap<string, PeerSetSpec>,
): RulesetPlan {
  const chains = new Map<string, ChainProgram>();
  const groups = new Map<string, readonly string[]>();
  const verdicts = {
    ingress: new Map<string, AddressVerdict>(),
    egress: new Map<string, AddressVerdict>(),
  };
  const chainOf = (
    verdict: DirectionVerdict,
    direction: Direction,
    namespace: string,
    nodeIP: string | null,
  ) => {
    if (verdict.kind !== "table") return verdict.kind === "drop" ? "drop" : null;
    groupAddresses(namespace, verdict.table, peerSets, groups);
    const program = chainProgram(verdict.table, direction, namespace, nodeIP);
    const name = `${direction === "ingress" ? "in" : "eg"}_${hash(renderChainBody(program).join("\n"))}`;
    chains.set(name, program);
    return { chain: name };
  };
  for (const pod of enforcement.pods) {
    for (const direction of ["ingress", "egress"] as const) {
      const verdict = chainOf(pod[direction], direction, pod.namespace, pod.nodeIP);
      if (verdict === null) continue;
      for (const ip of pod.ips) verdicts[direction].set(ip, verdict);
    }
  }
  return { knownIPs: enforcement.knownIPs, groups, chains, verdicts };
}

// ---- the model: what the rendered rules do to a packet, for the tests that compare with decide()

export interface ModelPacket {
  /** The node's Pod the packet leaves (egress) or reaches (ingress). */
  readonly podIP: string;
  readonly direction: Direction;
  readonly peerIP: string;
  readonly protocol: Protocol;
  readonly port: number;
}

const inRanges = (ranges: readonly AddressRange[], ip: number): boolean =>
  ranges.some((r) => ip >= r.first && ip <= r.last);

function peerMatches(plan: RulesetPlan, peers: PeerMatch, peerIP: string, ip: number): boolean {
  switch (peers.kind) {
    case "any":
      return true;
    case "ranges":
      return inRanges(peers.ranges, ip);
    case "group":
      return plan.groups.get(peers.set)?.includes(peerIP) ?? false;
    case "except":
      return inRanges(peers.ranges, ip) && !inRanges(peers.except, ip);
  }
}

/** Whether the plan's chains let a new connection's first packet through, judged on one direction. */
export function rulesetAllows(plan: RulesetPlan, packet: ModelPacket): boolean {
  const verdict = plan.verdicts[packet.direction].get(packet.podIP);
  if (verdict === undefined) return true;
  if (verdict === "drop") return false;
  const program = plan.chains.get(verdict.chain);
  if (program === undefined) return false;
  if (program.nodeIP !== null && program.nodeIP === packet.peerIP) return true;
  const ip = parseIpv4(packet.peerIP);
  if (ip === null) return false;
  return program.rules.some(
    (rule) =>
      peerMatches(plan, rule.peers, packet.peerIP, ip) &&
      (rule.ports === "any" ||
        rule.ports.some(
          (p) => p.protocol === packet.protocol && packet.port >= p.first && packet.port <= p.last,
        )),
  );
}

// ---- rendering

/** A range as nft writes it: an address, a prefix when aligned, else first-last. */
function formatRange(range: AddressRange): string {
  if (range.first === range.last) return formatIpv4(range.first);
  const size = range.last - range.first + 1;
  const prefix = 32 - Math.log2(size);
  if (Number.isInteger(prefix) && range.first % size === 0) {
    return `${formatIpv4(range.first)}/${prefix}`;
  }
  return `${formatIpv4(range.first)}-${formatIpv4(range.last)}`;
}

const anonymousSet = (elements: readonly string[]): string => `{ ${elements.join(", ")} }`;

function portMatch(ports: readonly PortRange[] | "any"): string {
  if (ports === "any") return "";
  const elements = ports.map(
    (p) => `${p.protocol.toLowerCase()} . ${p.first === p.last ? p.first : `${p.first}-${p.last}`}`,
  );
  return ` meta l4proto . th dport ${anonymousSet(elements)}`;
}

function peerMatch(peers: PeerMatch, field: string): string {
  switch (peers.kind) {
    case "any":
      return "";
    case "ranges":
      return ` ${field} ${anonymousSet(peers.ranges.map(formatRange))}`;
    case "group":
      return ` ${field} @${peers.set}`;
    case "except": {
      const within = coversAll(peers.ranges)
        ? ""
        : ` ${field} ${anonymousSet(peers.ranges.map(formatRange))}`;
      if (peers.except.length === 0) return within;
      return `${within} ${field} != ${anonymousSet(peers.except.map(formatRange))}`;
    }
  }
}

/** nft comments: at most 128 bytes, no quotes. */
const comment = (text: string): string =>
  ` comment "${text.replace(/["\\\n]/g, "_").slice(0, 128)}"`;

/** A chain's rules: ingress accepts (the packet is through), egress returns to the ingress check. */
export function renderChainBody(program: ChainProgram): string[] {
  const field = program.direction === "ingress" ? "ip saddr" : "ip daddr";
  const allow = program.direction === "ingress" ? "accept" : "return";
  const lines: string[] = [];
  if (program.nodeIP !== null) lines.push(`${field} ${program.nodeIP} ${allow} comment "its node"`);
  for (const rule of program.rules) {
    const match = `${peerMatch(rule.peers, field)}${portMatch(rule.ports)}`.trim();
    lines.push(`${match === "" ? "" : `${match} `}${allow}${comment(rule.comment)}`);
  }
  lines.push("drop");
  return lines;
}

function elementsBlock(elements: readonly string[]): string {
  if (elements.length === 0) return "";
  const lines: string[] = [];
  for (let i = 0; i < elements.length; i += 8) lines.push(elements.slice(i, i + 8).join(", "));
  return `\t\telements = {\n\t\t\t${lines.join(",\n\t\t\t")}\n\t\t}\n`;
}

const verdictText = (verdict: AddressVerdict): string =>
  verdict === "drop" ? "drop" : `jump ${verdict.chain}`;

function verdictMap(name: string, verdicts: ReadonlyMap<string, AddressVerdict>): string {
  const elements = [...verdicts.entries()]
    .sort(([a], [b]) => byAddress(a, b))
    .map(([ip, verdict]) => `${ip} : ${verdictText(verdict)}`);
  return `\tmap ${name} {\n\t\ttype ipv4_addr : verdict\n${elementsBlock(elements)}\t}\n`;
}

const addressSet = (name: string, addresses: readonly string[]): string =>
  `\tset ${name} {\n\t\ttype ipv4_addr\n${elementsBlock(addresses)}\t}\n`;

const interfaceSet = (names: readonly string[]): string => anonymousSet(names.map((n) => `"${n}"`));

/** The base chains: conntrack replies, the unknown-address guard, then egress and ingress. */
function baseChains(options: RulesetOptions): string {
  const guard = (hook: "forward" | "input"): string[] => {
    if (options.podInterfaces.length === 0) return [];
    const names = interfaceSet(options.podInterfaces);
    const lines = [
      `iifname ${names} ip saddr != @node_pods drop comment "not a pod of this node (yet)"`,
    ];
    if (hook === "forward") {
      lines.push(
        `oifname ${names} ip daddr != @node_pods drop comment "not a pod of this node (yet)"`,
      );
    }
    return lines;
  };
  const chain = (hook: "forward" | "input", lines: readonly string[]) =>
    `\tchain ${hook} {\n\t\ttype filter hook ${hook} priority filter; policy accept;\n` +
    lines.map((l) => `\t\t${l}\n`).join("") +
    "\t}\n";
  const replies = "ct state established,related accept";
  return (
    chain("forward", [
      replies,
      ...guard("forward"),
      "ip saddr vmap @pod_egress",
      "ip daddr vmap @pod_ingress",
    ]) + chain("input", [replies, ...guard("input"), "ip saddr vmap @pod_egress"])
  );
}

/**
 * The whole table as one `nft -f` script: it creates the table if missing, deletes it and
 * declares it anew, all in one transaction, so a packet meets the old ruleset or the new one.
 */
export function renderNftScript(plan: RulesetPlan, options: RulesetOptions): string {
  const { table } = options;
  const sets = [...plan.groups.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, addresses]) => addressSet(name, addresses));
  const chains = [...plan.chains.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(
      ([name, program]) =>
        `\tchain ${name} {\n${renderChainBody(program)
          .map((l) => `\t\t${l}\n`)
          .join("")}\t}\n`,
    );
  return (
    `table inet ${table}\n` +
    `delete table inet ${table}\n` +
    `table inet ${table} {\n` +
    addressSet("node_pods", plan.knownIPs) +
    sets.join("") +
    verdictMap("pod_ingress", plan.verdicts.ingress) +
    verdictMap("pod_egress", plan.verdicts.egress) +
    chains.join("") +
    baseChains(options) +
    "}\n"
  );
}

export function rulesetStats(plan: RulesetPlan, script: string, pods: number): RulesetStats {
  let rules = 0;
  for (const program of plan.chains.values()) rules += program.rules.length + 1;
  let elements = plan.knownIPs.length + plan.verdicts.ingress.size + plan.verdicts.egress.size;
  for (const addresses of plan.groups.values()) elements += addresses.length;
  return {
    pods,
    chains: plan.chains.size,
    rules,
    sets: plan.groups.size + 1,
    elements,
    bytes: Buffer.byteLength(script),
  };
}

export interface PlannedScript {
  readonly plan: RulesetPlan;
  readonly script: string;
  readonly stats: RulesetStats;
}

/** The node's enforcement as the script that replaces the agent's table, with its size. */
export function planNodeScript(
  enforcement: NodeEnforcement,
  peerSets: ReadonlyMap<string, PeerSetSpec>,
  options: RulesetOptions,
): PlannedScript {
  const plan = planNodeRuleset(enforcement, peerSets);
  const script = renderNftScript(plan, options);
  return { plan, script, stats: rulesetStats(plan, script, enforcement.pods.length) };
}

// ---- incremental updates

/** `add element` / `delete element` of one set or map, or nothing when there is nothing to do. */
function elementCommand(
  verb: "add" | "delete",
  table: string,
  set: string,
  elements: readonly string[],
): string[] {
  if (elements.length === 0) return [];
  return [`${verb} element inet ${table} ${set} ${anonymousSet(elements)}`];
}

function setDiff(before: readonly string[], after: readonly string[]) {
  const was = new Set(before);
  const is = new Set(after);
  return {
    added: after.filter((e) => !was.has(e)),
    removed: before.filter((e) => !is.has(e)),
  };
}

function mapDiff(
  table: string,
  map: string,
  before: ReadonlyMap<string, AddressVerdict>,
  after: ReadonlyMap<string, AddressVerdict>,
): { remove: string[]; add: string[] } {
  const same = (a: AddressVerdict | undefined, b: AddressVerdict | undefined) =>
    a !== undefined && b !== undefined && verdictText(a) === verdictText(b);
  const gone = [...before.keys()].filter((ip) => !same(before.get(ip), after.get(ip)));
  const come = [...after.entries()].filter(([ip, v]) => !same(before.get(ip), v));
  return {
    remove: elementCommand("delete", table, map, gone.sort(byAddress)),
    add: elementCommand(
      "add",
      table,
      map,
      come.sort(([a], [b]) => byAddress(a, b)).map(([ip, v]) => `${ip} : ${verdictText(v)}`),
    ),
  };
}

/**
 * The script that turns the table as `previous` left it into `next`, in one transaction: new
 * sets and chains first, then the verdict maps and set elements, then what nothing references
 * any more. Chains are named by their content, so a chain of either plan is unchanged or absent;
 * only set elements and map entries change in place. Far smaller than the whole table when one
 * table or group changes (docs/netpol.md, "Loading the ruleset"). "" when nothing changed. It
 * assumes the kernel holds `previous`: a command that finds otherwise fails the transaction, and
 * the caller then replaces the whole table.
 */
export function renderNftUpdate(
  previous: RulesetPlan,
  next: RulesetPlan,
  options: RulesetOptions,
): string {
  const { table } = options;
  const commands: string[] = [];
  const tail: string[] = [];
  for (const [name, addresses] of next.groups) {
    const before = previous.groups.get(name);
    if (before === undefined) {
      commands.push(`add set inet ${table} ${name} { type ipv4_addr; }`);
      commands.push(...elementCommand("add", table, name, addresses));
    } else {
      const { added, removed } = setDiff(before, addresses);
      commands.push(...elementCommand("delete", table, name, removed));
      commands.push(...elementCommand("add", table, name, added));
    }
  }
  for (const [name, program] of next.chains) {
    if (previous.chains.has(name)) continue;
    commands.push(`add chain inet ${table} ${name}`);
    for (const rule of renderChainBody(program))
      commands.push(`add rule inet ${table} ${name} ${rule}`);
  }
  const known = setDiff(previous.knownIPs, next.knownIPs);
  commands.push(...elementCommand("add", table, "node_pods", known.added));
  for (const [map, direction] of [
    ["pod_ingress", "ingress"],
    ["pod_egress", "egress"],
  ] as const) {
    const { remove, add } = mapDiff(
      table,
      map,
      previous.verdicts[direction],
      next.verdicts[direction],
    );
    commands.push(...remove, ...add);
  }
  tail.push(...elementCommand("delete", table, "node_pods", known.removed));
  for (const name of previous.chains.keys())
    if (!next.chains.has(name)) tail.push(`delete chain inet ${table} ${name}`);
  for (const name of previous.groups.keys())
    if (!next.groups.has(name)) tail.push(`delete set inet ${table} ${name}`);
  const all = [...commands, ...tail];
  return all.length === 0 ? "" : `${all.join("\n")}\n`;
}
