/**
 * `npm run demo [-- --keep] [-- --at-rest[=60]] [-- --node]`: the project's main job on one machine
 * (`--node`: on a real node as a user installs it, dev/demo/node-demo.ts). Starts a local control
 * plane (dev/control-plane; builds it first if needed), two CNF simulators as the pods of CNF
 * Deployment cnf-1, the functions (`functions/server.ts`), the admission webhook (HTTPS) and the
 * connector as child processes, applies manifests/samples, waits until every rule reports
 * inSync=true on both pods and the EgressGroup is written, prints a table, shows the webhook
 * deny a dangling reference, runs ClusterLink (two Peers whose gateways are dev/peer-gateway-sim,
 * one healthy and one silent; an Export of a two-port Service, an Import of it, an AccessPolicy)
 * and prints their conditions, restarts one CNF and waits until it is healed, and tears
 * everything down (with --keep: after Ctrl-C). When Prometheus is installed (Debian's package),
 * it also runs one on loopback that scrapes the functions, the webhook and the connector and
 * evaluates the shipped alerts (manifests/monitoring/sdewan-alerts.rules.yml), and prints its URL.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { repoRoot } from "../control-plane/binaries.js";
import { withHeartbeat } from "../lib/progress.js";
import { buildControlPlane } from "./build.js";
import type { RuleRow } from "./cluster.js";
import { type NodeDemo, runNodeDemo } from "./node-demo.js";
import { RunningSystem } from "./system.js";
import { auditArgs, measureAtRest } from "./at-rest.js";
import {
  prometheusBinary,
  startPrometheus,
  type RunningPrometheus,
  type ScrapeTarget,
} from "../prometheus/index.js";

const keep = process.argv.includes("--keep");
/** `--node`: the story on a real node, installed as a user installs it (dev/demo/node-demo.ts). */
const onNode = process.argv.includes("--node");
/** `--at-rest[=seconds]`: after the heal, measure what the system does while nothing changes. */
const atRestArg = process.argv.find((a) => a === "--at-rest" || a.startsWith("--at-rest="));
const atRestSeconds = atRestArg === undefined ? 0 : Number(atRestArg.split("=")[1] ?? 60);
const started = Date.now();
const seconds = (from: number): string => `${((Date.now() - from) / 1000).toFixed(1)} s`;
const say = (line: string): void => console.log(`[demo ${seconds(started).padStart(7)}] ${line}`);

function printTable(rows: readonly RuleRow[], groups: readonly string[]): void {
  const header = ["rule", "inSync", "pods holding it"];
  const body = rows.map((r) => [r.rule, String(r.inSync ?? "-"), `${r.holding}/${r.pods}`]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? "").length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join("  ");
  console.log(`\n${line(header)}\n${widths.map((w) => "-".repeat(w)).join("  ")}`);
  for (const b of body) console.log(line(b));
  for (const g of groups) console.log(g);
  console.log("");
}

interface Running {
  system?: RunningSystem;
  prometheus?: RunningPrometheus;
  node?: NodeDemo["node"];
}

/** The shipped alerts, as an operator would load them with `rule_files:`. */
const RULES_FILE = path.join(repoRoot, "manifests/monitoring/sdewan-alerts.rules.yml");

/**
 * Prometheus on loopback scraping every process of the demo every 5 s with the shipped rules,
 * or nothing (said once) when it is not installed.
 */
async function startDemoPrometheus(
  work: string,
  targets: readonly ScrapeTarget[],
): Promise<RunningPrometheus | undefined> {
  if (prometheusBinary() === undefined) {
    say("Prometheus not installed (apt-get install prometheus): running without it");
    return undefined;
  }
  const prometheus = await startPrometheus({
    workDir: path.join(work, "prometheus"),
    targets,
    ruleFiles: [RULES_FILE],
    interval: "5s",
  });
  const deadline = Date.now() + 20_000;
  let health = await prometheus.targetHealth();
  while (
    (health.length < targets.length || health.some((t) => t.health !== "up")) &&
    Date.now() < deadline
  ) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    health = await prometheus.targetHealth();
  }
  const state = health.map((t) => `${t.job} ${t.health}${t.lastError ? ` (${t.lastError})` : ""}`);
  say(`Prometheus at ${prometheus.url} with the shipped alerts; scraping: ${state.join(", ")}`);
  return prometheus;
}

/** Prometheus first (it scrapes the rest), then the system (system.ts says in which order). */
async function tearDown(running: Running): Promise<void> {
  await running.prometheus?.stop();
  await running.system?.stop();
  await running.node?.stop();
}

