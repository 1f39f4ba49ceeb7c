/**
 * Function process memory, one process per function as OpenFaaS and Knative run them: the bundled
 * server (`node dist/bundle/server.js`, the Dockerfile's NODE_OPTIONS) with FUNCTIONS=<one>, so
 * the process loads only that function's code (functions/catalog.ts). Every function of the
 * catalog. Idle: resident memory once it has handled a first event that does none of its work.
 * After: once it has done real work of its own in the same process (the rule functions their
 * share of the 1,000-rule run: an event per rule, the CNF restart that re-applies every rule, a
 * review per rule; the others bench/lib/function-work.ts: groups computed, policies compiled,
 * Exports verified, ports leased, Peers heartbeaten, access decided), then resident memory again
 * and its peak. The CPU each process used for its work is printed; a function that used none, or
 * whose work did not leave the end state it must, makes the row an error.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import pLimit from "p-limit";
import { RULE_API_VERSION, requireKind } from "../../shared/kinds/index.js";
import { applyAll, bigCnf, endStateProblems, restartRun, type BigCnf } from "../lib/big-cnf.js";
import {
  DIST_SERVER,
  buildDist,
  dockerfileNodeArgs,
  dockerfileNodeOptions,
  spawnFunctionServer,
} from "../lib/child.js";
import type { BenchContext } from "../lib/context.js";
import { postObjectEvent } from "../lib/events.js";
import {
  FULL_WORK,
  QUICK_WORK,
  WorkWorld,
  authzWork,
  egressWork,
  exportWork,
  importWork,
  netpolWork,
  peerHealthWork,
  type FunctionWork,
  type Work,
} from "../lib/function-work.js";
import { atMost, type RowResult } from "../lib/report.js";
import { int, median, num } from "../lib/stats.js";
import { FUNCTION_CATALOG } from "../../functions/catalog.js";

/** Issue 28 item 5: idle within 1.15x the floor measured in the same run, after work 100 MB. */
export const IDLE_FLOOR_FACTOR = 1.15;
const AFTER_RUN_TARGET_MB = 100;
/** Floor processes started; their median RSS is the floor. */
const FLOOR_RUNS = 3;
/** Holds no CNF and no rule: the API server answers its lists empty without it existing. */
const EMPTY_NAMESPACE = "sdewan-bench-no-cnfs";
/** Events in flight at once while a function works through its share, as a connector sends. */
const CONCURRENCY = 8;

/** How the image starts the server: NODE_OPTIONS (ENV) and node's flags (CMD). */
interface ImageRun {
  readonly nodeOptions: string;
  readonly nodeArgs: readonly string[];
}

export interface Measured {
  readonly fn: string;
  readonly idleMb: number;
  readonly afterMb: number;
  readonly peakMb: number;
  /** CPU the process used for its share: what the flags cost, whatever the machine's load. */
  readonly cpuMs: number;
  readonly work: Work;
}

/** An AdmissionReview for creating `rule`, as the API server sends it. */
function reviewOf(namespace: string, rule: BigCnf["rules"][number]): object {
  const entry = requireKind(rule.kind);
  const resource = { group: "batch.sdewan.akraino.org", version: "v1alpha1" };
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: randomUUID(),
      kind: { ...resource, kind: rule.kind },
      resource: { ...resource, resource: entry.plural },
      name: rule.name,
      namespace,
      operation: "CREATE",
      userInfo: { username: "system:admin", groups: ["system:masters"] },
      object: {
        apiVersion: RULE_API_VERSION,
        kind: rule.kind,
        metadata: { name: rule.name, namespace, labels: { sdewanPurpose: "big" } },
        spec: rule.spec,
      },
      oldObject: null,
    },
  };
}

async function postReview(
  url: string,
  review: object,
): Promise<{ allowed: boolean; text: string }> {
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(review),
  });
  const text = await res.text();
  return { allowed: res.status === 200 && text.includes('"allowed":true'), text };
}

