// Knative Eventing on a real node, installed as Knative installs itself (dev/node/knative.ts): its
// own controllers, webhook, in-memory channel and MT channel-based Broker as Pods of images built
// from its sources; then the project on it as a user installs it without Knative Serving
// (manifests/knative-deployments, docs/deploy.md), and every event of the scenarios goes through
// Knative's own objects: ApiServerSource and PingSource adapters, the Broker's ingress, channel and
// filter, the Triggers' retries and dead letter. The scenarios run in order on one install.
import { type AuditedRequest, isWrite, parseExposition } from "../../dev/demo/at-rest.js";
import {
  applyFixtures,
  applySamples,
  atRestFor60s,
  AuditTail,
  cnfHolds,
  cnfPodsPending,
  eventToFunctionMs,
  firstRead,
  type InstalledWorld,
  notAvailable,
  percentiles,
  type PodView,
  progress,
  pushProjectImage,
  pushSimulatorImage,
  readyPods,
  rulesNotInSync,
  startInstalledWorld,
  until,
  waitFor,
} from "./support/installed.js";
import {
  installKnative,
  installKnativeDeployments,
  KNATIVE_NAMESPACE,
  type KnativeBuild,
  pushKnativeImages,
} from "../../dev/node/knative.js";

const SYSTEM = "sdewan-system";
const NS = "sdewan-node";
const CNF = "app=cnf-1";
/** Items each CNF pod holds when every rule so far is applied. */
let onCnf = 0;

let world: InstalledWorld;
let build: KnativeBuild;
const numbers: string[] = [];
const measured = (line: string): void => {
  numbers.push(line);
  progress(line);
};
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

beforeAll(async () => {
  world = await startInstalledWorld();
  const t = Date.now();
  build = await pushKnativeImages(world);
  await pushProjectImage(world);
  await pushSimulatorImage(world);
  measured(`Knative images built (or cached) and pushed: ${seconds(Date.now() - t)}`);
  const mb = (n: number): string => `${(n / 1e6).toFixed(1)} MB`;
  measured(
    `binaries: ${Object.entries(build.sizes)
      .map(([name, size]) => `${name} ${mb(size)}`)
      .join(", ")}`,
  );
}, 1_800_000);

afterAll(async () => {
  process.stderr.write(`\nknative on the node, measured:\n  ${numbers.join("\n  ")}\n`);
  await world?.node.stop();
}, 180_000);

interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface Knative {
  metadata: { name: string; namespace?: string; generation?: number };
  status?: {
    conditions?: Condition[];
    observedGeneration?: number;
    address?: { url?: string };
    sinkUri?: string;
  };
}
interface Trigger extends Knative {
  spec: {
    subscriber: { ref: { name: string } };
    delivery: { deadLetterSink?: unknown };
  };
  status?: Knative["status"] & { subscriberUri?: string; deadLetterSinkUri?: string };
}
interface Owned {
  metadata: { name: string; ownerReferences?: { kind: string }[] };
}

/** Why `object` is not Ready=True (its own words), or undefined. */
function notReady(object: Knative): string | undefined {
  const ready = object.status?.conditions?.find((c) => c.type === "Ready");
  const seen = object.status?.observedGeneration === object.metadata.generation;
  if (ready?.status === "True" && seen) return undefined;
  if (!seen)
    return `${object.metadata.name}: generation ${object.metadata.generation} not observed yet`;
  const failing = object.status?.conditions?.find((c) => c.status !== "True");
  return `${object.metadata.name}: ${failing?.type ?? "Ready"} ${failing?.reason ?? ""} ${failing?.message ?? "no status yet"}`;
}

async function allReady(namespace: string, resource: string): Promise<string | undefined> {
  const list = await world.getJson<{ items: Knative[] }>(["-n", namespace, resource]);
  if (list.items.length === 0) return `no ${resource}`;
  const pending = list.items.map(notReady).filter((r) => r !== undefined);
  return pending.length === 0 ? undefined : pending.join("; ");
}

async function createFirewallRule(name: string, port: number): Promise<void> {
  await world.kubectl(
    ["-n", NS, "create", "-f", "-"],
    `apiVersion: batch.sdewan.akraino.org/v1alpha1
kind: FirewallRule
metadata: {name: ${name}, labels: {sdewanPurpose: cnf-1}}
spec: {src: lan1, src_port: "${port}", proto: tcp, target: REJECT}
`,
  );
}