async function run(running: Running): Promise<void> {
  say(
    "control plane: kube-apiserver and etcd from dev/control-plane/build.sh (the first build " +
      "takes ~30 min on 2 cores, its progress below; cached after)",
  );
  await buildControlPlane({ say });
  running.system = new RunningSystem(say);
  const system = running.system;
  await system.start({
    say,
    eventSource: "connector",
    // Resyncs every 30 s so a look around sees them; the heartbeat tick keeps its 1 s.
    resync: (route, shipped) => (route === "clusterlink-peer-health" ? shipped : "30s"),
    logLevel: process.env["LOG_LEVEL"] ?? "info",
    // The API server's audit log of our identities: --at-rest reads what they wrote.
    apiserverArgs: auditArgs,
  });
  const cluster = system.demoCluster();
  const namespace = system.namespace;
  const work = system.workDir ?? "";
  const functionsUrl = system.functionsUrl;

  const caFile = path.join(work, "webhook-ca.pem");
  await writeFile(caFile, system.webhookCaPem);
  running.prometheus = await startDemoPrometheus(work, [
    { job: "functions", url: functionsUrl },
    { job: "validate-admission", url: system.webhookUrl, caFile },
    { job: "connector", url: system.connectorUrl ?? "" },
  ]);

  const applyStart = Date.now();
  const applied = await system.applySamples();
  await system.applyNetworkPolicy();
  say(
    `applied ${applied} objects from manifests/samples and a NetworkPolicy; waiting for every ` +
      "rule to be inSync",
  );

  const { rows, groups } = await cluster.waitConverged(namespace, 180_000, (pending) =>
    say(`waiting: ${pending}`),
  );
  say(`converged ${seconds(applyStart)} after applying the samples (${seconds(started)} in all)`);
  printTable(rows, groups);

  const answer = await cluster.createDanglingRule(namespace);
  say(
    `the webhook at work, a Mwan3Rule naming a missing policy: ${answer.replace(/^.*denied the request: /s, "denied: ").slice(0, 400)}`,
  );

  await clusterLinkPart(system, functionsUrl);

  say("restarting the CNF of pod 0: it comes back empty, its pod turns Ready again");
  const restartAt = Date.now();
  await cluster.restartCnfPod(0);
  await cluster.waitConverged(namespace, 120_000, (pending) => say(`healing: ${pending}`));
  say(`healed ${seconds(restartAt)} after the restart: every rule is back on both pods`);

  if (atRestSeconds > 0) {
    say(`at rest: nothing changes for ${atRestSeconds} s; measuring what still runs`);
    const atRest = await withHeartbeat(
      "at-rest measurement",
      measureAtRest(system, atRestSeconds),
      { say },
    );
    console.log(`\n${atRest.report}\n`);
  }

  if (running.prometheus !== undefined) {
    const firing = (await running.prometheus.alerts()).map(
      (a) => `${a.labels["alertname"] ?? "?"} (${a.state})`,
    );
    say(`alerts now: ${firing.length === 0 ? "none" : firing.join(", ")}`);
  }

  if (keep) {
    console.log(`export KUBECONFIG=${system.controlPlane?.kubeconfigPath ?? ""}`);
    if (running.prometheus !== undefined) {
      const prom = running.prometheus.url;
      console.log(`Prometheus: ${prom}/alerts  ${prom}/targets  ${prom}/graph`);
      console.log(`curl -s '${prom}/api/v1/query?query=sdewan_rules_not_in_sync'`);
    }
    console.log(`kubectl -n ${namespace} get mwan3policies,firewallzones -o wide`);
    console.log(
      `curl -i ${functionsUrl}/reconcile-rule -H 'Content-Type: application/json' ` +
        `-d '{"kind":"FirewallZone","namespace":"${namespace}","name":"lan1"}'`,
    );
    console.log("Running until Ctrl-C.");
    await new Promise<void>((resolve) => {
      stopWaiting = resolve;
    });
  }
}

/**
 * Peers (east healthy, west silent), an Export of a two-port Service, an Import of it from both
 * Peers and an AccessPolicy; waits for their conditions, prints them, asks clusterlink-authz.
 */
async function clusterLinkPart(system: RunningSystem, functionsUrl: string): Promise<void> {
  const appliedAt = Date.now();
  const demo = await system.applyClusterLink();
  say(
    `ClusterLink: Peers east and west, Export ${demo.exportNamespace}/db (port 5432 of a ` +
      `two-port Service), Import ${demo.importNamespace}/db from both Peers, an AccessPolicy`,
  );
  const converged = async (): Promise<void> => {
    const deadline = Date.now() + 60_000;
    let last: string | null = await demo.pending();
    while (last !== null) {
      if (Date.now() > deadline) throw new Error(`ClusterLink objects did not converge: ${last}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
      last = await demo.pending();
    }
  };
  await withHeartbeat("ClusterLink conditions", converged(), { say });
  say(`ClusterLink objects converged ${seconds(appliedAt)} after they were created:`);
  console.log(`\n${(await demo.describe()).join("\n")}\n`);
  const res = await fetch(`${functionsUrl}/clusterlink-authz`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(demo.authzRequest()),
  });
  say(
    `clusterlink-authz, on Peer east's behalf, ${demo.importNamespace} reading db: ` +
      `${res.status} ${await res.text()}`,
  );
}

/** Set while --keep waits for Ctrl-C: the signal then ends the wait instead of interrupting. */
let stopWaiting: (() => void) | undefined;

const running: Running = {};
let interrupted = false;
const onSignal = (): void => {
  if (stopWaiting !== undefined) {
    stopWaiting();
    stopWaiting = undefined;
    return;
  }
  if (interrupted) process.exit(130);
  interrupted = true;
  say("interrupted: tearing down");
  void tearDown(running).then(() => process.exit(130));
};
process.on("SIGINT", onSignal);
process.on("SIGTERM", onSignal);

try {
  if (onNode) {
    const waitForCtrlC = keep
      ? () =>
          new Promise<void>((resolve) => {
            stopWaiting = resolve;
          })
      : undefined;
    await runNodeDemo(say, running, waitForCtrlC);
  } else {
    await run(running);
  }
  await tearDown(running);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await tearDown(running);
  process.exitCode = 1;
}
