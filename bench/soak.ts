/**
 * `npm run soak -- --minutes N [--seed S]`: the functions under abuse for N minutes, then a check
 * that everything converged. Runs a real kube-apiserver + etcd, CNF simulators behind faulty
 * proxies (20% 5xx, timeouts, resets, refused connections, CNF restarts), two instances of the
 * function server and the connector as child processes, and a proxy between them that delays,
 * duplicates and replays deliveries; one instance is killed and restarted. A random workload
 * creates, updates and deletes rules and churns Pods, Namespaces and Egresses. Afterwards (faults
 * off, one resync): every CNF pod holds exactly the desired objects, every status is true, no
 * object is stuck with a finalizer, every EgressGroup equals a fresh computation, and no log shows
 * a crash or an unhandled rejection. Prints the counts; exits 1 when a check fails.
 */
import { randomInt } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import { startCnfSim } from "../dev/cnf-sim/index.js";
import { CnfFleet, loopbackAddress, withFreshAddress, type Cnf } from "../dev/world/index.js";
import { RESYNC_EVENT_TYPE } from "../shared/events/types.js";
import { RULE_API_VERSION, RULE_KIND_NAMES } from "../shared/kinds/index.js";
import { freePort } from "./lib/child.js";
import { startBenchCluster, type BenchCluster } from "./lib/cluster.js";
import {
  checkCnfs,
  checkEgressGroups,
  checkRuleStatuses,
  logProblems,
  type Discrepancy,
} from "./soak/checks.js";
import { CnfProxy } from "./soak/cnf-proxy.js";
import { DeliveryProxy } from "./soak/delivery-proxy.js";
import {
  FunctionInstances,
  metricBy,
  metricSum,
  startConnector,
  type ConnectorProcess,
} from "./soak/fleet.js";
import { Random } from "./soak/random.js";
import { EGRESS_RUN_LABEL, Workload } from "./soak/workload.js";

const CNF_FAULTS = { serverError: 0.2, timeout: 0.03, reset: 0.02 };
const DELIVERY_FAULTS = { delay: 0.1, duplicate: 0.1, replaysPerSecond: 2 };
const NO_CNF_FAULTS = { serverError: 0, timeout: 0, reset: 0 };
const NO_DELIVERY_FAULTS = { delay: 0, duplicate: 0, replaysPerSecond: 0 };
/** Longer than the CNF client's 1.5 s request timeout. */
const HOLD_MS = 2_500;

const log = (line: string): void => {
  process.stderr.write(`[soak ${new Date().toISOString().slice(11, 23)}] ${line}\n`);
};

function options(): { minutes: number; seed: number; keep: boolean } {
  const { values } = parseArgs({
    options: {
      minutes: { type: "string", default: "2" },
      seed: { type: "string" },
      keep: { type: "boolean", default: false },
    },
  });
  const minutes = Number(values.minutes);
  if (!(minutes > 0 && minutes <= 240))
    throw new Error(`--minutes must be in (0, 240], got ${values.minutes}`);
  return {
    minutes,
    seed: values.seed === undefined ? randomInt(2 ** 31) : Number(values.seed),
    keep: values.keep,
  };
}

function connectorConfig(proxyUrl: string, port: number): string {
  const rules = RULE_KIND_NAMES.map((kind) => ({ apiVersion: RULE_API_VERSION, kind }));
  return stringify({
    http: { host: "127.0.0.1", port },
    delivery: {
      concurrency: 16,
      timeout: "30s",
      backoff: { initial: "100ms", max: "3s" },
      maxAttempts: 40,
      maxAge: "10m",
      retryAfterMax: "3s",
    },
    watch: { timeout: "5m", inactivity: "3m" },
    shutdownGrace: "5s",
    routes: [
      { name: "reconcile-rule", url: `${proxyUrl}/reconcile-rule`, resources: rules },
      {
        name: "on-deployment-ready",
        url: `${proxyUrl}/on-deployment-ready`,
        resync: "30s",
        resources: [
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            selector: { matchExpressions: [{ key: "sdewanPurpose", operator: "Exists" }] },
          },
          { apiVersion: "v1", kind: "Pod", selector: "sdewanPurpose" },
        ],
      },
      {
        name: "egress-group-sync",
        url: `${proxyUrl}/egress-group-sync`,
        resync: "30s",
        resources: [
          { apiVersion: "crd.antrea.io/v1beta1", kind: "Egress" },
          { apiVersion: "v1", kind: "Pod" },
          { apiVersion: "v1", kind: "Namespace" },
        ],
      },
    ],
  });
}

interface World {
  readonly cluster: BenchCluster;
  readonly fleet: CnfFleet;
  readonly cnfs: Cnf[];
  readonly proxies: CnfProxy[];
  readonly ruleNamespaces: string[];
  readonly egressNamespaces: string[];
  readonly run: string;
}