async function firstEvent(work: Pick<FunctionWork, "fn" | "first">, url: string): Promise<void> {
  const deadline = performance.now() + 60_000;
  for (;;) {
    if (performance.now() > deadline) throw new Error(`${work.fn}: no first reply within 60 s`);
    const ok = await work.first(url).catch(() => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** `send` for each rule, CONCURRENCY at a time; it answers null or what was wrong with the reply. */
async function perRule(
  big: BigCnf,
  send: (rule: BigCnf["rules"][number]) => Promise<string | null>,
): Promise<{ failures: number; example?: string }> {
  const limit = pLimit(CONCURRENCY);
  let failures = 0;
  let example: string | undefined;
  await Promise.all(
    big.rules.map((rule) =>
      limit(async () => {
        const problem = await send(rule);
        if (problem === null) return;
        failures += 1;
        example ??= `${rule.name}: ${problem}`;
      }),
    ),
  );
  return { failures, ...(example === undefined ? {} : { example }) };
}

/** The rule functions: each its share of the 1,000-rule run. */
function ruleWorks(ctx: BenchContext, big: BigCnf): FunctionWork[] {
  const { namespace } = big.cnf;
  const first = big.rules[0];
  if (first === undefined) throw new Error("no rules");
  const refOf = (rule: BigCnf["rules"][number]) => ({
    apiVersion: RULE_API_VERSION,
    kind: rule.kind,
    namespace,
    name: rule.name,
  });
  const none = async (): Promise<void> => {};
  return [
    {
      fn: "reconcile-rule",
      env: {},
      first: async (url) => (await postObjectEvent(url, refOf(first))).status === 202,
      prepare: none,
      // The rules' first apply when no row before did it (cold-start does), else unchanged rules.
      run: async (url) => {
        const firstApply = !big.applied;
        const replies = await perRule(big, async (rule) => {
          const reply = await postObjectEvent(url, refOf(rule));
          return reply.status === 202 ? null : `${reply.status} ${reply.detail}`;
        });
        const problems = await endStateProblems(big, ctx.cluster.adminClient());
        if (replies.failures === 0 && problems.length === 0) big.applied = true;
        const example = replies.example ?? problems[0];
        return {
          did: `an update event per rule (${int(big.rules.length)}, ${CONCURRENCY} at a time; ${firstApply ? "their first apply" : "applied before"})`,
          failures: replies.failures + problems.length,
          ...(example === undefined ? {} : { example }),
        };
      },
    },
    {
      fn: "on-deployment-ready",
      env: {},
      // A Deployment that is not there, in a namespace without CNFs: the function's whole path
      // (the event maps to a resync of its namespace) without the 1,000-rule work. In the big
      // CNF's namespace the same event resyncs all 1,000 rules, and "idle" was that run's RSS.
      first: async (url) =>
        (
          await postObjectEvent(url, {
            apiVersion: "apps/v1",
            kind: "Deployment",
            namespace: EMPTY_NAMESPACE,
            name: "no-such-cnf",
          })
        ).status === 202,
      prepare: none,
      run: async (url) => {
        if (!big.applied) await applyAll(big, url, ctx.cluster.adminClient());
        const run = await restartRun(ctx, big, url);
        const problems = await endStateProblems(big, ctx.cluster.adminClient());
        const last = run.replies.at(-1);
        if (last?.status !== 202) problems.push(`${last?.status} ${last?.detail}`);
        return {
          did: `the CNF restart that re-applies all ${int(big.rules.length)} rules (${Math.round(run.ms)} ms)`,
          failures: problems.length,
          ...(problems[0] === undefined ? {} : { example: problems[0] }),
        };
      },
    },
    {
      fn: "validate-admission",
      env: {},
      first: async (url) => (await postReview(url, reviewOf(namespace, first))).allowed,
      prepare: none,
      run: async (url) => ({
        did: `a CREATE review per rule (${int(big.rules.length)}, ${CONCURRENCY} at a time)`,
        ...(await perRule(big, async (rule) => {
          const reply = await postReview(url, reviewOf(namespace, rule));
          return reply.allowed ? null : reply.text.slice(0, 160);
        })),
      }),
    },
  ];
}

async function measure(ctx: BenchContext, work: FunctionWork, image: ImageRun): Promise<Measured> {
  const proc = await spawnFunctionServer({
    logFile: path.join(ctx.workDir, `memory-${work.fn}.log`),
    env: {
      KUBECONFIG: ctx.cluster.kubeconfigPath,
      LOG_LEVEL: "info",
      NODE_OPTIONS: image.nodeOptions,
      FUNCTIONS: work.fn,
      ...work.env,
    },
    script: DIST_SERVER,
    nodeArgs: image.nodeArgs,
  });
  try {
    const url = `${proc.url}/${work.fn}`;
    await firstEvent(work, url);
    const idle = await proc.memory();
    await work.prepare();
    const cpuBefore = await proc.cpuMs();
    const done = await work.run(url);
    const cpuMs = (await proc.cpuMs()) - cpuBefore;
    const after = await proc.memory();
    return {
      fn: work.fn,
      idleMb: idle.rssMb,
      afterMb: after.rssMb,
      peakMb: after.peakMb,
      cpuMs,
      work: done,
    };
  } finally {
    await proc.stop();
  }
}

/** What the floor process is: the same image flags, only Node's own modules. */
const FLOOR_WHAT =
  "a node:http server holding one kept-alive TLS connection to the API server, answering each POST with one GET's JSON (bench/lib/memory-floor-server.ts)";

/**
 * The floor under every function's idle RSS, in this run and with the image's flags: the median
 * of FLOOR_RUNS processes of bench/lib/memory-floor-server.ts, each measured as a function is
 * (after its first answered POST).
 */
export async function measureFloor(ctx: BenchContext, image: ImageRun): Promise<number[]> {
  const script = path.join(ctx.workDir, "memory-floor.mjs");
  await build({
    entryPoints: [
      path.join(path.dirname(fileURLToPath(import.meta.url)), "../lib/memory-floor-server.ts"),
    ],
    outfile: script,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node24",
    minifyWhitespace: true,
    logLevel: "warning",
  });
  const plane = ctx.cluster.plane;
  const samples: number[] = [];
  for (let i = 0; i < FLOOR_RUNS; i += 1) {
    const proc = await spawnFunctionServer({
      logFile: path.join(ctx.workDir, "memory-floor.log"),
      env: {
        NODE_OPTIONS: image.nodeOptions,
        FLOOR_API_SERVER: plane.server,
        FLOOR_API_TOKEN: plane.admin.token,
        FLOOR_API_CA_FILE: plane.caCertPath,
      },
      script,
      nodeArgs: image.nodeArgs,
    });
    try {
      await firstEvent(
        {
          fn: "floor",
          first: async (url) => (await fetch(url, { method: "POST", body: "{}" })).status === 202,
        },
        proc.url,
      );
      samples.push((await proc.memory()).rssMb);
    } finally {
      await proc.stop();
    }
  }
  return samples;
}

export async function benchMemory(ctx: BenchContext): Promise<RowResult[]> {
  const big = await bigCnf(ctx);
  const image = {
    nodeOptions: await dockerfileNodeOptions(),
    nodeArgs: await dockerfileNodeArgs(),
  };
  await buildDist();
  const floorSamples = await measureFloor(ctx, image);
  ctx.log(`memory floor: ${floorSamples.map((x) => num(x, 1)).join(", ")} MiB`);
  const world = await WorkWorld.create(ctx, ctx.quick ? QUICK_WORK : FULL_WORK);
  const results: Measured[] = [];
  try {
    const works = [
      ...ruleWorks(ctx, big),
      egressWork(world),
      netpolWork(world),
      exportWork(world),
      importWork(world),
      peerHealthWork(world),
      authzWork(world),
    ];
    for (const work of works) {
      const m = await measure(ctx, work, image);
      ctx.log(
        `memory ${m.fn}: idle ${num(m.idleMb, 1)} MiB, after ${num(m.afterMb, 1)} MiB (peak ${num(m.peakMb, 1)})`,
      );
      results.push(m);
    }
  } finally {
    await world.close();
  }
  return [
    memoryRow(
      results,
      `FUNCTIONS=<name> NODE_OPTIONS=${image.nodeOptions} node ${[...image.nodeArgs, DIST_SERVER].join(" ")}`,
      median(floorSamples),
    ),
  ];
}

/**
 * The row from each function's measurement. An error when a function of the catalog was not
 * measured, used no CPU for its work (/proc counts 10 ms ticks: 0 is next to nothing, as a
 * resync of an empty cluster), or left a wrong end state: its "after" would not be after work.
 */
export function memoryRow(
  results: readonly Measured[],
  command: string,
  floorMb: number,
): RowResult {
  const idleLimit = floorMb * IDLE_FLOOR_FACTOR;
  const worstIdle = Math.max(...results.map((r) => r.idleMb));
  const worstAfter = Math.max(...results.map((r) => r.afterMb));
  const unmeasured = FUNCTION_CATALOG.map((f) => f.name).filter(
    (name) => !results.some((r) => r.fn === name),
  );
  const problems = [
    ...unmeasured.map((fn) => `${fn} not measured`),
    ...results.filter((r) => r.cpuMs <= 0).map((r) => `${r.fn} did no work (0 ms of CPU)`),
    ...results
      .filter((r) => r.work.failures > 0)
      .map((r) => `${r.fn}: ${r.work.failures} checks of its work failed (e.g. ${r.work.example})`),
  ];
  const mb = (x: number): string => `${num(x, 0)}`;
  return {
    id: "function-memory",
    metric: `one process per function, ${results.length} of ${FUNCTION_CATALOG.length} (${command}, as each function's pod runs it): RSS idle / after real work of its own`,
    target: `idle <= ${IDLE_FLOOR_FACTOR}x the floor (${FLOOR_WHAT}, same flags, measured in this run) / after <= ${AFTER_RUN_TARGET_MB} MB, each`,
    measured:
      `floor ${num(floorMb, 1)} MiB, so idle <= ${num(idleLimit, 1)} MiB; ` +
      results
        .map(
          (r) => `${r.fn} ${mb(r.idleMb)} (${num(r.idleMb / floorMb, 2)}x) / ${mb(r.afterMb)} MiB`,
        )
        .join("; "),
    counts:
      results
        .map((r) => `${r.fn}: ${r.work.did}, ${int(r.cpuMs)} ms of CPU, peak ${mb(r.peakMb)} MiB`)
        .join("; ") + (problems.length > 0 ? `; FAILED: ${problems.join("; ")}` : ""),
    checks: [
      atMost("idle RSS vs floor", worstIdle / floorMb, IDLE_FLOOR_FACTOR),
      atMost("RSS after the work", worstAfter, AFTER_RUN_TARGET_MB),
    ],
    values: Object.fromEntries([
      ["floorMb", floorMb],
      ...results.flatMap((r): [string, number][] => [
        [`${r.fn}.idleMb`, r.idleMb],
        [`${r.fn}.afterMb`, r.afterMb],
        [`${r.fn}.peakMb`, r.peakMb],
        [`${r.fn}.cpuMs`, r.cpuMs],
      ]),
    ]),
    ...(problems.length > 0 ? { error: problems.join("; ") } : {}),
  };
}