/** A control request to each CNF simulator pod (docs/cnf.md), through the API server's proxy. */
async function simOnEach(
  pods: readonly PodView[],
  verb: "create" | "delete",
  what: string,
  body?: unknown,
): Promise<void> {
  for (const pod of pods) {
    const raw = `/api/v1/namespaces/${NS}/pods/${pod.metadata.name}:80/proxy/_sim/${what}`;
    await (verb === "create"
      ? world.kubectl(["create", "--raw", raw, "-f", "-"], JSON.stringify(body))
      : world.kubectl(["delete", "--raw", raw]));
  }
}

/** The CNF service restarts the ready CNF pods accepted so far, together. */
async function simRestarts(namespace: string): Promise<number> {
  let total = 0;
  for (const pod of await readyPods(world, namespace, CNF)) {
    const raw = `/api/v1/namespaces/${namespace}/pods/${pod.metadata.name}:80/proxy/_sim/restarts`;
    total += (JSON.parse(await world.kubectl(["get", "--raw", raw])) as unknown[]).length;
  }
  return total;
}

interface DeadLetter {
  kind: string;
  name: string;
  code: string;
  /** When the sink logged it (kubectl logs --timestamps), ms since the epoch. */
  at: number;
}

/** The events the dead-letter sink (event_display) has logged: object and the Broker's error code. */
async function deadLetters(): Promise<DeadLetter[]> {
  const log = await world.kubectl([
    "-n",
    SYSTEM,
    "logs",
    "--timestamps",
    "deployment/sdewan-dead-letter",
  ]);
  // Each event opens with "<timestamp> ... cloudevents.Event"; its fields follow on later lines.
  const blocks = log.split(/^(\S+) .*cloudevents\.Event$/m).slice(1);
  const letters: DeadLetter[] = [];
  for (let i = 0; i + 1 < blocks.length; i += 2) {
    const block = blocks[i + 1] ?? "";
    letters.push({
      kind: /"kind":\s*"([^"]+)"/.exec(block)?.[1] ?? "",
      name: /"name":\s*"([^"]+)"/.exec(block)?.[1] ?? "",
      code: /knativeerrorcode: (\S+)/.exec(block)?.[1] ?? "",
      at: Date.parse(blocks[i] ?? ""),
    });
  }
  return letters;
}

async function waitForDeadLetter(
  kind: string,
  name: string,
  timeoutMs: number,
): Promise<DeadLetter> {
  let found: DeadLetter | undefined;
  await waitFor(
    `${kind} ${name} dead-lettered`,
    async () => {
      found = (await deadLetters()).find((l) => l.kind === kind && l.name === name);
      return found === undefined ? "not in the sink's log" : undefined;
    },
    timeoutMs,
    500,
  );
  return found as DeadLetter;
}

/**
 * Waits until every event about FirewallRule `name` has been dead-lettered: its creation's and the
 * echo of each write our functions made to it (the finalizer, the status), each of which the Broker
 * delivers with a retry budget of its own. Until then a late delivery may still apply the rule.
 */
async function waitForEveryEventSpent(name: string, timeoutMs: number): Promise<number> {
  const tail = await AuditTail.of(world, "start");
  let spent = 0;
  await waitFor(
    `every event of FirewallRule ${name} dead-lettered`,
    async () => {
      await tail.read();
      const writes = tail.requests.filter(
        (r) =>
          isWrite(r) &&
          r.code < 300 && // a write refused (409) changed nothing and made no event
          r.user.startsWith("sdewan-") &&
          r.resource.startsWith("firewallrules") &&
          r.object === `${NS}/${name}`,
      ).length;
      spent = (await deadLetters()).filter(
        (l) => l.kind === "FirewallRule" && l.name === name,
      ).length;
      return spent >= 1 + writes ? undefined : `${spent} of ${1 + writes} events dead-lettered`;
    },
    timeoutMs,
    500,
  );
  return spent;
}

interface Attempt {
  correlationId: string;
  /** When it arrived: the line is written as the answer goes out, durationMs after. */
  at: number;
  outcome: string;
  /** "FirewallRule <namespace>/<name>", or absent for a resync. */
  object?: string;
  eventType?: string;
  retryAfterSeconds?: number;
}