async function buildWorld(cluster: BenchCluster, random: Random): Promise<World> {
  const proxies: CnfProxy[] = [];
  // The Pod IP is a faulty proxy in front of the pod's simulator.
  const podEndpoint = (port: number) =>
    withFreshAddress(async () => {
      const sim = await startCnfSim({ host: loopbackAddress(), port: 0 });
      const proxy = await CnfProxy.start({
        host: loopbackAddress(),
        port,
        upstream: { host: sim.host, port: sim.port },
        random,
        holdMs: HOLD_MS,
      });
      proxies.push(proxy);
      return { ip: proxy.host, sim };
    });
  const fleet = new CnfFleet(cluster.adminClient(), { podEndpoint });
  const run = Math.random().toString(36).slice(2, 7);
  const nsA = await cluster.namespace("soak-a");
  const nsB = await cluster.namespace("soak-b");
  const cnfs = [
    await fleet.createCnf("a", { namespace: nsA }),
    await fleet.createCnf("b", { namespace: nsA }),
    await fleet.createCnf("a", { namespace: nsB }),
  ];
  const egressNamespaces = [
    await cluster.namespace("soak-eg", { [EGRESS_RUN_LABEL]: run, team: "t0" }),
    await cluster.namespace("soak-eg", { [EGRESS_RUN_LABEL]: run, team: "t1" }),
    await cluster.namespace("soak-eg", { [EGRESS_RUN_LABEL]: run, team: "t0" }),
  ];
  return { cluster, fleet, cnfs, proxies, ruleNamespaces: [nsA, nsB], egressNamespaces, run };
}

interface FaultCounts {
  cnfRestarts: number;
  functionKills: number;
}

/** Chaos for `ms`: the workload steps, and faults fire on their own timers. */
async function chaos(
  world: World,
  workload: Workload,
  instances: FunctionInstances,
  random: Random,
  ms: number,
): Promise<FaultCounts> {
  const counts: FaultCounts = { cnfRestarts: 0, functionKills: 0 };
  const end = Date.now() + ms;
  const background: Promise<unknown>[] = [];
  const pods = world.cnfs.flatMap((cnf) => cnf.pods);
  // Each fault at least once even in a short run, then again on its period.
  let nextRestart = Date.now() + Math.min(10_000, ms / 4);
  let nextRefusal = Date.now() + Math.min(5_000, ms / 6);
  let nextKill = Date.now() + Math.min(15_000, ms / 3);
  while (Date.now() < end) {
    await workload.step();
    const now = Date.now();
    if (now >= nextRestart) {
      nextRestart = now + 15_000 + random.int(10_000);
      const pod = random.pick(pods);
      if (pod !== undefined) {
        counts.cnfRestarts += 1;
        // A container restart: the CNF loses its state, the pod turns not ready, then ready again.
        const downMs = 1_000 + random.int(2_000);
        background.push(world.fleet.restartPod(pod, { downMs }));
      }
    }
    if (now >= nextRefusal) {
      nextRefusal = now + 10_000 + random.int(10_000);
      const proxy = random.pick(world.proxies);
      if (proxy !== undefined) background.push(proxy.refuseFor(2_000 + random.int(3_000)));
    }
    if (now >= nextKill) {
      nextKill = now + 40_000 + random.int(20_000);
      const instance = random.pick(instances.instances);
      if (instance !== undefined) {
        counts.functionKills += 1;
        log(`killing ${instance.name} (SIGKILL), restarting it in 1 s`);
        background.push(instances.killAndRestart(instance, 1_000));
      }
    }
    await delay(40 + random.int(120));
  }
  log("faults stop: waiting for restarts in progress");
  await Promise.all(background);
  return counts;
}

/** Until the connector has nothing queued or in flight and the proxy nothing in flight, 3 s in a row. */
async function quiesce(
  connector: ConnectorProcess,
  proxy: DeliveryProxy,
  timeoutMs: number,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  let quietSince: number | undefined;
  while (Date.now() < deadline) {
    const text = await (await fetch(connector.metricsUrl)).text();
    const queued = metricSum(text, "sdewan_connector_queue_depth");
    if (queued === 0 && proxy.busy === 0) {
      quietSince ??= Date.now();
      if (Date.now() - quietSince >= 3_000) return true;
    } else {
      quietSince = undefined;
    }
    await delay(250);
  }
  return false;
}

