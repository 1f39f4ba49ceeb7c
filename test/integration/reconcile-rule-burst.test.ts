// A burst of rules created at once, then deleted at once, delivered by the connector (its shipped
// delivery settings, Reference mode) to reconcile-rule served over HTTP with restarts paced as
// shipped (ADR 0007): the API requests of the create per rule against the floor (one read, one
// finalizer patch, one status patch per rule: 3), and mwan3 restarts per pod per burst
// (issue 28, section 1; ADR 0020).
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
import { SyncWorld } from "./sync-harness.js";
import { startTestConnector, type TestConnector } from "./connector-harness.js";
import { adminKubeConfig } from "./support/cluster.js";
import { waitUntil } from "./support/wait.js";

jest.setTimeout(180_000);

const PURPOSE = "burst";
const POLICIES = 6;
const RULES = 54;
/** The target: at most 1.5x the floor of 3 API requests per created rule. */
const TARGET_REQUESTS_PER_RULE = 4.5;
/** What ADR 0020 reaches (7.3 to 8.1 measured, 15.4 before), with room for load: a guard. */
const MAX_REQUESTS_PER_RULE = 10;
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

  beforeAll(async () => {
    world = await SyncWorld.create();
    // As the shipped manifests set it: a burst restarts each service a few times (ADR 0007).
    world.env["CNF_RESTART_MIN_INTERVAL_MS"] = "10000";
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    runtime = new Runtime({ logger: createLogger({ level: "silent" }) });
    server = await startServer(createCombinedApp([world.reconcileRule], runtime), runtime, {
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

  const apiRequests = async (): Promise<number> => {
    const metric = await runtime.metrics.registry.getSingleMetric("sdewan_api_calls_total")?.get();
    return (metric?.values ?? []).reduce((n, v) => n + v.value, 0);
  };

  /** Resolves once reconcile-rule has made no API request for 1.5 s. */
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
        return Date.now() - since >= 1500;
      },
      60_000,
    );
    return last;
  };

  const mwan3Restarts = (): number[] =>
    world.serviceRestarts(cnf).map((services) => services.filter((s) => s === "mwan3").length);

  const inSync = async (): Promise<boolean> => {
    const views = await Promise.all(ALL.map((r) => world.ruleView(r.kind, r.name)));
    return views.every((v) => v?.inSync === true && v.appliedCurrent === true);
  };

  /** API requests per rule of the create, once measured. */
  let createdPerRule: number | undefined;

  it("creates them restarting mwan3 at most 3 times per pod, with at most 10 API requests per rule", async () => {
    const before = await quiet();
    world.resetObservations();
    const limit = pLimit(16);
    await Promise.all(
      ALL.map((r) => limit(() => world.createRule(r.kind, r.name, PURPOSE, r.spec))),
    );
    await waitUntil("every rule in sync on both pods", inSync, 90_000);
    const requests = (await quiet()) - before;
    const restarts = mwan3Restarts();
    console.log(
      `burst create of ${ALL.length} rules: ${requests} API requests (${(requests / ALL.length).toFixed(2)} per rule, floor 3), mwan3 restarts per pod ${restarts.join(",")}`,
    );
    expect(world.holdings(cnf)).toEqual(
      cnf.pods.map(() => ({
        "mwan3/policies": ALL.filter((r) => r.kind === "Mwan3Policy")
          .map((r) => r.name)
          .sort(),
        "mwan3/rules": ALL.filter((r) => r.kind === "Mwan3Rule")
          .map((r) => r.name)
          .sort(),
      })),
    );
    for (const count of restarts) expect(count).toBeLessThanOrEqual(MAX_RESTARTS_PER_POD);
    createdPerRule = requests / ALL.length;
    expect(createdPerRule).toBeLessThanOrEqual(MAX_REQUESTS_PER_RULE);
  });

  // Not met yet (issue 28, section 1; ADR 0020 says what stands in the way): flip to `it` once
  // it passes.
  it.failing("creates them with at most 1.5x the floor of API requests per rule", () => {
    expect(createdPerRule).toBeLessThanOrEqual(TARGET_REQUESTS_PER_RULE);
  });

  it("deletes them all at once restarting mwan3 at most 3 times per pod", async () => {
    await quiet();
    world.resetObservations();
    const limit = pLimit(16);
    await Promise.all(ALL.map((r) => limit(() => world.deleteRule(r.kind, r.name))));
    await waitUntil("every rule gone", async () => (await world.listRules()).length === 0, 90_000);
    await quiet();
    const restarts = mwan3Restarts();
    console.log(
      `burst delete of ${ALL.length} rules: mwan3 restarts per pod ${restarts.join(",")}`,
    );
    expect(world.holdings(cnf)).toEqual(cnf.pods.map(() => ({})));
    for (const count of restarts) expect(count).toBeLessThanOrEqual(MAX_RESTARTS_PER_POD);
  });
});