/** Each event `fn` handled, from its log (one line per event, functions/server.ts). */
async function functionLog(fn: string): Promise<Attempt[]> {
  const log = await world.kubectl(["-n", SYSTEM, "logs", `deployment/${fn}`]);
  const attempts: Attempt[] = [];
  for (const line of log.split("\n")) {
    if (!line.startsWith("{")) continue;
    const entry = JSON.parse(line) as Partial<Attempt> & { time?: string; durationMs?: number };
    if (entry.correlationId === undefined || entry.outcome === undefined) continue;
    const { time, durationMs, ...rest } = entry;
    attempts.push({
      ...rest,
      correlationId: entry.correlationId,
      outcome: entry.outcome,
      at: Date.parse(time ?? "") - (durationMs ?? 0),
    });
  }
  return attempts;
}

/** What each of `fns` handled from `from` to `to`: function, event type, object, outcome. */
async function handledBetween(fns: readonly string[], from: number, to: number): Promise<string[]> {
  const handled: string[] = [];
  for (const fn of fns) {
    for (const a of await functionLog(fn)) {
      if (a.at < from || a.at > to) continue;
      handled.push(`${fn} ${a.eventType ?? "?"} ${a.object ?? "(all)"} ${a.outcome}`);
    }
  }
  return handled;
}

/** The deliveries `fn` handled for objects whose description starts with `object`. */
async function functionAttempts(fn: string, object: string): Promise<Attempt[]> {
  return (await functionLog(fn)).filter((a) => a.object?.startsWith(object) === true);
}

/** sdewan_events_total of `fn`'s one Pod by outcome, through the API server's pod proxy. */
async function eventsByOutcome(fn: string): Promise<Map<string, number>> {
  const [pod] = await readyPods(world, SYSTEM, `app.kubernetes.io/name=${fn}`);
  if (pod === undefined) throw new Error(`no ${fn} pod`);
  const raw = `/api/v1/namespaces/${SYSTEM}/pods/${pod.metadata.name}:8080/proxy/metrics`;
  const counts = new Map<string, number>();
  for (const sample of parseExposition(await world.kubectl(["get", "--raw", raw]))) {
    if (sample.name !== "sdewan_events_total") continue;
    const outcome = sample.labels["outcome"] ?? "";
    counts.set(outcome, (counts.get(outcome) ?? 0) + sample.value);
  }
  return counts;
}

/** How many of `requests` share each `key`, most first. */
function countedBy(
  requests: readonly AuditedRequest[],
  key: (r: AuditedRequest) => string,
): [string, number][] {
  const counts = new Map<string, number>();
  for (const r of requests) counts.set(key(r), (counts.get(key(r)) ?? 0) + 1);
  return [...counts].sort((x, y) => y[1] - x[1]);
}

const listed = (counts: readonly [string, number][]): string =>
  counts.map(([key, n]) => `${key} ${n}`).join(", ");

/** The three most frequent requests (identity, verb, resource), with their counts. */
function mostRequested(requests: readonly AuditedRequest[]): string {
  return listed(countedBy(requests, (r) => `${r.user} ${r.verb} ${r.resource}`).slice(0, 3));
}

async function setResyncSchedule(schedule: string): Promise<void> {
  await world.kubectl([
    "-n",
    SYSTEM,
    "patch",
    "pingsource",
    "sdewan-resync",
    "--type=merge",
    "-p",
    JSON.stringify({ spec: { schedule } }),
  ]);
  await until("PingSource sdewan-resync Ready", () => allReady(SYSTEM, "pingsources"), 60_000);
}

