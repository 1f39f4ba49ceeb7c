/**
 * Function process memory, one process per function as OpenFaaS and Knative run them: the bundled
 * server (`node dist/bundle/server.js`, the Dockerfile's NODE_OPTIONS) with FUNCTIONS=<one>, so
 * the process loads only that function's code (functions/catalog.ts). Idle: resident memory once
 * it has handled its first event. After the 1,000-rule run: each function's share of it in the
 * same process (reconcile-rule: an event per rule; on-deployment-ready: the CNF restart that
 * re-applies every rule; validate-admission: a review per rule; egress-group-sync: a resync of
 * whatever the cluster holds), then resident memory again and its peak.
 */
import { randomUUID } from "node:crypto";
import path from "node:path";
import pLimit from "p-limit";
import { RULE_API_VERSION, requireKind } from "../../shared/rules/index.js";
import { applyAll, bigCnf, endStateProblems, restartRun, type BigCnf } from "../lib/big-cnf.js";
import {
  DIST_SERVER,
  buildDist,
  dockerfileNodeArgs,
  dockerfileNodeOptions,
  spawnFunctionServer,
  type FunctionProcess,
} from "../lib/child.js";
import type { BenchContext } from "../lib/context.js";
import { postObjectEvent, postResync } from "../lib/events.js";
import { atMost, type RowResult } from "../lib/report.js";
import { int, num } from "../lib/stats.js";

const IDLE_TARGET_MB = 60;
const AFTER_RUN_TARGET_MB = 100;
/** Holds no CNF and no rule: the API server answers its lists empty without it existing. */
const EMPTY_NAMESPACE = "sdewan-bench-no-cnfs";
/** Events in flight at once while a function works through its share, as a connector sends. */
const CONCURRENCY = 8;

/** How the image starts the server: NODE_OPTIONS (ENV) and node's flags (CMD). */
interface ImageRun {
  readonly nodeOptions: string;
  readonly nodeArgs: readonly string[];
}

interface Share {
  /** What the process did, for the row. */
  readonly did: string;
  /** Replies that were not the expected success, with an example. */
  readonly failures: number;
  readonly example?: string;
}

type FunctionName =
  "reconcile-rule" | "on-deployment-ready" | "validate-admission" | "egress-group-sync";

