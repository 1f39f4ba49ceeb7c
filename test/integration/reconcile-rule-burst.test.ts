// A burst of rules created at once, then deleted at once, delivered by the connector (its shipped
// delivery settings, Reference mode) to reconcile-rule served over HTTP with restarts paced as
// shipped (ADR 0007): the API requests of the create per rule against the floor (one read, one
// finalizer patch, one status patch per rule: 3), and mwan3 restarts per pod per burst
// (issue 28, section 1; ADRs 0020 and 0021).
import { jest } from "@jest/globals";
import pLimit from "p-limit";
import type { Cnf } from "../../dev/world/index.js";
import {
  createCombinedApp,
  createLogger,
  Runtime,
  startServer,
  type RunningServer,
} from "../../shared/runtime/index.js";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import type { KubeClient } from "../../shared/kube/index.js";
import { SyncWorld } from "./sync-harness.js";
import { startTestConnector, type TestConnector } from "./connector-harness.js";
import { adminKubeConfig } from "./support/cluster.js";
import { waitUntil } from "./support/wait.js";

jest.setTimeout(180_000);

const PURPOSE = "burst";
const POLICIES = 6;
const RULES = 54;
/**
 * A guard with room for load: 4.4 to 4.8 measured (7.3 to 8.1 before, ADR 0020). The issue's
 * target, 1.5x the floor (4.5), is judged on the bench's 300-rule row, where the shared lists and
 * read-backs spread over more rules (ADR 0021); this burst of 54 pins the rule reads instead.
 */
const MAX_REQUESTS_PER_RULE = 6;
/**
 * Reads of a rule per created rule (ADR 0021): its event and its redelivery, which finds the
 * status the delivery that paid its restart wrote; read-backs shared. 4 before: the event, the
 * read-back after its deferred write, the redelivery, the echo of the redelivery's status write.
 */
const MAX_RULE_READS_PER_RULE = 2.5;
/**
 * Reads of a rule per deleted rule: the event of its deletion and a shared read-back; the
 * redelivery that finds it gone reads nothing when the watch said so (action delete, ADR 0021).
 */
const MAX_DELETE_READS_PER_RULE = 1.5;
const MAX_RESTARTS_PER_POD = 3;

const policy = (i: number) => ({
  kind: "Mwan3Policy",
  name: `pol${i}`,
  spec: { members: [{ network: "ovn-net1", metric: 2, weight: 2 }] },
});
const rule = (i: number) => ({
  kind: "Mwan3Rule",
  name: `rule${i}`,
  spec: {
    policy: `pol${i % POLICIES}`,
    src_ip: `198.51.0.${i + 1}`,
    src_port: "1024",
    dest_ip: "0.0.0.0/0",
    dest_port: String(2000 + i),
    proto: "tcp",
    family: "ipv4",
  },
});
const ALL = [
  ...Array.from({ length: POLICIES }, (_, i) => policy(i)),
  ...Array.from({ length: RULES }, (_, i) => rule(i)),
];

