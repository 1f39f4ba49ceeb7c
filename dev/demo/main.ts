/**
 * `npm run demo [-- --keep]`: the project's main job on one machine. Starts a local control
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
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { AdmissionregistrationV1Api, KubeConfig } from "@kubernetes/client-node";
import { parse, stringify } from "yaml";
import { repoRoot } from "../control-plane/binaries.js";
import { startControlPlane, type ControlPlane } from "../control-plane/control-plane.js";
import { httpsStatus, startChild, waitForHttp, type Child } from "./children.js";
import { DemoCluster, type RuleRow } from "./cluster.js";
import { createDemoIdentities } from "./identities.js";
import { ClusterLinkDemo, DEMO_PEERS } from "./clusterlink.js";
import { PeerGatewayFleet } from "../peer-gateway-sim/index.js";
import { buildWebhookConfiguration } from "../../shared/admission/index.js";
import {
  prometheusBinary,
  startPrometheus,
  type RunningPrometheus,
  type ScrapeTarget,
} from "../prometheus/index.js";

const keep = process.argv.includes("--keep");
const started = Date.now();
const seconds = (from: number): string => `${((Date.now() - from) / 1000).toFixed(1)} s`;
const say = (line: string): void => console.log(`[demo ${seconds(started).padStart(7)}] ${line}`);

async function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      server.close(() =>
        typeof address === "object" && address
          ? resolve(address.port)
          : reject(new Error("no port")),
      );
    });
  });
}

/** The connector's example config, pointed at the local functions, resync every 30 s. */
async function connectorConfig(functionsUrl: string, port: number): Promise<string> {
  const config = parse(
    await readFile(path.join(repoRoot, "manifests/connector/config.yaml"), "utf8"),
  ) as { http: object; routes: { name: string; url: string; resync?: string }[] };
  config.http = { host: "127.0.0.1", port };
  for (const route of config.routes) {
    route.url = `${functionsUrl}/${route.name}`;
    // Only routes whose function takes resync events have a period (reconcile-rule does not).
    if (route.resync !== undefined) route.resync = "30s";
  }
  return stringify(config);
}

async function registerWebhook(cp: ControlPlane, url: string, caPem: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const body = buildWebhookConfiguration({
    clientConfig: { url, caBundle: Buffer.from(caPem).toString("base64") },
  });
  await kc.makeApiClient(AdmissionregistrationV1Api).createValidatingWebhookConfiguration({ body });
}

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
  controlPlane?: ControlPlane;
  cluster?: DemoCluster;
  children: Child[];
  prometheus?: RunningPrometheus;
  gateways?: PeerGatewayFleet;
  workDir?: string;
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

/**
 * The connector first (no new events), then the control plane (its keep-alive connections to the
 * webhook go with it), then the servers and the simulators. Logs are kept when a child did not
 * exit cleanly.
 */
async function tearDown(running: Running): Promise<void> {
  const from = Date.now();
  const [connector, ...servers] = [...running.children].reverse();
  const endings: string[] = [];
  const stop = async (child: Child | undefined) => {
    if (child === undefined) return;
    const how = await child.stop();
    endings.push(how);
    say(`stopped ${child.name}: ${how}`);
  };
  await stop(connector);
  await running.prometheus?.stop();
  await running.controlPlane?.stop();
  await Promise.all(servers.map(stop));
  await running.cluster?.close();
  await running.gateways?.close();
  const clean = endings.every((how) => how === "exit 0");
  if (running.workDir && clean) await rm(running.workDir, { recursive: true, force: true });
  if (running.workDir && !clean) say(`logs kept in ${running.workDir}`);
  say(`stopped everything in ${seconds(from)}`);
}

