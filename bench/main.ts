/**
 * `npm run bench [-- --only <row>[,<row>...]] [-- --quick]`: measures the functions against a
 * real kube-apiserver + etcd started here and CNF simulators on loopback, prints one table (the
 * issue's rows: metric, target, measured, the requests that explain it, pass or MISS) and writes
 * bench/results.json with the machine it ran on. Targets are goals: a miss is reported, not fatal;
 * the exit code is non-zero only when a row could not be measured.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import { startBenchCluster } from "./lib/cluster.js";
import { CnfFleet } from "../dev/world/index.js";
import { FULL_SIZES, QUICK_SIZES, type BenchContext } from "./lib/context.js";
import { ms } from "./lib/stats.js";
import { renderTable, rowPasses, verdict, type RowResult } from "./lib/report.js";
import { benchReconcile } from "./rows/reconcile.js";
import { benchRestart } from "./rows/restart.js";
import { benchAdmission } from "./rows/admission.js";
import { benchDryRun } from "./rows/dry-run.js";
import { benchEgress } from "./rows/egress.js";
import { benchColdStart } from "./rows/cold-start.js";
import { benchNetpol } from "./rows/netpol.js";
import { benchNetpolStore } from "./rows/netpol-store.js";
import { benchNetpolCheck } from "./rows/netpol-check.js";
import { benchNetpolAgent } from "./rows/netpol-agent.js";
import { PEER_ROWS, benchPeer } from "./rows/peer.js";
import { benchMemory } from "./rows/memory.js";
import { benchClusterLink } from "./rows/clusterlink.js";
import { FLEET_ROWS, benchFleet } from "./rows/fleet.js";
import { measureBaseline, type Baseline } from "./lib/baseline.js";

interface RowGroup {
  readonly ids: readonly string[];
  readonly run: (ctx: BenchContext, wanted: (id: string) => boolean) => Promise<RowResult[]>;
}

const GROUPS: readonly RowGroup[] = [
  { ids: ["reconcile-event", "reconcile-unchanged"], run: benchReconcile },
  // Cold start first: its process does the 1,000-rule CNF's first apply; cnf-restart reuses it.
  { ids: ["cold-start"], run: benchColdStart },
  { ids: ["function-memory"], run: benchMemory },
  { ids: ["cnf-restart"], run: benchRestart },
  {
    ids: ["admission-in-process", "admission-apiserver", "admission-concurrent"],
    run: benchAdmission,
  },
  { ids: ["dry-run-rule", "dry-run-policy"], run: benchDryRun },
  { ids: ["egress-recompute", "egress-pod-event"], run: benchEgress },
  { ids: ["netpol-compile", "netpol-decide"], run: benchNetpol },
  { ids: ["netpol-store", "netpol-relabel"], run: benchNetpolStore },
  { ids: ["netpol-check"], run: benchNetpolCheck },
  { ids: ["netpol-agent-load"], run: benchNetpolAgent },
  // Ours, the upstream controller (unless SDEWAN_BENCH_UPSTREAM=0) and the floors, same scenarios.
  { ids: PEER_ROWS.map((r) => r.id), run: benchPeer },
  {
    ids: ["clusterlink-imports", "clusterlink-import-change", "clusterlink-heartbeats"],
    run: benchClusterLink,
  },
  // Last: its own control plane, 50 CNFs x 200 rules (issue 28 item 4); the three run together.
  { ids: FLEET_ROWS.map((r) => r.id), run: benchFleet },
];

const ALL_IDS = GROUPS.flatMap((g) => g.ids);
const here = path.dirname(fileURLToPath(import.meta.url));

function parseOptions(): { only: Set<string>; quick: boolean; keep: boolean } {
  const { values } = parseArgs({
    options: {
      only: { type: "string", multiple: true },
      quick: { type: "boolean", default: false },
      keep: { type: "boolean", default: false },
      list: { type: "boolean", default: false },
    },
  });
  if (values.list) {
    process.stdout.write(`${ALL_IDS.join("\n")}\n`);
    process.exit(0);
  }
  const only = new Set((values.only ?? []).flatMap((v) => v.split(",")).filter(Boolean));
  const unknown = [...only].filter((id) => !ALL_IDS.includes(id));
  if (unknown.length > 0) {
    process.stderr.write(`unknown row(s): ${unknown.join(", ")}; rows: ${ALL_IDS.join(", ")}\n`);
    process.exit(2);
  }
  return { only, quick: values.quick, keep: values.keep };
}

function machine(): Record<string, unknown> {
  const cpus = os.cpus();
  return {
    cores: cpus.length,
    cpuModel: cpus[0]?.model ?? "unknown",
    memoryMb: Math.round(os.totalmem() / 2 ** 20),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
  };
}

function describeBaseline(b: Baseline): string {
  return (
    `${ms(b.keepAliveP50Ms)} on a kept-alive TLS connection, ${ms(b.newConnectionP50Ms)} on a new ` +
    `TLS connection, ${ms(b.sharedKubeP50Ms)} through shared/kube (p99 ${ms(b.sharedKubeP99Ms)})`
  );
}

const log = (line: string): void => {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 23)}] ${line}\n`);
};

async function main(): Promise<number> {
  const options = parseOptions();
  const wanted = (id: string): boolean => options.only.size === 0 || options.only.has(id);
  const started = Date.now();
  const loadBefore = os.loadavg();
  const workDir = await mkdtemp(path.join(os.tmpdir(), "sdewan-bench-"));
  log(
    `machine: ${JSON.stringify(machine())}, load average ${loadBefore.map((l) => l.toFixed(1)).join(" ")}`,
  );
  const cluster = await startBenchCluster((line) => log(`control plane: ${line}`));
  const fleet = new CnfFleet(cluster.adminClient());
  const baseline = await measureBaseline(cluster);
  log(`API GET baseline: ${describeBaseline(baseline)}`);
  const ctx: BenchContext = {
    cluster,
    fleet,
    sizes: options.quick ? QUICK_SIZES : FULL_SIZES,
    quick: options.quick,
    workDir,
    log,
  };
  const stop = async (): Promise<void> => {
    await fleet.close();
    await cluster.stop();
    if (!options.keep) await rm(workDir, { recursive: true, force: true });
  };
  process.once("SIGINT", () => {
    log("interrupted: stopping the control plane");
    void stop().finally(() => process.exit(130));
  });

  const rows: RowResult[] = [];
  try {
    for (const group of GROUPS) {
      if (!group.ids.some(wanted)) continue;
      const groupStarted = Date.now();
      log(`running ${group.ids.filter(wanted).join(", ")}`);
      try {
        rows.push(...(await group.run(ctx, wanted)));
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        log(
          `${group.ids.join(", ")} failed: ${error instanceof Error ? (error.stack ?? message) : message}`,
        );
        for (const id of group.ids.filter(wanted)) {
          rows.push({
            id,
            metric: id,
            target: "",
            measured: "",
            counts: "",
            checks: [],
            values: {},
            error: message,
          });
        }
      }
      log(`done in ${((Date.now() - groupStarted) / 1000).toFixed(1)} s`);
    }
  } finally {
    await stop();
  }

  const loadAfter = os.loadavg();
  const table = renderTable(rows);
  process.stdout.write(
    `\nsdewan-functions bench${options.quick ? " (--quick: reduced sizes, not the issue's)" : ""}: ` +
      `${os.cpus().length} cores, Node ${process.version}, load average ${loadBefore[0]?.toFixed(1)} -> ` +
      `${loadAfter[0]?.toFixed(1)}, ${((Date.now() - started) / 1000).toFixed(0)} s\n` +
      `one API GET (p50): ${describeBaseline(baseline)}\n\n${table}\n`,
  );
  const results = {
    date: new Date(started).toISOString(),
    quick: options.quick,
    durationSeconds: Math.round((Date.now() - started) / 1000),
    machine: { ...machine(), loadAverageBefore: loadBefore, loadAverageAfter: loadAfter },
    apiGetBaseline: baseline,
    rows: rows.map((r) => ({ ...r, result: verdict(r), pass: rowPasses(r) })),
  };
  await writeFile(path.join(here, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  log(`wrote ${path.join(here, "results.json")}`);
  return rows.some((r) => r.error !== undefined) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`bench failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