describe("a burst of rule changes delivered by the connector", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let runtime: Runtime;
  let server: RunningServer;
  let connector: TestConnector;
  /** GETs and LISTs of rule kinds reconcile-rule made, counted by the kube it was given. */
  const ruleReads = { n: 0 };

  beforeAll(async () => {
    world = await SyncWorld.create();
    // As the shipped manifests set it: a burst restarts each service a few times (ADR 0007).
    world.env["CNF_RESTART_MIN_INTERVAL_MS"] = "10000";
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    runtime = new Runtime({ logger: createLogger({ level: "silent" }) });
    const reconcileRule = createReconcileRule({
      kube: () => countingRuleReads(world.kube),
      env: world.env,
    });
    server = await startServer(createCombinedApp([reconcileRule], runtime), runtime, {
      port: 0,
      host: "127.0.0.1",
    });
    const resources = ["Mwan3Policy", "Mwan3Rule"].map((kind) => ({
      apiVersion: "batch.sdewan.akraino.org/v1alpha1",
      kind,
      selector: `sdewanPurpose=${PURPOSE}`,
      namespaces: [world.namespace],
    }));
    connector = await startTestConnector(
      {
        // The connector's own delivery defaults, as the bench's peer rows run it.
        delivery: {},
        routes: [{ name: "reconcile-rule", url: `${server.url}/reconcile-rule`, resources }],
      },
      adminKubeConfig(),
    );
    await connector.connector.whenReady();
  });

  afterAll(async () => {
    await connector?.stop();
    await server?.close();
    await world?.close();
  });

  /** `kube`, counting its reads of rule kinds into ruleReads. */
  const countingRuleReads = (kube: KubeClient): KubeClient =>
    new Proxy(kube, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== "function") return value;
        const method = value as (...args: unknown[]) => unknown;
        // Each event's client (counting its calls) counts its rule reads too.
        if (property === "withCalls") {
          return (...args: unknown[]) =>
            countingRuleReads(method.apply(target, args) as KubeClient);
        }
        if (property !== "get" && property !== "list") return method.bind(target);
        return (type: { kind: string }, ...rest: unknown[]) => {
          if (ALL.some((r) => r.kind === type.kind)) ruleReads.n += 1;
          return method.call(target, type, ...rest);
        };
      },
    });

  const apiRequests = async (): Promise<number> => {
    const metric = await runtime.metrics.registry.getSingleMetric("sdewan_api_calls_total")?.get();
    return (metric?.values ?? []).reduce((n, v) => n + v.value, 0);
  };

  /** Events the connector still owes reconcile-rule: waiting (retries included) or in flight. */
  const owed = async (): Promise<number> => {
    const metric = await connector.connector.metrics.registry
      .getSingleMetric("sdewan_connector_queue_depth")
      ?.get();
    return (metric?.values ?? []).reduce((n, v) => n + v.value, 0);
  };

  /**
   * Resolves once the connector owes no event (a deferred rule's redelivery is owed until it
   * is delivered) and reconcile-rule has made no API request for 1.5 s.
   */
  const quiet = async (): Promise<number> => {
    let last = await apiRequests();
    let since = Date.now();
    await waitUntil(
      "reconcile-rule quiet",
      async () => {
        const now = await apiRequests();
        if (now !== last) {
          last = now;
          since = Date.now();
        }
        return Date.now() - since >= 1500 && (await owed()) === 0;
      },
      60_000,
    );
    return last;
  };

  const mwan3Restarts = (): number[] =>
    world.serviceRestarts(cnf).map((services) => services.filter((s) => s === "mwan3").length);

  const inSync =
    (which: readonly { kind: string; name: string }[]) => async (): Promise<boolean> => {
      const views = await Promise.all(which.map((r) => world.ruleView(r.kind, r.name)));
      return views.every((v) => v?.inSync === true && v.appliedCurrent === true);
    };

  it("creates them restarting mwan3 at most 3 times per pod, with at most 6 API requests per rule", async () => {
    // The policies first: a rule delivered before its policy is on the CNF fails and says so in
    // its status, writes the bench's mixed row counts; this burst counts what a rule costs.
    const policies = ALL.filter((r) => r.kind === "Mwan3Policy");
    await Promise.all(policies.map((r) => world.createRule(r.kind, r.name, PURPOSE, r.spec)));
    await waitUntil("the policies in sync", inSync(policies), 90_000);
    const before = await quiet();
    const readsBefore = ruleReads.n;
    world.resetObservations();
    const rules = ALL.filter((r) => r.kind === "Mwan3Rule");
    const limit = pLimit(16);
    await Promise.all(
      rules.map((r) => limit(() => world.createRule(r.kind, r.name, PURPOSE, r.spec))),
    );
    await waitUntil("every rule in sync on both pods", inSync(ALL), 90_000);
    const requests = (await quiet()) - before;
    const reads = ruleReads.n - readsBefore;
    const restarts = mwan3Restarts();
    console.log(
      `burst create of ${rules.length} rules: ${requests} API requests (${(requests / rules.length).toFixed(2)} per rule, floor 3), ${reads} rule reads, mwan3 restarts per pod ${restarts.join(",")}`,
    );
    expect(world.holdings(cnf)).toEqual(
      cnf.pods.map(() => ({
        "mwan3/policies": policies.map((r) => r.name).sort(),
        "mwan3/rules": rules.map((r) => r.name).sort(),
      })),
    );
    for (const count of restarts) expect(count).toBeLessThanOrEqual(MAX_RESTARTS_PER_POD);
    expect(reads / rules.length).toBeLessThanOrEqual(MAX_RULE_READS_PER_RULE);
    expect(requests / rules.length).toBeLessThanOrEqual(MAX_REQUESTS_PER_RULE);
  });

  it("deletes them all at once restarting mwan3 at most 3 times per pod, reading no rule the watch saw go", async () => {
    const before = await quiet();
    const readsBefore = ruleReads.n;
    world.resetObservations();
    const limit = pLimit(16);
    await Promise.all(ALL.map((r) => limit(() => world.deleteRule(r.kind, r.name))));
    await waitUntil("every rule gone", async () => (await world.listRules()).length === 0, 90_000);
    const requests = (await quiet()) - before;
    const reads = ruleReads.n - readsBefore;
    const restarts = mwan3Restarts();
    console.log(
      `burst delete of ${ALL.length} rules: ${requests} API requests (${(requests / ALL.length).toFixed(2)} per rule, floor 2), ${reads} rule reads, mwan3 restarts per pod ${restarts.join(",")}`,
    );
    expect(world.holdings(cnf)).toEqual(cnf.pods.map(() => ({})));
    for (const count of restarts) expect(count).toBeLessThanOrEqual(MAX_RESTARTS_PER_POD);
    expect(reads / ALL.length).toBeLessThanOrEqual(MAX_DELETE_READS_PER_RULE);
  });
});