/** One resync event through the proxy, redelivered after a 5xx like the connector would; attempts used, or undefined. */
async function resync(proxy: DeliveryProxy, fn: string): Promise<number | undefined> {
  for (let attempt = 0; attempt < 10; attempt += 1) {
    const res = await fetch(`${proxy.url}/${fn}`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "ce-specversion": "1.0",
        "ce-id": `soak-final-resync-${fn}-${attempt}`,
        "ce-source": "/soak",
        "ce-type": RESYNC_EVENT_TYPE,
      },
      body: "{}",
    });
    if (res.status === 202) return attempt + 1;
    await delay(1_000);
  }
  return undefined;
}

/** Each CNF pod's request journal as JSON lines in the work folder. */
async function writeJournals(world: World, workDir: string): Promise<void> {
  for (const proxy of world.proxies) {
    const lines = proxy.journal.map((entry) => JSON.stringify(entry)).join("\n");
    await writeFile(path.join(workDir, `cnf-${proxy.host}.journal.jsonl`), `${lines}\n`);
  }
}

/** Handled events whose object is named `name`, from every function log: time, action, outcome. */
async function eventsNaming(logFiles: readonly string[], name: string): Promise<string[]> {
  const lines: { at: string; text: string }[] = [];
  for (const file of logFiles) {
    const text = await readFile(file, "utf8").catch(() => "");
    for (const line of text.split("\n")) {
      if (!line.includes(`/${name}"`) || !line.includes('"durationMs"')) continue;
      try {
        const r = JSON.parse(line) as Record<string, unknown>;
        const at = String(r["time"]);
        const what = [
          r["function"],
          r["action"],
          r["object"],
          r["outcome"],
          r["result"] ?? r["reason"],
          `${String(r["durationMs"])} ms`,
        ];
        lines.push({
          at,
          text: `${at} ${path.basename(file)} ${what.map(String).join(" ")}`.slice(0, 220),
        });
      } catch {
        // not a JSON log line
      }
    }
  }
  return lines.sort((a, b) => a.at.localeCompare(b.at)).map((l) => l.text);
}

/** For each object a pod holds without a rule (or lacks): the requests that named it and the events. */
async function evidence(
  world: World,
  discrepancies: readonly Discrepancy[],
  logFiles: readonly string[],
): Promise<string> {
  const lines: string[] = [];
  for (const d of discrepancies.slice(0, 6)) {
    const proxy = world.proxies.find((p) => p.host === d.podIp);
    const journal = (proxy?.journal ?? []).filter((e) => e.path.includes(`/${d.name}`));
    lines.push(
      `${d.kind} ${d.collection}/${d.name} on pod ${d.podIp}; its last CNF requests:`,
      ...journal
        .slice(-6)
        .map((e) => `    ${e.at} ${e.method} ${e.path} ${e.fate} ${e.status ?? ""}`),
      "  events that named it:",
      ...(await eventsNaming(logFiles, d.name)).slice(-8).map((l) => `    ${l}`),
    );
  }
  return lines.length === 0 ? "" : `\nevidence\n${lines.join("\n")}\n`;
}

