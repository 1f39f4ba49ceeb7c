/**
 * reconcile-rule rows: one CNF with 2 pods and a rule whose spec changes before every event
 * (event -> applied on both pods + status written), then the same rule unchanged (what a resync
 * or a duplicate delivery costs). Events go over HTTP to the function served in this process.
 */
import path from "node:path";
import { totalWrites } from "../../dev/cnf-sim/index.js";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import { ruleResource } from "../../shared/kube/index.js";
import {
  RULE_API_VERSION,
  exampleCounts,
  exampleRule,
  requireKind,
  type RuleStatus,
} from "../../shared/kinds/index.js";
import type { Cnf } from "../../dev/world/index.js";
import { cnfRequestTally, describeTally, lastSeqs } from "../lib/cnf-requests.js";
import type { BenchContext } from "../lib/context.js";
import { postObjectEvent, type EventReply } from "../lib/events.js";
import { RecordingKube } from "../lib/recording-kube.js";
import { atMost, type RowResult } from "../lib/report.js";
import { createRules } from "../lib/rules.js";
import { serveInProcess } from "../lib/serve.js";
import { cpuMeter, ms, num, percentiles } from "../lib/stats.js";

const RULE = "rule0";
const MWAN3_RULE = requireKind("Mwan3Rule");

interface World {
  readonly cnf: Cnf;
  readonly url: string;
  readonly kube: RecordingKube;
  readonly event: () => Promise<EventReply>;
  close(): Promise<void>;
}

async function setUp(ctx: BenchContext): Promise<World> {
  const namespace = await ctx.cluster.namespace("bench-reconcile");
  const cnf = await ctx.fleet.createCnf("rr", { namespace, pods: 2 });
  const counts = { ...exampleCounts(0), Mwan3Policy: 1 };
  await createRules(ctx.cluster.raw, namespace, "rr", [
    exampleRule("Mwan3Policy", 0, counts),
    exampleRule("Mwan3Rule", 0, counts),
  ]);
  const kube = new RecordingKube(ctx.cluster.adminClient());
  const fn = createReconcileRule({ kube: () => kube });
  const server = await serveInProcess([fn], path.join(ctx.workDir, "reconcile-rule.log"));
  const url = `${server.url}/reconcile-rule`;
  const ref = (kind: string, name: string) => ({
    apiVersion: RULE_API_VERSION,
    kind,
    namespace,
    name,
  });
  // First events: create the policy and the rule on both pods, add finalizers, write status.
  for (const [kind, name] of [
    ["Mwan3Policy", "pol0"],
    ["Mwan3Rule", RULE],
  ] as const) {
    const reply = await postObjectEvent(url, ref(kind, name), "add");
    if (reply.status !== 202)
      throw new Error(`setup: ${kind} ${name} answered ${reply.status} ${reply.detail}`);
  }
  return {
    cnf,
    url,
    kube,
    event: () => postObjectEvent(url, ref("Mwan3Rule", RULE)),
    close: () => server.close(),
  };
}

/** True when both pods hold dest_port `port` and the status says the current generation is applied. */
async function applied(ctx: BenchContext, world: World, port: string): Promise<boolean> {
  const held = world.cnf.pods.every((pod) =>
    (pod.sim.state().collections["mwan3/rules"] ?? []).some(
      (o) => o["name"] === RULE && String(o["dest_port"]) === port,
    ),
  );
  const rule = (await ctx.cluster
    .adminClient()
    .get(ruleResource(MWAN3_RULE), { namespace: world.cnf.namespace, name: RULE })) as
    { metadata: { generation?: number }; status?: RuleStatus } | undefined;
  return (
    held &&
    rule?.status?.inSync === true &&
    rule.status.appliedGeneration === rule.metadata.generation
  );
}

