/**
 * Function process cold start: spawn the combined server (every function) as the image runs it,
 * bundled (`node dist/bundle/server.js`, with the NODE_OPTIONS the Dockerfile sets), then POST
 * one reconcile-rule event until the first 202: node start, module imports, listen, first API
 * and CNF requests. Then the same process handles the 1,000-rule CNF restart
 * (on-deployment-ready) and its resident memory is read from /proc.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { RULE_API_VERSION } from "../../shared/kinds/index.js";
import { applyAll, bigCnf, endStateProblems, restartRun } from "../lib/big-cnf.js";
import {
  DIST_SERVER,
  buildDist,
  dockerfileNodeArgs,
  dockerfileNodeOptions,
  spawnFunctionServer,
  type FunctionProcess,
} from "../lib/child.js";
import type { BenchContext } from "../lib/context.js";
import { postObjectEvent } from "../lib/events.js";
import { atMost, type RowResult } from "../lib/report.js";
import { median, ms, num } from "../lib/stats.js";

interface ColdStart {
  readonly listeningMs: number;
  readonly firstEventMs: number;
  readonly attempts: number;
  /** CPU the process used until then: what the wait would be on an idle core. */
  readonly cpuMs: number;
}

async function untilFirst202(proc: FunctionProcess, namespace: string): Promise<ColdStart> {
  const ref = { apiVersion: RULE_API_VERSION, kind: "Mwan3Policy", namespace, name: "pol0" };
  const deadline = performance.now() + 60_000;
  for (let attempts = 1; ; attempts += 1) {
    if (performance.now() > deadline) throw new Error(`no 202 within 60 s (see ${proc.logFile})`);
    if (proc.child.exitCode !== null) throw new Error(`the server exited (see ${proc.logFile})`);
    const reply = await postObjectEvent(`${proc.url}/reconcile-rule`, ref).catch(() => undefined);
    if (reply?.status === 202) {
      const now = performance.now();
      const cpuMs = await proc.cpuMs();
      return {
        cpuMs,
        listeningMs: (proc.listeningAt() ?? now) - proc.spawnedAt,
        firstEventMs: now - proc.spawnedAt,
        attempts,
      };
    }
    await delay(reply === undefined ? 5 : 50);
  }
}

/** Log lines at level error or fatal, or mentioning an unhandled rejection. */
async function logProblems(file: string): Promise<string[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter((line) => /"level":"(error|fatal)"|unhandled/i.test(line))
    .map((line) => line.slice(0, 200));
}

export async function benchColdStart(ctx: BenchContext): Promise<RowResult[]> {
  const big = await bigCnf(ctx);
  const env = { KUBECONFIG: ctx.cluster.kubeconfigPath, LOG_LEVEL: "info" };
  const imageNodeOptions = await dockerfileNodeOptions();
  const imageNodeArgs = await dockerfileNodeArgs();
  const starts: ColdStart[] = [];
  let proc: FunctionProcess | undefined;
  const building = performance.now();
  await buildDist();
  const buildMs = performance.now() - building;
  try {
    for (let i = 0; i < ctx.sizes.coldStarts; i += 1) {
      await proc?.stop();
      const logFile = path.join(ctx.workDir, `server-${i}.log`);
      proc = await spawnFunctionServer({
        logFile,
        env: { ...env, NODE_OPTIONS: imageNodeOptions },
        script: DIST_SERVER,
        nodeArgs: imageNodeArgs,
      });
      starts.push(await untilFirst202(proc, big.cnf.namespace));
    }
    if (proc === undefined) throw new Error("no server started");
    // The 1,000-rule run in this process: the first apply of every rule if no row did it yet
    // (2 pods x every rule written, finalizers added, statuses written), else a CNF restart.
    const fnUrl = `${proc.url}/on-deployment-ready`;
    const firstApply = !big.applied;
    const run = firstApply
      ? await applyAll(big, fnUrl, ctx.cluster.adminClient())
      : await restartRun(ctx, big, fnUrl);
    const memory = await proc.memory();
    const problems = await endStateProblems(big, ctx.cluster.adminClient());
    const last = run.replies.at(-1);
    const stopped = await proc.stop();
    const logs = await logProblems(proc.logFile);
    const first = median(starts.map((s) => s.firstEventMs));
    const listening = median(starts.map((s) => s.listeningMs));
    const all = starts.map((s) => ms(s.firstEventMs)).join(", ");
    const cpu = median(starts.map((s) => s.cpuMs));
    return [
      {
        id: "cold-start",
        metric: `function process (NODE_OPTIONS=${imageNodeOptions} node ${[...imageNodeArgs, DIST_SERVER].join(" ")}, as the image runs it): cold start -> first event handled / RSS after the ${big.rules.length}-rule run`,
        target: "<= 500 ms / <= 100 MB",
        measured: `${ms(first)} (median of ${starts.length}: ${all}) / RSS ${num(memory.rssMb, 0)} MiB (peak ${num(memory.peakMb, 0)} MiB)`,
        counts:
          `${ms(cpu)} of CPU used by then (the machine's other load stretches the wall time); listening after ${ms(listening)}, then the first reconcile-rule event (unchanged Mwan3Policy) on attempt ${starts.at(-1)?.attempts}; ` +
          `${big.rules.length}-rule run (${firstApply ? "first apply" : "CNF restart"}) in the same process: ${ms(run.ms)}, ${last?.calls.api} API + ${last?.calls.cnf} CNF requests, ${last?.status} ${last?.detail}; ` +
          `stop: ${stopped}; bundle build before the row: ${ms(buildMs)}` +
          (problems.length > 0 ? `; END STATE WRONG: ${problems.slice(0, 2).join("; ")}` : "") +
          (logs.length > 0 ? `; ${logs.length} error lines in the log, e.g. ${logs[0]}` : ""),
        checks: [atMost("cold start", first, 500), atMost("RSS", memory.rssMb, 100)],
        values: {
          coldStartMs: first,
          coldStartCpuMs: cpu,
          listeningMs: listening,
          rssMb: memory.rssMb,
          peakRssMb: memory.peakMb,
          runMs: run.ms,
          errorLines: logs.length,
        },
        ...(problems.length > 0 || last?.status !== 202
          ? {
              error: `the ${big.rules.length}-rule run did not converge: ${problems.slice(0, 2).join("; ")}`,
            }
          : {}),
      },
    ];
  } finally {
    await proc?.stop();
  }
}