async function main(): Promise<number> {
  const opts = options();
  const started = Date.now();
  const random = new Random(opts.seed);
  log(
    `seed ${opts.seed} (replay the workload's choices with --seed ${opts.seed}), ${opts.minutes} min of faults`,
  );
  const workDir = await mkdtemp(path.join(os.tmpdir(), "sdewan-soak-"));
  log(`logs and CNF request journals go to ${workDir} (kept when a check fails)`);
  const cluster = await startBenchCluster((line) => log(`control plane: ${line}`));
  let world: World | undefined;
  let instances: FunctionInstances | undefined;
  let connector: ConnectorProcess | undefined;
  const proxy = new DeliveryProxy(() => instances?.urls() ?? [], random);
  let failed = true;
  process.once("SIGINT", () => {
    log("interrupted: stopping every process this soak started");
    void Promise.allSettled([connector?.proc.stop(1_000), instances?.stop()])
      .then(() => cluster.stop())
      .finally(() => process.exit(130));
  });
  try {
    world = await buildWorld(cluster, random);
    const env = { KUBECONFIG: cluster.kubeconfigPath, LOG_LEVEL: "info" };
    instances = new FunctionInstances(workDir, env);
    await proxy.start();
    const connectorPort = await freePort();
    const configFile = path.join(workDir, "connector.yaml");
    await writeFile(configFile, connectorConfig(proxy.url, connectorPort));
    log("starting 2 function server instances and the connector");
    const fnInstances = instances;
    [connector] = await Promise.all([
      startConnector(workDir, configFile, connectorPort, env),
      fnInstances.start(2),
    ]);
    const workload = new Workload({
      raw: cluster.raw,
      random,
      homes: world.cnfs,
      egressNamespaces: world.egressNamespaces,
      run: world.run,
    });
    log(
      `setup done in ${((Date.now() - started) / 1000).toFixed(0)} s; chaos for ${opts.minutes} min`,
    );

    for (const p of world.proxies) p.rates = CNF_FAULTS;
    proxy.rates = DELIVERY_FAULTS;
    const faults = await chaos(world, workload, instances, random, opts.minutes * 60_000);
    for (const p of world.proxies) p.rates = NO_CNF_FAULTS;
    proxy.rates = NO_DELIVERY_FAULTS;

    log("settling: waiting for the connector's queue to drain");
    // Bounded: a CNF that cannot converge (a stuck finalizer) keeps its events retrying forever.
    const drained = await quiesce(connector, proxy, 60_000);
    const resyncs = {
      "on-deployment-ready": await resync(proxy, "on-deployment-ready"),
      "egress-group-sync": await resync(proxy, "egress-group-sync"),
    };
    const settled = await quiesce(connector, proxy, 45_000);
    log(`settled (drained: ${drained}, after resync: ${settled}); checking the end state`);

    const discrepancies: Discrepancy[] = [];
    const problems = [
      ...(drained && settled ? [] : ["the connector's queue did not drain within the deadline"]),
      ...Object.entries(resyncs)
        .filter(([, attempts]) => attempts === undefined)
        .map(([fn]) => `the final resync of ${fn} was not answered 202 in 10 attempts`),
      ...(await checkCnfs(cluster.raw, world.cnfs, discrepancies)),
      ...(await checkRuleStatuses(cluster.raw, world.ruleNamespaces)),
      ...(await checkEgressGroups(cluster.raw)),
    ];
    const metrics = await (await fetch(connector.metricsUrl)).text();
    await connector.proc.stop();
    await instances.stop();
    const logs = (
      await Promise.all([...instances.logFiles, connector.logFile].map((f) => logProblems(f)))
    ).flat();
    const crashes = [
      ...instances.instances.flatMap((i) => i.unexpectedExits),
      ...(connector.unexpectedExit === undefined ? [] : [`connector ${connector.unexpectedExit}`]),
    ];
    problems.push(...crashes.map((c) => `unexpected exit: ${c}`), ...logs);

    const cnfFaults = world.proxies.reduce(
      (sum, p) => ({
        serverErrors: sum.serverErrors + p.counts.serverErrors,
        timeouts: sum.timeouts + p.counts.timeouts,
        resets: sum.resets + p.counts.resets,
        refusals: sum.refusals + p.counts.refusals,
        forwarded: sum.forwarded + p.counts.forwarded,
      }),
      { serverErrors: 0, timeouts: 0, resets: 0, refusals: 0, forwarded: 0 },
    );
    const report = {
      seed: opts.seed,
      minutes: opts.minutes,
      seconds: Math.round((Date.now() - started) / 1000),
      workload: workload.counts,
      events: {
        observed: metricSum(metrics, "sdewan_connector_events_observed_total"),
        coalesced: metricSum(metrics, "sdewan_connector_events_coalesced_total"),
        delivered: metricSum(metrics, "sdewan_connector_events_sent_total"),
        retried: metricBy(metrics, "sdewan_connector_events_retried_total", "reason"),
        deadLettered: metricBy(metrics, "sdewan_connector_events_dead_lettered_total", "reason"),
        relists: metricSum(metrics, "sdewan_connector_relists_total"),
        finalResyncAttempts: resyncs,
      },
      faults: {
        cnf: cnfFaults,
        cnfRestarts: faults.cnfRestarts,
        functionKills: faults.functionKills,
        delivery: proxy.counts,
      },
      answers: Object.fromEntries([...proxy.answers].sort(([a], [b]) => a.localeCompare(b))),
      problems: problems.length,
    };
    process.stdout.write(`\nsoak report\n${stringify(report)}`);
    if (problems.length > 0) {
      await writeJournals(world, workDir);
      process.stdout.write(await evidence(world, discrepancies, instances.logFiles));
      process.stdout.write(
        `\nEND STATE CHECKS FAILED (${problems.length}):\n${problems
          .slice(0, 40)
          .map((p) => `  - ${p}`)
          .join("\n")}\n`,
      );
      process.stdout.write(`logs kept in ${workDir}\n`);
    } else {
      process.stdout.write("\nall end-state checks passed\n");
    }
    failed = problems.length > 0;
    return failed ? 1 : 0;
  } finally {
    await connector?.proc.stop().catch(() => undefined);
    await instances?.stop().catch(() => undefined);
    await proxy.close().catch(() => undefined);
    await Promise.all(world?.proxies.map((p) => p.close()) ?? []);
    await world?.fleet.close();
    await cluster.stop();
    if (!failed && !opts.keep) await rm(workDir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    log(`soak failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    process.exit(1);
  },
);
