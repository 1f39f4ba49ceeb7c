/**
 * The netpol node agent's ruleset at size (issue 31): the bench's NetworkPolicy world (10,000
 * Pods, 500 Namespaces, 500 policies; bench/netpol/world.ts) compiled, then 100 and 1,000 of its
 * Pods taken as one node's. For each: the ruleset's size, planning it, loading the whole table
 * into a network namespace of its own with `nft -f` (what a start or the periodic resync does),
 * and loading the difference for one change (what a watched change does): a Pod joining an
 * address group (a peer set), and one Pod's table gaining a port. Needs root (the namespace).
 */
import { podAddress } from "../../dev/control-plane/addresses.js";
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import type { BenchContext } from "../lib/context.js";
import { atMost, type RowResult } from "../lib/report.js";
import { int, ms, num } from "../lib/stats.js";
import {
  compileObjects,
  groupSetName,
  parseNetpolPod,
  planNodeEnforcement,
  planNodeScript,
  renderNftUpdate,
  tableKey,
  type NetpolPod,
  type PlannedScript,
} from "../../shared/netpol/index.js";
import type { EndpointSpec, PeerSetSpec } from "../../shared/kinds/netpol.js";
import { netpolWorld } from "../netpol/world.js";

const OPTIONS = { table: "sdewan_netpol", podInterfaces: ["sdewanbr0"] };
const LOADS = 5;

interface NodeTables {
  readonly pods: readonly NetpolPod[];
  readonly endpoints: ReadonlyMap<string, EndpointSpec>;
  readonly peerSets: ReadonlyMap<string, PeerSetSpec>;
}

function plan(tables: NodeTables): PlannedScript {
  const endpoints = new Map(
    [...tables.endpoints].map(([key, spec]) => [
      key,
      { readable: true as const, ownerUid: "", spec },
    ]),
  );
  const enforcement = planNodeEnforcement({ pods: tables.pods, endpoints, policies: new Map() });
  return planNodeScript(enforcement, tables.peerSets, OPTIONS);
}

/** The same node after one Pod (a new address) joins an address group its tables reference. */
function withGroupMember(tables: NodeTables, planned: PlannedScript): NodeTables {
  for (const [key, spec] of tables.peerSets) {
    const [namespace = "", peerSet = ""] = key.split("/");
    const index = spec.groups.findIndex((g) =>
      planned.plan.groups.has(groupSetName(namespace, peerSet, g.name)),
    );
    const group = spec.groups[index];
    if (group === undefined) continue;
    const groups = spec.groups.with(index, {
      ...group,
      addresses: [...group.addresses, podAddress(65_000)],
    });
    return { ...tables, peerSets: new Map(tables.peerSets).set(key, { groups }) };
  }
  return tables;
}

/** The same node after its first Pod's table gains a port in its first ingress rule. */
function withPortAdded(tables: NodeTables): NodeTables {
  for (const [key, spec] of tables.endpoints) {
    const first = spec.ingress.ports[0];
    if (!spec.ingress.isolated || first === undefined) continue;
    const ports = [
      ...spec.ingress.ports,
      { ...first, protocol: "UDP" as const, port: 4242, endPort: undefined },
    ];
    const changed = { ...spec, ingress: { ...spec.ingress, ports } };
    return { ...tables, endpoints: new Map(tables.endpoints).set(key, changed) };
  }
  return tables;
}

function nft(netns: string, script: string): number {
  const started = performance.now();
  const result = spawnSync("ip", ["netns", "exec", netns, "nft", "-f", "-"], { input: script });
  if (result.status !== 0) throw new Error(`nft -f: ${result.stderr.toString().slice(0, 500)}`);
  return performance.now() - started;
}

const median = (values: number[]): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? NaN;

export interface AgentLoadMeasure {
  readonly pods: number;
  readonly planned: PlannedScript;
  readonly planMs: number;
  readonly tableMs: number;
  readonly groupUpdate: { readonly bytes: number; readonly ms: number };
  readonly tableUpdate: { readonly bytes: number; readonly ms: number };
}