interface Measured {
  readonly fn: FunctionName;
  readonly idleMb: number;
  readonly afterMb: number;
  readonly peakMb: number;
  /** CPU the process used for its share: what the flags cost, whatever the machine's load. */
  readonly cpuMs: number;
  readonly share: Share;
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

async function firstEvent(fn: FunctionName, proc: FunctionProcess, big: BigCnf): Promise<void> {
  const url = `${proc.url}/${fn}`;
  const deadline = performance.now() + 60_000;
  for (;;) {
    if (performance.now() > deadline) throw new Error(`${fn}: no first reply within 60 s`);
    const ok = await handleOne(fn, url, big).catch(() => false);
    if (ok) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** One small piece of the function's work; true when it was answered as expected. */
async function handleOne(fn: FunctionName, url: string, big: BigCnf): Promise<boolean> {
  const { namespace } = big.cnf;
  const rule = big.rules[0];
  if (rule === undefined) throw new Error("no rules");
  switch (fn) {
    case "reconcile-rule": {
      const ref = { apiVersion: RULE_API_VERSION, kind: rule.kind, namespace, name: rule.name };
      return (await postObjectEvent(url, ref)).status === 202;
    }
    case "on-deployment-ready": {
      // A Deployment that is not there, in a namespace without CNFs: the function's whole path
      // (the event maps to a resync of its namespace) without the 1,000-rule work. In the big
      // CNF's namespace the same event resyncs all 1,000 rules, and "idle" was that run's RSS.
      const ref = {
        apiVersion: "apps/v1",
        kind: "Deployment",
        namespace: EMPTY_NAMESPACE,
        name: "no-such-cnf",
      };
      return (await postObjectEvent(url, ref)).status === 202;
    }
    case "validate-admission":
      return (await postReview(url, reviewOf(namespace, rule))).allowed;
    case "egress-group-sync":
      return (await postResync(url)).status === 202;
  }
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

/** The function's share of the 1,000-rule run. */
async function runShare(
  ctx: BenchContext,
  fn: FunctionName,
  proc: FunctionProcess,
  big: BigCnf,
): Promise<Share> {
  const url = `${proc.url}/${fn}`;
  const { namespace } = big.cnf;
  const limit = pLimit(CONCURRENCY);
  let failures = 0;
  let example: string | undefined;
  const fail = (what: string): void => {
    failures += 1;
    example ??= what;
  };
  switch (fn) {
    case "on-deployment-ready": {
      const run = big.applied
        ? await restartRun(ctx, big, url)
        : await applyAll(big, url, ctx.cluster.adminClient());
      const problems = await endStateProblems(big, ctx.cluster.adminClient());
      for (const p of problems) fail(p);
      const last = run.replies.at(-1);
      if (last?.status !== 202) fail(`${last?.status} ${last?.detail}`);
      return {
        did: `the CNF restart that re-applies all ${int(big.rules.length)} rules (${Math.round(run.ms)} ms)`,
        failures,
        ...(example === undefined ? {} : { example }),
      };
    }
    case "reconcile-rule":
      await Promise.all(
        big.rules.map((rule) =>
          limit(async () => {
            const ref = {
              apiVersion: RULE_API_VERSION,
              kind: rule.kind,
              namespace,
              name: rule.name,
            };
            const reply = await postObjectEvent(url, ref);
            if (reply.status !== 202) fail(`${rule.name}: ${reply.status} ${reply.detail}`);
          }),
        ),
      );
      return {
        did: `an update event per rule (${int(big.rules.length)}, ${CONCURRENCY} at a time)`,
        failures,
        ...(example === undefined ? {} : { example }),
      };
    case "validate-admission":
      await Promise.all(
        big.rules.map((rule) =>
          limit(async () => {
            const reply = await postReview(url, reviewOf(namespace, rule));
            if (!reply.allowed) fail(`${rule.name}: ${reply.text.slice(0, 160)}`);
          }),
        ),
      );
      return {
        did: `a CREATE review per rule (${int(big.rules.length)}, ${CONCURRENCY} at a time)`,
        failures,
        ...(example === undefined ? {} : { example }),
      };
    case "egress-group-sync": {
      const reply = await postResync(url);
      if (reply.status !== 202) fail(`${reply.status} ${reply.detail}`);
      return {
        did: "a resync of the cluster as it stands (its 10,000-Pod load is the egress rows')",
        failures,
        ...(example === undefined ? {} : { example }),
      };
    }
  }
}

async function measure(
  ctx: BenchContext,
  fn: FunctionName,
  big: BigCnf,
  image: ImageRun,
): Promise<Measured> {
  const proc = await spawnFunctionServer({
    logFile: path.join(ctx.workDir, `memory-${fn}.log`),
    env: {
      KUBECONFIG: ctx.cluster.kubeconfigPath,
      LOG_LEVEL: "info",
      NODE_OPTIONS: image.nodeOptions,
      FUNCTIONS: fn,
    },
    script: DIST_SERVER,
    nodeArgs: image.nodeArgs,
  });
  try {
    await firstEvent(fn, proc, big);
    const idle = await proc.memory();
    const cpuBefore = await proc.cpuMs();
    const share = await runShare(ctx, fn, proc, big);
    const cpuMs = (await proc.cpuMs()) - cpuBefore;
    const after = await proc.memory();
    return { fn, idleMb: idle.rssMb, afterMb: after.rssMb, peakMb: after.peakMb, cpuMs, share };
  } finally {
    await proc.stop();
  }
}

const FUNCTIONS: readonly FunctionName[] = [
  "reconcile-rule",
  "on-deployment-ready",
  "validate-admission",
  "egress-group-sync",
];

export async function benchMemory(ctx: BenchContext): Promise<RowResult[]> {
  const big = await bigCnf(ctx);
  const image = {
    nodeOptions: await dockerfileNodeOptions(),
    nodeArgs: await dockerfileNodeArgs(),
  };
  await buildDist();
  const results: Measured[] = [];
  for (const fn of FUNCTIONS) results.push(await measure(ctx, fn, big, image));
  const worstIdle = Math.max(...results.map((r) => r.idleMb));
  const worstAfter = Math.max(...results.map((r) => r.afterMb));
  const failures = results.filter((r) => r.share.failures > 0);
  const mb = (x: number): string => `${num(x, 0)}`;
  return [
    {
      id: "function-memory",
      metric: `one process per function (FUNCTIONS=<name> NODE_OPTIONS=${image.nodeOptions} node ${[...image.nodeArgs, DIST_SERVER].join(" ")}, as each function's pod runs it): RSS idle / after its share of the ${int(big.rules.length)}-rule run`,
      target: `<= ${IDLE_TARGET_MB} MB / <= ${AFTER_RUN_TARGET_MB} MB each`,
      measured: results.map((r) => `${r.fn} ${mb(r.idleMb)} / ${mb(r.afterMb)} MiB`).join("; "),
      counts:
        results
          .map(
            (r) => `${r.fn}: ${r.share.did}, ${int(r.cpuMs)} ms of CPU, peak ${mb(r.peakMb)} MiB`,
          )
          .join("; ") +
        (failures.length > 0
          ? `; FAILED: ${failures.map((r) => `${r.fn} ${r.share.failures} (e.g. ${r.share.example})`).join("; ")}`
          : ""),
      checks: [
        atMost("idle RSS", worstIdle, IDLE_TARGET_MB),
        atMost("RSS after the run", worstAfter, AFTER_RUN_TARGET_MB),
      ],
      values: Object.fromEntries(
        results.flatMap((r) => [
          [`${r.fn}.idleMb`, r.idleMb],
          [`${r.fn}.afterMb`, r.afterMb],
          [`${r.fn}.peakMb`, r.peakMb],
          [`${r.fn}.cpuMs`, r.cpuMs],
        ]),
      ),
      ...(failures.length > 0
        ? {
            error: `${failures.map((r) => r.fn).join(", ")}: replies were not the expected success`,
          }
        : {}),
    },
  ];
}