describe("Knative Eventing on a real node", () => {
  it("installs from its own config/ and the controller and webhook Pods turn Ready", async () => {
    const t = Date.now();
    await installKnative(world, build);
    measured(
      `Knative install (CRDs, core, IMC, MT broker) -> every Deployment Available: ${seconds(Date.now() - t)}`,
    );
    for (const app of ["eventing-controller", "eventing-webhook"]) {
      expect(await readyPods(world, KNATIVE_NAMESPACE, `app=${app}`)).toHaveLength(1);
    }
  }, 420_000);

  it("a Broker on the default in-memory channel turns Ready", async () => {
    await world.kubectl(["create", "namespace", "knative-smoke"]);
    await world.kubectl(
      ["apply", "-f", "-"],
      "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: default, namespace: knative-smoke}\n",
    );
    const took = await until(
      "Broker default Ready",
      () => allReady("knative-smoke", "brokers"),
      180_000,
    );
    measured(`Broker created -> Ready: ${seconds(took)}`);
    const channels = await world.getJson<{ items: Knative[] }>([
      "-n",
      "knative-smoke",
      "inmemorychannels",
    ]);
    expect(channels.items).toHaveLength(1);
    const broker = await world.getJson<Knative>(["-n", "knative-smoke", "broker", "default"]);
    expect(broker.status?.address?.url).toMatch(/^http:\/\/broker-ingress\.knative-eventing\.svc/);
  }, 240_000);

  it("installs manifests/knative-deployments as docs/deploy.md says: with no Serving, the Broker, Triggers and sources turn Ready", async () => {
    const t = Date.now();
    await installKnativeDeployments(world, build);
    await until("Broker sdewan Ready", () => allReady(SYSTEM, "brokers"), 180_000);
    await until("Triggers Ready", () => allReady(SYSTEM, "triggers"), 180_000);
    await until("ApiServerSources Ready", () => allReady(SYSTEM, "apiserversources"), 240_000);
    await until("PingSources Ready", () => allReady(SYSTEM, "pingsources"), 120_000);
    await until(`${SYSTEM} Available`, () => notAvailable(world, SYSTEM), 300_000);
    await until("mtping Available", () => notAvailable(world, KNATIVE_NAMESPACE), 120_000);
    measured(
      `kubectl apply -k manifests/knative-deployments -> Broker, Triggers, sources Ready, every Deployment Available: ${seconds(Date.now() - t)}`,
    );
    // Each Trigger delivers to its function's Service at its path, dead letters to the sink.
    const triggers = await world.getJson<{ items: Trigger[] }>(["-n", SYSTEM, "triggers"]);
    for (const trigger of triggers.items) {
      const fn = trigger.spec.subscriber.ref.name;
      expect([trigger.metadata.name, trigger.status?.subscriberUri]).toEqual([
        trigger.metadata.name,
        `http://${fn}.${SYSTEM}.svc.cluster.local/${fn}`,
      ]);
      if (trigger.spec.delivery.deadLetterSink === undefined) continue;
      expect([trigger.metadata.name, trigger.status?.deadLetterSinkUri]).toEqual([
        trigger.metadata.name,
        expect.stringMatching(
          /^http:\/\/sdewan-dead-letter\.sdewan-system\.svc\.cluster\.local\/?$/,
        ),
      ]);
    }
    // Knative's controller made one adapter Deployment per ApiServerSource.
    const sources = await world.getJson<{ items: Knative[] }>(["-n", SYSTEM, "apiserversources"]);
    const deployments = await world.getJson<{ items: Owned[] }>(["-n", SYSTEM, "deployments"]);
    const adapters = deployments.items.filter((d) =>
      d.metadata.ownerReferences?.some((o) => o.kind === "ApiServerSource"),
    );
    expect(adapters).toHaveLength(sources.items.length);
  }, 900_000);

  it("the samples converge on both CNF pods through ApiServerSource -> Broker -> Trigger", async () => {
    await applyFixtures(world);
    const t = Date.now();
    await applySamples(world);
    await waitFor(
      "samples in sync on both pods",
      async () => {
        const pending = await rulesNotInSync(world, NS);
        if (pending !== undefined) return pending;
        const [a, b] = await readyPods(world, NS, CNF);
        if (a === undefined || b === undefined) return "CNF pods not ready";
        const [heldA, heldB] = [
          await cnfHolds(world, NS, a.metadata.name),
          await cnfHolds(world, NS, b.metadata.name),
        ];
        onCnf = heldA.size;
        return heldA.size > 0 && [...heldA.keys()].sort().join() === [...heldB.keys()].sort().join()
          ? undefined
          : `pods differ: ${heldA.size} vs ${heldB.size}`;
      },
      180_000,
      500,
    );
    measured(
      `samples applied -> in sync on both CNF pods: ${seconds(Date.now() - t)} (${onCnf} items per pod)`,
    );
    expect(onCnf).toBeGreaterThanOrEqual(11);
  }, 300_000);

  it("event -> function latency through ApiServerSource -> Broker -> Trigger (20 rules, one at a time)", async () => {
    const latencies = await eventToFunctionMs(world, NS, 20);
    measured(
      `event -> function (rule created -> reconcile-rule reads it), Knative Broker: ${percentiles(latencies)}`,
    );
    // Where the slowest one waited: the deliveries reconcile-rule answered for it, and what the
    // Broker's filter logged about deliveries that never reached a function.
    const slowest = latencies.indexOf(Math.max(...latencies));
    const attempts = await functionAttempts(
      "reconcile-rule",
      `FirewallRule ${NS}/latency-${String(slowest).padStart(2, "0")}`,
    );
    const filterLog = await world.kubectl([
      "-n",
      KNATIVE_NAMESPACE,
      "logs",
      "deployment/mt-broker-filter",
    ]);
    const failedSends = filterLog.split("\n").filter((l) => /"level":"(error|warn)"/.test(l));
    measured(
      `event -> function, slowest (latency-${slowest}): reconcile-rule answered ${attempts.map((a) => a.outcome).join(", ") || "nothing"}; the filter logged ${failedSends.length} errors/warnings${failedSends.length > 0 ? `, last: ${failedSends.at(-1)?.slice(0, 400)}` : ""}`,
    );
    onCnf += 20;
    await waitFor(
      "latency rules on both pods",
      () => cnfPodsPending(world, NS, CNF, onCnf),
      120_000,
      500,
    );
  }, 300_000);

  it("a CNF outage longer than the retry budget: the Broker ignores Retry-After, holds back no other rule, dead-letters the event, and the real PingSource's resync heals the rule", async () => {
    // The shipped budget (14 retries, linear 8 s x n: 12-14 min) shortened on reconcile-rule's
    // Trigger so that it runs out in seconds: the same Broker and filter, 3 retries, 1 s x n.
    await world.kubectl([
      "-n",
      SYSTEM,
      "patch",
      "trigger",
      "reconcile-rule",
      "--type=merge",
      "-p",
      JSON.stringify({ spec: { delivery: { retry: 3, backoffDelay: "PT1S" } } }),
    ]);
    await until("Trigger reconcile-rule Ready", () => allReady(SYSTEM, "triggers"), 60_000);
    try {
      // Both CNF pods answer 503 to every firewall rule request (their readiness stays: a CNF that
      // is up and failing, not one without ready pods, which is answered 202 and spends no retry).
      const pods = await readyPods(world, NS, CNF);
      await simOnEach(pods, "create", "faults", {
        kind: "status",
        status: 503,
        collection: "firewall/rules",
        count: 100_000,
      });
      const t = Date.now();
      await createFirewallRule("outage", 3000);
      // A second rule of the kind created while the first one's event is being retried: its event
      // must not wait behind those retries (an ApiServerSource sends one event at a time).
      await waitFor(
        "reconcile-rule answered the outage rule",
        async () =>
          (await functionAttempts("reconcile-rule", `FirewallRule ${NS}/outage`)).length > 0
            ? undefined
            : "not yet",
        60_000,
        100,
      );
      const bystanderTail = await AuditTail.of(world, "now");
      const bystanderCreated = Date.now();
      await createFirewallRule("bystander", 3001);
      const dead = await waitForDeadLetter("FirewallRule", "outage", 120_000);
      measured(
        `outage: rule created -> its event dead-lettered (knativeerrorcode ${dead.code}): ${seconds(Date.now() - t)}`,
      );
      expect(dead.code).toBe("503");
      const bystanderRead = await firstRead(bystanderTail, `${NS}/bystander`, 200);
      measured(
        `outage: a rule created during its retries was read ${seconds(bystanderRead - bystanderCreated)} after its create, ${seconds(dead.at - bystanderRead)} before the outage's first event was dead-lettered`,
      );
      expect(bystanderRead).toBeLessThan(dead.at);
      // What the filter did with each 503 + Retry-After of the first event (one CloudEvent id).
      const attempts = await functionAttempts("reconcile-rule", `FirewallRule ${NS}/outage`);
      const first = attempts.filter((a) => a.correlationId === attempts[0]?.correlationId);
      const gaps = first.slice(1).map((a, i) => a.at - (first[i]?.at ?? a.at));
      const retryAfter = first[0]?.retryAfterSeconds ?? 0;
      measured(
        `outage: first event delivered ${first.length} times (retry 3), answers ${first.map((a) => a.outcome).join(", ")}, Retry-After ${retryAfter} s, gaps ${gaps.map((g) => `${(g / 1000).toFixed(1)} s`).join(", ")}`,
      );
      expect(first).toHaveLength(4);
      expect(retryAfter).toBeGreaterThanOrEqual(5);
      // The Broker retried on its own backoff, not after the Retry-After the function asked for.
      expect(gaps.filter((g) => g >= retryAfter * 1000)).toEqual([]);
      const failing = (n: string): boolean => n === "outage" || n === "bystander";
      expect(await rulesNotInSync(world, NS, failing)).toMatch(/2\/2 not in sync/);
      const spent =
        (await waitForEveryEventSpent("outage", 120_000)) +
        (await waitForEveryEventSpent("bystander", 120_000));
      measured(
        `outage: both rules' creations and the echoes of our writes to them, ${spent} events, all dead-lettered: ${seconds(Date.now() - t)}`,
      );
      expect(await rulesNotInSync(world, NS, failing)).toMatch(/2\/2 not in sync/);

      // The CNF back; the event is spent. The resync heals: the real PingSource's schedule brought
      // in from every 5 minutes to every 10 seconds for this test (the same adapter and Triggers).
      await simOnEach(pods, "delete", "faults");
      const healing = Date.now();
      await setResyncSchedule("*/10 * * * * *");
      await waitFor(
        "outage rules healed by the resync",
        async () =>
          (await rulesNotInSync(world, NS, failing)) ??
          (await cnfPodsPending(world, NS, CNF, onCnf + 2)),
        180_000,
        500,
      );
      const healed = Date.now();
      onCnf += 2;
      // What healed it: on-deployment-ready's resync, the PingSource's event through the Broker,
      // not a late redelivery of the rule's own event to reconcile-rule.
      const ping = (await functionLog("on-deployment-ready")).find(
        (a) => a.eventType === "dev.knative.sources.ping" && a.at >= healing,
      );
      if (ping === undefined || ping.at > healed) {
        // Say what healed it instead, so a failure names the path (function, event type, object).
        const handled = await handledBetween(
          ["on-deployment-ready", "reconcile-rule"],
          healing,
          healed,
        );
        throw new Error(`healed without a resync ping in between; handled: ${handled.join("; ")}`);
      }
      const redelivered = (await functionLog("reconcile-rule")).filter(
        (a) =>
          (a.object === `FirewallRule ${NS}/outage` ||
            a.object === `FirewallRule ${NS}/bystander`) &&
          a.at >= healing &&
          a.at < (ping?.at ?? healed),
      );
      expect(redelivered).toEqual([]);
      measured(`outage over -> healed by the PingSource resync: ${seconds(healed - healing)}`);
    } finally {
      // Back to a working CNF, the shipped schedule and budget for the scenarios after this one.
      await simOnEach(await readyPods(world, NS, CNF), "delete", "faults");
      await setResyncSchedule("*/5 * * * *");
      await world.kubectl([
        "-n",
        SYSTEM,
        "patch",
        "trigger",
        "reconcile-rule",
        "--type=merge",
        "-p",
        JSON.stringify({ spec: { delivery: { retry: 14, backoffDelay: "PT8S" } } }),
      ]);
      await until("Trigger reconcile-rule Ready", () => allReady(SYSTEM, "triggers"), 60_000);
    }
  }, 600_000);

  it("a burst of 300 rules converges behind the real Trigger backoff, nothing dead-lettered", async () => {
    const restartsBefore = await simRestarts(NS);
    const answeredBefore = await eventsByOutcome("reconcile-rule");
    const burst = Array.from(
      { length: 300 },
      (_, i) => `apiVersion: batch.sdewan.akraino.org/v1alpha1
kind: FirewallRule
metadata: {name: burst-${String(i).padStart(3, "0")}, labels: {sdewanPurpose: cnf-1}}
spec: {src: lan1, src_port: "${1000 + i}", proto: tcp, target: REJECT}
`,
    ).join("---\n");
    const audit = await AuditTail.of(world, "now");
    const t = Date.now();
    await world.kubectl(["-n", NS, "apply", "-f", "-"], burst);
    await waitFor(
      "burst converged",
      async () =>
        (await rulesNotInSync(world, NS, (n) => n.startsWith("burst-"))) ??
        (await cnfPodsPending(world, NS, CNF, onCnf + 300)),
      600_000,
      1_000,
    );
    onCnf += 300;
    const restarts = (await simRestarts(NS)) - restartsBefore;
    // Every delivery meanwhile (its metrics: the log rotates under a burst).
    const byOutcome = new Map<string, number>();
    for (const [outcome, n] of await eventsByOutcome("reconcile-rule")) {
      byOutcome.set(outcome, n - (answeredBefore.get(outcome) ?? 0));
    }
    measured(
      `300-rule burst -> all in sync on both pods: ${seconds(Date.now() - t)}; reconcile-rule answered ${[...byOutcome].map(([o, n]) => `${o} ${n}`).join(", ")}; CNF service restarts ${restarts} (both pods)`,
    );
    // What the burst cost the API server, by reconcile-rule, against the bench's floor of 3 per rule.
    await audit.read();
    const byVerb = countedBy(
      audit.requests.filter((r) => r.user === "sdewan-reconcile-rule"),
      (r) => `${r.verb} ${r.resource}`,
    );
    const total = byVerb.reduce((sum, [, n]) => sum + n, 0);
    measured(
      `300-rule burst: reconcile-rule made ${total} API requests, ${(total / 300).toFixed(2)} per rule (floor 3): ${listed(byVerb)}`,
    );
    const letters = await deadLetters();
    expect(letters.filter((l) => l.name.startsWith("burst-"))).toEqual([]);
  }, 720_000);

  it("at rest for 60 s: our identities read for the resyncs and write nothing", async () => {
    const requests = await atRestFor60s(world);
    const byUser = new Map<string, number>();
    for (const r of requests) byUser.set(r.user, (byUser.get(r.user) ?? 0) + 1);
    measured(
      `at rest 60 s: ${requests.length} API requests by our identities (${[...byUser].map(([u, n]) => `${u} ${n}`).join(", ")}), writes ${requests.filter(isWrite).length}; most: ${mostRequested(requests)}`,
    );
    expect(requests.filter(isWrite)).toEqual([]);
    // The heartbeat PingSource (every second) reaches clusterlink-peer-health through the Broker.
    expect(byUser.get("sdewan-clusterlink-peer-health") ?? 0).toBeGreaterThanOrEqual(30);
  }, 360_000);

  it("reports the memory Knative's Pods take (the kubelet's stats summary)", async () => {
    interface Summary {
      pods: {
        podRef: { name: string; namespace: string };
        memory?: { workingSetBytes?: number };
      }[];
    }
    const summary = JSON.parse(
      await world.kubectl(["get", "--raw", "/api/v1/nodes/sdewan-node/proxy/stats/summary"]),
    ) as Summary;
    const mib = (b: number): string => `${(b / 2 ** 20).toFixed(1)} MiB`;
    // Knative's: its namespace, and in ours the sources' adapters and the dead-letter sink.
    const isKnative = (pod: { name: string; namespace: string }): boolean =>
      pod.namespace === KNATIVE_NAMESPACE ||
      (pod.namespace === SYSTEM && /^(apiserversource-|sdewan-dead-letter-)/.test(pod.name));
    const totals = { knative: 0, functions: 0 };
    const lines: string[] = [];
    for (const pod of summary.pods) {
      if (![KNATIVE_NAMESPACE, SYSTEM].includes(pod.podRef.namespace)) continue;
      const bytes = pod.memory?.workingSetBytes ?? 0;
      totals[isKnative(pod.podRef) ? "knative" : "functions"] += bytes;
      lines.push(`${pod.podRef.name} ${mib(bytes)}`);
    }
    measured(
      `memory (working set): Knative's Pods ${mib(totals.knative)}, the functions' ${mib(totals.functions)}: ${lines.join(", ")}`,
    );
    expect(totals.knative).toBeGreaterThan(0);
  }, 60_000);
});