/** Measures one node of `count` Pods in a network namespace of its own (removed after). */
export function measureAgentLoad(all: NodeTables, count: number): AgentLoadMeasure {
  const netns = `sdwb-${randomBytes(3).toString("hex")}`;
  const tables = { ...all, pods: all.pods.slice(0, count) };
  const started = performance.now();
  const planned = plan(tables);
  const planMs = performance.now() - started;
  execFileSync("ip", ["netns", "add", netns]);
  try {
    const tableMs = median(Array.from({ length: LOADS }, () => nft(netns, planned.script)));
    const update = (next: NodeTables) => {
      const after = plan(next);
      const script = renderNftUpdate(planned.plan, after.plan, OPTIONS);
      const times = Array.from({ length: LOADS }, () => {
        nft(netns, planned.script);
        return nft(netns, script);
      });
      return { bytes: script.length, ms: median(times) };
    };
    return {
      pods: count,
      planned,
      planMs,
      tableMs,
      groupUpdate: update(withGroupMember(tables, planned)),
      tableUpdate: update(withPortAdded(tables)),
    };
  } finally {
    execFileSync("ip", ["netns", "del", netns]);
  }
}

/** The bench world's tables, every Pod parsed. */
export function benchNodeTables(): NodeTables {
  const world = netpolWorld({ pods: 10_000, namespaces: 500, policies: 500 });
  const compiled = compileObjects(world);
  return {
    pods: world.pods.flatMap((raw) => {
      const parsed = parseNetpolPod(raw);
      return parsed.ok ? [parsed.value] : [];
    }),
    endpoints: new Map(compiled.endpoints.map((e) => [tableKey(e.namespace, e.name), e.spec])),
    peerSets: new Map(compiled.peerSets.map((p) => [tableKey(p.namespace, p.name), p.spec])),
  };
}

export function describeLoad(m: AgentLoadMeasure): string {
  const s = m.planned.stats;
  return (
    `${int(m.pods)} Pods: ${num(s.bytes / 1000)} kB, ${int(s.chains)} chains, ${int(s.rules)} rules, ` +
    `${int(s.elements)} set elements; plan ${ms(m.planMs)}, whole table ${ms(m.tableMs)}; ` +
    `a Pod joining a group ${ms(m.groupUpdate.ms)} (${int(m.groupUpdate.bytes)} B), ` +
    `a table gaining a port ${ms(m.tableUpdate.ms)} (${int(m.tableUpdate.bytes)} B)`
  );
}

export function benchNetpolAgent(ctx: BenchContext): Promise<RowResult[]> {
  const base = {
    id: "netpol-agent-load",
    metric:
      "netpol node agent: its nftables ruleset for 100 and 1,000 Pods of the 10,000-Pod world on one node, loaded with nft -f (median of 5)",
    target: "one change loaded <= 100 ms at 1,000 Pods",
    counts: "0 API requests (tables compiled in process)",
  };
  if (process.getuid?.() !== 0) {
    return Promise.resolve([
      {
        ...base,
        measured: "",
        checks: [],
        values: {},
        error: "needs root (a network namespace for nft)",
      },
    ]);
  }
  const all = benchNodeTables();
  const measures = (ctx.quick ? [100] : [100, 1_000]).map((count) => measureAgentLoad(all, count));
  const largest = measures[measures.length - 1] as AgentLoadMeasure;
  return Promise.resolve([
    {
      ...base,
      measured: measures.map(describeLoad).join("; "),
      checks: [
        atMost("group change", largest.groupUpdate.ms, 100),
        atMost("table change", largest.tableUpdate.ms, 100),
      ],
      values: Object.fromEntries(
        measures.flatMap((m) => [
          [`bytes${m.pods}`, m.planned.stats.bytes],
          [`elements${m.pods}`, m.planned.stats.elements],
          [`planMs${m.pods}`, m.planMs],
          [`tableMs${m.pods}`, m.tableMs],
          [`groupUpdateMs${m.pods}`, m.groupUpdate.ms],
          [`tableUpdateMs${m.pods}`, m.tableUpdate.ms],
        ]),
      ),
    },
  ]);
}