async function changedRuleEvents(ctx: BenchContext, world: World): Promise<RowResult> {
  const n = ctx.sizes.reconcileEvents;
  const admin = ctx.cluster.adminClient();
  const samples: number[] = [];
  const api: number[] = [];
  const cnfCalls: number[] = [];
  let failures = 0;
  let lastDetail = "";
  ctx.fleet.resetCounters();
  world.kube.tally.reset();
  const seqs = lastSeqs(world.cnf.pods);
  const cpu = cpuMeter();
  for (let i = 0; i < n; i += 1) {
    const port = String(3000 + i);
    await admin.mergePatch(
      ruleResource(MWAN3_RULE),
      { namespace: world.cnf.namespace, name: RULE },
      { spec: { dest_port: port } },
    );
    const started = performance.now();
    const reply = await world.event();
    samples.push(performance.now() - started);
    api.push(reply.calls.api);
    cnfCalls.push(reply.calls.cnf);
    lastDetail = reply.detail;
    if (reply.status !== 202 || !(await applied(ctx, world, port))) failures += 1;
  }
  const cpuPerEvent = cpu() / n;
  const p = percentiles(samples);
  const writesPerPod = world.cnf.pods.map((pod) => totalWrites(pod.sim.counters()) / n);
  const restarts = world.cnf.pods.map((pod) => pod.sim.counters().serviceActions / n);
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  return {
    id: "reconcile-event",
    metric: `reconcile-rule: spec change event -> applied on 2 pods + status written (${n} events)`,
    target: "p50 <= 15 ms / p99 <= 50 ms",
    measured: `p50 ${ms(p.p50)} / p99 ${ms(p.p99)} (max ${ms(p.max)})`,
    counts:
      `per event: ${num(avg(api))} API requests (${world.kube.tally.describe(n)}); ` +
      `${num(avg(cnfCalls))} CNF requests (${describeTally(cnfRequestTally(world.cnf.pods, seqs), n)}); ` +
      `CNF writes per pod ${writesPerPod.map((w) => num(w, 2)).join("/")}, restarts per pod ${restarts.map((r) => num(r, 2)).join("/")}` +
      `; bench process CPU ${ms(cpuPerEvent)} per event (function, simulators, setup patch)` +
      (failures > 0 ? `; ${failures} events not applied (last: ${lastDetail})` : ""),
    checks: [atMost("p50", p.p50, 15), atMost("p99", p.p99, 50)],
    values: {
      events: n,
      p50Ms: p.p50,
      p99Ms: p.p99,
      maxMs: p.max,
      apiPerEvent: avg(api),
      cnfPerEvent: avg(cnfCalls),
      failures,
      benchCpuMsPerEvent: cpuPerEvent,
    },
    ...(failures > 0
      ? { error: `${failures}/${n} events did not end applied with status written` }
      : {}),
  };
}

async function unchangedRuleEvents(ctx: BenchContext, world: World): Promise<RowResult> {
  const n = ctx.sizes.unchangedEvents;
  ctx.fleet.resetCounters();
  world.kube.tally.reset();
  const seqs = lastSeqs(world.cnf.pods);
  const samples: number[] = [];
  const api: number[] = [];
  const cnfCalls: number[] = [];
  let notDone = 0;
  for (let i = 0; i < n; i += 1) {
    const started = performance.now();
    const reply = await world.event();
    samples.push(performance.now() - started);
    api.push(reply.calls.api);
    cnfCalls.push(reply.calls.cnf);
    if (reply.status !== 202) notDone += 1;
  }
  const writes = world.cnf.pods.reduce((s, pod) => s + totalWrites(pod.sim.counters()), 0);
  const restarts = world.cnf.pods.reduce((s, pod) => s + pod.sim.counters().serviceActions, 0);
  const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const p = percentiles(samples);
  return {
    id: "reconcile-unchanged",
    metric: `reconcile-rule: unchanged rule event (${n} events)`,
    target: "<= 3 API requests / 0 CNF writes per event",
    measured: `${num(avg(api), 2)} API requests / ${num((writes + restarts) / n, 2)} CNF writes per event`,
    counts:
      `API: ${world.kube.tally.describe(n)}; CNF: ${num(avg(cnfCalls), 2)} requests ` +
      `(${describeTally(cnfRequestTally(world.cnf.pods, seqs), n)}); p50 ${ms(p.p50)} p99 ${ms(p.p99)}` +
      (notDone > 0 ? `; ${notDone} not answered 202` : ""),
    checks: [atMost("API requests", avg(api), 3), atMost("CNF writes", (writes + restarts) / n, 0)],
    values: {
      events: n,
      apiPerEvent: avg(api),
      cnfPerEvent: avg(cnfCalls),
      cnfWritesPerEvent: (writes + restarts) / n,
      p50Ms: p.p50,
      p99Ms: p.p99,
    },
  };
}

export async function benchReconcile(
  ctx: BenchContext,
  wanted: (id: string) => boolean,
): Promise<RowResult[]> {
  const world = await setUp(ctx);
  try {
    const rows: RowResult[] = [];
    if (wanted("reconcile-event")) rows.push(await changedRuleEvents(ctx, world));
    if (wanted("reconcile-unchanged")) rows.push(await unchangedRuleEvents(ctx, world));
    return rows;
  } finally {
    await world.close();
  }
}