async function run(running: Running): Promise<void> {
  say("control plane: building (cached after the first time) and starting kube-apiserver + etcd");
  await promisify(execFile)("bash", [path.join(repoRoot, "dev/control-plane/build.sh")], {
    maxBuffer: 16 * 1024 * 1024,
  });
  const t0 = Date.now();
  running.controlPlane = await startControlPlane({});
  const cp = running.controlPlane;
  say(`control plane up in ${seconds(t0)}: ${cp.server}`);
  running.workDir = await mkdtemp(path.join(os.tmpdir(), "sdewan-demo-"));
  const work = running.workDir;
  const { identities, objects } = await createDemoIdentities(cp.kubeconfigPath, work);
  say(
    `applied manifests/rbac (${objects} objects): the functions, the webhook and the connector ` +
      "run as its ServiceAccounts, not as admin",
  );

  // ClusterLink peer gateways (dev/peer-gateway-sim): east answers, west never does.
  running.gateways = await PeerGatewayFleet.start({
    peers: DEMO_PEERS,
    dir: path.join(work, "peer-gateways"),
  });
  say(
    `peer gateway simulators: ${running.gateways.controlUrl}/gateways (east healthy, west silent)`,
  );

  const functionsPort = await freePort("127.0.0.1");
  const functionsUrl = `http://127.0.0.1:${functionsPort}`;
  const functions = startChild(
    "functions",
    "functions/server.ts",
    [],
    {
      KUBECONFIG: identities.functions,
      PORT: String(functionsPort),
      HOST: "127.0.0.1",
      FUNCTIONS:
        "reconcile-rule,on-deployment-ready,egress-group-sync,clusterlink-export," +
        "clusterlink-import,clusterlink-peer-health,clusterlink-authz",
      CL_PEER_TLS_DIR: running.gateways.identityDir,
      CL_HEARTBEAT_TIMEOUT_MS: "1000",
      // Plain HTTP here: the demo asks clusterlink-authz on Peer east's behalf (docs/clusterlink.md).
      CL_AUTHZ_UNVERIFIED: "on-behalf-of-peer",
      LOG_LEVEL: process.env["LOG_LEVEL"] ?? "info",
    },
    path.join(work, "functions.log"),
  );
  running.children.push(functions);
  await waitForHttp(`${functionsUrl}/_/ready`, functions, 60_000);
  say(`functions ready at ${functionsUrl} (log ${functions.logPath})`);

  // validate-admission over TLS (a certificate from the cluster CA), registered as the webhook.
  const serving = await cp.issueServingCertificate();
  const webhookPort = await freePort("127.0.0.1");
  const webhook = startChild(
    "validate-admission",
    "functions/validate-admission/main.ts",
    [],
    {
      KUBECONFIG: identities.webhook,
      PORT: String(webhookPort),
      TLS_CERT_FILE: serving.certPath,
      TLS_KEY_FILE: serving.keyPath,
      LOG_LEVEL: process.env["LOG_LEVEL"] ?? "info",
    },
    path.join(work, "validate-admission.log"),
  );
  running.children.push(webhook);
  const webhookUrl = `https://127.0.0.1:${webhookPort}`;
  await waitForHttp(`${webhookUrl}/_/ready`, webhook, 60_000, (url) =>
    httpsStatus(url, serving.caPem),
  );
  await registerWebhook(cp, `${webhookUrl}/`, serving.caPem);
  say(`validate-admission serving HTTPS at ${webhookUrl}, registered with the API server`);

  running.cluster = new DemoCluster(cp.kubeconfigPath);
  const cluster = running.cluster;
  const namespace = `sdewan-demo-${randomBytes(2).toString("hex")}`;
  await cluster.createNamespace(namespace);
  const cnf = await cluster.createCnf(namespace);
  await cluster.createShop(namespace);
  say(`namespace ${namespace}: CNF cnf-1 with 2 ready pods, 2 web pods for the Egress`);
  // Each pod's Pod IP is its own loopback address, where a simulator serves the CNF port.
  say(`CNF simulators: ${cnf.pods.map((p) => p.sim.url).join(", ")}`);

  const connectorPort = await freePort("127.0.0.1");
  const configPath = path.join(work, "connector.yaml");
  await writeFile(configPath, await connectorConfig(functionsUrl, connectorPort));
  const connector = startChild(
    "connector",
    "connector/main.ts",
    ["--config", configPath],
    { KUBECONFIG: identities.connector, LOG_LEVEL: process.env["LOG_LEVEL"] ?? "info" },
    path.join(work, "connector.log"),
  );
  running.children.push(connector);
  await waitForHttp(`http://127.0.0.1:${connectorPort}/readyz`, connector, 60_000);
  say(`connector ready (log ${connector.logPath})`);

  const caFile = path.join(work, "webhook-ca.pem");
  await writeFile(caFile, serving.caPem);
  running.prometheus = await startDemoPrometheus(work, [
    { job: "functions", url: functionsUrl },
    { job: "validate-admission", url: webhookUrl, caFile },
    { job: "connector", url: `http://127.0.0.1:${connectorPort}` },
  ]);

  const samples = (await readdir(path.join(repoRoot, "manifests/samples")))
    .filter((f) => f.endsWith(".yaml") && f !== "cnf-deployment.yaml")
    .sort();
  const applyStart = Date.now();
  const applied = await cluster.applySamples(namespace, samples);
  say(`applied ${applied} objects from manifests/samples; waiting for every rule to be inSync`);

  const { rows, groups } = await cluster.waitConverged(namespace, 180_000, (pending) =>
    say(`waiting: ${pending}`),
  );
  say(`converged ${seconds(applyStart)} after applying the samples (${seconds(started)} in all)`);
  printTable(rows, groups);

  const answer = await cluster.createDanglingRule(namespace);
  say(
    `the webhook at work, a Mwan3Rule naming a missing policy: ${answer.replace(/^.*denied the request: /s, "denied: ").slice(0, 400)}`,
  );

  await clusterLinkPart(cp.kubeconfigPath, functionsUrl, running.gateways);

  say("restarting the CNF of pod 0: it comes back empty, its pod turns Ready again");
  const restartAt = Date.now();
  await cluster.restartCnfPod(0);
  await cluster.waitConverged(namespace, 120_000, (pending) => say(`healing: ${pending}`));
  say(`healed ${seconds(restartAt)} after the restart: every rule is back on both pods`);

  if (running.prometheus !== undefined) {
    const firing = (await running.prometheus.alerts()).map(
      (a) => `${a.labels["alertname"] ?? "?"} (${a.state})`,
    );
    say(`alerts now: ${firing.length === 0 ? "none" : firing.join(", ")}`);
  }

  if (keep) {
    console.log(`export KUBECONFIG=${cp.kubeconfigPath}`);
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
async function clusterLinkPart(
  kubeconfigPath: string,
  functionsUrl: string,
  gateways: PeerGatewayFleet,
): Promise<void> {
  const demo = new ClusterLinkDemo(kubeconfigPath);
  const appliedAt = Date.now();
  await demo.apply(gateways);
  say(
    `ClusterLink: Peers east and west, Export ${demo.exportNamespace}/db (port 5432 of a ` +
      `two-port Service), Import ${demo.importNamespace}/db from both Peers, an AccessPolicy`,
  );
  const deadline = Date.now() + 60_000;
  let last: string | null = await demo.pending();
  while (last !== null) {
    if (Date.now() > deadline) throw new Error(`ClusterLink objects did not converge: ${last}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
    last = await demo.pending();
  }
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

const running: Running = { children: [] };
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
  await run(running);
  await tearDown(running);
} catch (error) {
  console.error(error instanceof Error ? error.message : error);
  await tearDown(running);
  process.exitCode = 1;
}
