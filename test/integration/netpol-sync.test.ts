// network-policy-sync against the real API server: a default-deny policy plus one allow compiled
// into stored tables, packets judged from those tables alone, events without memory (duplicates
// write nothing, a relabel moves a Pod out of an address group, deletions remove tables), and
// two instances racing on duplicated, shuffled events ending where one full recompute ends.
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { NODE_IP } from "../../dev/control-plane/addresses.js";
import { checkPacket, formatDecision } from "../../dev/netpol/check.js";
import { runNetpolDemo } from "../../dev/netpol/demo.js";
import type { Outcome } from "../../shared/core/outcome.js";
import type { IntakeEvent } from "../../shared/events/types.js";
import {
  EVENTS,
  NETPOL_ENDPOINTS,
  NETPOL_PEER_SETS,
  createKubeClient,
} from "../../shared/kube/index.js";
import { kubeNetpolStore, type Packet } from "../../shared/netpol/index.js";
import { NetpolWorld } from "./netpol-harness.js";
import { adminKubeConfig, clusterInfo } from "./support/cluster.js";
import { StaleCache } from "./support/stale-cache.js";

const world = new NetpolWorld();
// A /24 of the pod range per run (netpol-edges.test.ts takes 150-199): peer addresses must not
// collide with other files' Pods.
const net = `100.64.${200 + (parseInt(world.run, 16) % 50)}`;

const ingress = (ns: string, pod: string, peerIP: string, port: number): Packet => ({
  namespace: ns,
  pod,
  direction: "ingress",
  peerIP,
  protocol: "TCP",
  port,
});

async function resourceVersion(
  type: typeof NETPOL_ENDPOINTS,
  namespace: string,
  name: string,
): Promise<string | undefined> {
  return (await world.kube.get(type, { namespace, name }))?.metadata.resourceVersion;
}

/** Redelivers like the broker until the handler is done (a lost race says retry). */
async function deliver(event: IntakeEvent, fn = world.fn): Promise<Outcome> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const outcome = await world.send(event, fn);
    if (outcome.kind !== "retry" || Date.now() > deadline) return outcome;
  }
}

describe("a default deny plus one allow, judged from the stored tables alone", () => {
  let ns = "";
  const [web, client, other] = [`${net}.1`, `${net}.2`, `${net}.3`];

  beforeAll(async () => {
    ns = await world.namespace("shop");
    await world.pod(ns, "web", { app: "web" }, { ip: web, ports: [{ name: "http", port: 8080 }] });
    await world.pod(ns, "client", { role: "client" }, { ip: client });
    await world.pod(ns, "other", { role: "other" }, { ip: other });
    await world.policy(ns, "default-deny", { podSelector: {}, policyTypes: ["Ingress"] });
    await world.policy(ns, "web-from-clients", {
      podSelector: { matchLabels: { app: "web" } },
      ingress: [
        { from: [{ podSelector: { matchLabels: { role: "client" } } }], ports: [{ port: "http" }] },
      ],
    });
    await deliver(world.policyEvent(ns, "default-deny", "add"));
    await deliver(world.policyEvent(ns, "web-from-clients", "add"));
  }, 30_000);

  it("lets the client reach web on its named port, and nothing else in", async () => {
    expect(await world.allows(ingress(ns, "web", client, 8080))).toBe(true);
    expect(await world.allows(ingress(ns, "web", client, 8081))).toBe(false);
    expect(await world.allows(ingress(ns, "web", other, 8080))).toBe(false);
    expect(await world.allows(ingress(ns, "client", other, 80))).toBe(false);
    expect(await world.allows(ingress(ns, "web", NODE_IP, 8080))).toBe(true);
  });

  it("`netpol check` answers from the stored tables and names the rule bits that allowed", async () => {
    const allowed = ingress(ns, "web", client, 8080);
    expect(formatDecision(allowed, await checkPacket(world.kube, allowed))).toBe(
      `allow ${ns}/web ingress from ${client} TCP/8080 (allowed by rules: ${ns}:web-from-clients_ingress_0)`,
    );
    const run = promisify(execFile);
    const args = [
      "--import",
      "tsx",
      "dev/netpol/main.ts",
      "check",
      `${ns}/web`,
      "ingress",
      other,
      "tcp",
      "8080",
    ];
    const denied = await run(process.execPath, args, {
      env: { ...process.env, KUBECONFIG: clusterInfo().kubeconfigPath },
    }).catch((error: { code: number; stdout: string }) => error);
    expect(denied).toMatchObject({
      code: 1,
      stdout: `deny ${ns}/web ingress from ${other} TCP/8080 (no rule allows it)\n`,
    });
  });

  it("stores one table per selected Pod and one peer set per policy", async () => {
    const { endpoints, peerSets } = await world.tables(ns);
    const names = (objects: unknown[]) =>
      objects.map((o) => (o as { metadata: { name: string } }).metadata.name).sort();
    expect(names(endpoints)).toEqual(["client", "other", "web"]);
    expect(names(peerSets)).toEqual(["default-deny", "web-from-clients"]);
  });

  it("writes nothing for duplicated events", async () => {
    const before = await world.tableContents(ns);
    const versions = await resourceVersion(NETPOL_ENDPOINTS, ns, "web");
    const outcome = await deliver(world.policyEvent(ns, "web-from-clients"));
    const again = await deliver(world.podEvent(ns, "client"));
    for (const o of [outcome, again]) {
      expect(o.kind).toBe("done");
      expect(o.kind === "done" ? o.result : "").toMatch(/^unchanged/);
    }
    expect(await resourceVersion(NETPOL_ENDPOINTS, ns, "web")).toBe(versions);
    expect(await world.tableContents(ns)).toBe(before);
  });

  it("a relabelled client loses access after its Pod event; only the peer set is rewritten", async () => {
    const webVersion = await resourceVersion(NETPOL_ENDPOINTS, ns, "web");
    const setVersion = await resourceVersion(NETPOL_PEER_SETS, ns, "web-from-clients");
    await world.relabelPod(ns, "client", { role: "visitor" });
    world.calls.api = 0;
    const outcome = await deliver(world.podEvent(ns, "client"));
    expect(outcome.kind === "done" ? outcome.result : outcome).toMatch(/the Pod's entry only/);
    // Pod, Namespace, policies; endpoint table, peer sets by index and of an older version; the
    // same three again; a write.
    expect(world.calls.api).toBeLessThanOrEqual(10);
    expect(await world.allows(ingress(ns, "web", client, 8080))).toBe(false);
    expect(await resourceVersion(NETPOL_ENDPOINTS, ns, "web")).toBe(webVersion);
    expect(await resourceVersion(NETPOL_PEER_SETS, ns, "web-from-clients")).not.toBe(setVersion);
  });

  it("never deletes a table another instance rewrote after it was read", async () => {
    const store = kubeNetpolStore(world.kube);
    const read = await store.getTable("endpoint", ns, "other");
    if (read === null) throw new Error("no table for other");
    // Another instance rewrites the table after our read (its labels changed, say).
    await world.kube.mergePatch(
      NETPOL_ENDPOINTS,
      { namespace: ns, name: "other" },
      { metadata: { annotations: { "example.invalid/rewritten": "yes" } } },
    );
    await expect(store.deleteTable(read)).rejects.toMatchObject({ code: "conflict" });
    expect(await world.kube.get(NETPOL_ENDPOINTS, { namespace: ns, name: "other" })).toBeDefined();
    const fresh = await store.getTable("endpoint", ns, "other");
    if (fresh === null) throw new Error("the table went");
    await store.deleteTable(fresh);
    expect(
      await world.kube.get(NETPOL_ENDPOINTS, { namespace: ns, name: "other" }),
    ).toBeUndefined();
    // Gone already is not an error; the next event rewrites the table.
    await store.deleteTable(fresh);
    expect((await deliver(world.podEvent(ns, "other"))).kind).toBe("done");
    expect(await world.kube.get(NETPOL_ENDPOINTS, { namespace: ns, name: "other" })).toBeDefined();
  });

  it("a deleted Pod's table goes with its Pod event", async () => {
    await world.deletePod(ns, "other");
    expect((await deliver(world.podEvent(ns, "other", "delete"))).kind).toBe("done");
    expect(
      await world.kube.get(NETPOL_ENDPOINTS, { namespace: ns, name: "other" }),
    ).toBeUndefined();
  });

  it("deleting the allow policy removes its peer set; web stays isolated by the default deny", async () => {
    await world.relabelPod(ns, "client", { role: "client" });
    await deliver(world.podEvent(ns, "client"));
    expect(await world.allows(ingress(ns, "web", client, 8080))).toBe(true);
    await world.deletePolicy(ns, "web-from-clients");
    expect((await deliver(world.policyEvent(ns, "web-from-clients", "delete"))).kind).toBe("done");
    expect(
      await world.kube.get(NETPOL_PEER_SETS, { namespace: ns, name: "web-from-clients" }),
    ).toBeUndefined();
    expect(await world.allows(ingress(ns, "web", client, 8080))).toBe(false);
  });
});

describe("a Pod event whose watch-cache read is stale (ADR 0004, addendum)", () => {
  it("writes at the stale version, meets the API server's 409, re-reads consistently and ends right", async () => {
    const ns = await world.namespace("stale");
    const [web, client] = [`${net}.21`, `${net}.22`];
    await world.pod(ns, "web", { app: "web" }, { ip: web });
    await world.pod(ns, "client", { role: "client" }, { ip: client });
    await world.policy(ns, "web-from-clients", {
      podSelector: { matchLabels: { app: "web" } },
      ingress: [{ from: [{ podSelector: { matchLabels: { role: "client" } } }] }],
    });
    await deliver(world.policyEvent(ns, "web-from-clients", "add"));
    expect(await world.allows(ingress(ns, "web", client, 80))).toBe(true);
    // The cache keeps the peer set as it is now; then someone writes it (a write the cache has
    // not seen yet) and the client is relabelled out of the policy's peers.
    const stale = new StaleCache(NETPOL_PEER_SETS);
    stale.freeze(await world.kube.list(NETPOL_PEER_SETS, { namespace: ns }));
    await world.kube.mergePatch(
      NETPOL_PEER_SETS,
      { namespace: ns, name: "web-from-clients" },
      { metadata: { annotations: { "example.invalid/later-write": "yes" } } },
    );
    await world.relabelPod(ns, "client", { role: "visitor" });
    const fn = world.instance(stale.client(createKubeClient(adminKubeConfig())));
    const outcome = await world.send(world.podEvent(ns, "client"), fn);
    expect(outcome).toMatchObject({
      kind: "done",
      result: expect.stringMatching(/1 replaced/) as unknown,
    });
    // Each attempt lists peer sets by index and of an older version: the first from the cache.
    expect(stale.seen).toEqual({ cachedLists: 2, consistentLists: 2, conflicts: 1 });
    expect(await world.allows(ingress(ns, "web", client, 80))).toBe(false);
  });
});

describe("an egress named port resolves on each destination Pod", () => {
  it("a new destination's Pod event gives the labelled source table a bit for its port", async () => {
    const ns = await world.namespace("named");
    const [app, db1, db2] = [`${net}.20`, `${net}.21`, `${net}.22`];
    await world.pod(ns, "app", { app: "app" }, { ip: app });
    await world.pod(ns, "db-1", { app: "db" }, { ip: db1, ports: [{ name: "sql", port: 5432 }] });
    await world.policy(ns, "app-to-sql", {
      podSelector: { matchLabels: { app: "app" } },
      policyTypes: ["Egress"],
      egress: [{ to: [{ podSelector: { matchLabels: { app: "db" } } }], ports: [{ port: "sql" }] }],
    });
    await deliver(world.policyEvent(ns, "app-to-sql", "add"));
    const toDb = (peerIP: string, port: number): Packet => ({
      namespace: ns,
      pod: "app",
      direction: "egress",
      peerIP,
      protocol: "TCP",
      port,
    });
    expect(await world.allows(toDb(db1, 5432))).toBe(true);

    await world.pod(ns, "db-2", { app: "db" }, { ip: db2, ports: [{ name: "sql", port: 6432 }] });
    expect(await world.allows(toDb(db2, 6432))).toBe(false); // no event yet: tables unchanged
    expect((await deliver(world.podEvent(ns, "db-2", "add"))).kind).toBe("done");
    expect(await world.allows(toDb(db2, 6432))).toBe(true);
    expect(await world.allows(toDb(db2, 5432))).toBe(false);
    expect(await world.allows(toDb(db1, 6432))).toBe(false);
  });
});

/** A small seeded PRNG (mulberry32), so a failing order can be replayed. */
function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

describe("statelessness under races", () => {
  it("two instances fed duplicated, shuffled events end with the tables of one full recompute", async () => {
    const ns = await world.namespace("race", { tier: "race" });
    const pods = ["a", "b", "c", "d"];
    for (const [i, name] of pods.entries()) {
      await world.pod(
        ns,
        name,
        { app: i % 2 === 0 ? "api" : "db" },
        { ip: `${net}.${10 + i}`, ports: [{ name: "sql", port: 5432 + i }] },
      );
    }
    await world.policy(ns, "api-isolated", {
      podSelector: { matchLabels: { app: "api" } },
      policyTypes: ["Ingress", "Egress"],
      ingress: [
        { from: [{ namespaceSelector: { matchLabels: { tier: "race" } } }], ports: [{ port: 80 }] },
      ],
      egress: [{ to: [{ podSelector: { matchLabels: { app: "db" } } }], ports: [{ port: "sql" }] }],
    });
    await world.policy(ns, "db-deny", { podSelector: { matchLabels: { app: "db" } } });
    // Changes land while the events for them are still in flight.
    await world.relabelPod(ns, "c", { app: "db" });
    await world.deletePod(ns, "d");
    const events = [
      world.policyEvent(ns, "api-isolated", "add"),
      world.policyEvent(ns, "db-deny", "add"),
      ...pods.map((p) => world.podEvent(ns, p)),
      world.namespaceEvent(ns),
    ];
    const random = prng(parseInt(world.run, 16));
    const deliveries = [...events, ...events].sort(() => random() - 0.5);
    const [first, second] = [world.instance(), world.instance()];
    const outcomes = await Promise.all(
      deliveries.map((event, i) => deliver(event, i % 2 === 0 ? first : second)),
    );
    expect(outcomes.filter((o) => o.kind !== "done")).toEqual([]);
    const raced = await world.tableContents(ns);

    // One full recompute from nothing.
    const { endpoints, peerSets } = await world.tables(ns);
    for (const o of [...endpoints, ...peerSets]) {
      const { kind, metadata } = o as { kind: string; metadata: { name: string } };
      const type = kind === "NetworkPolicyEndpoint" ? NETPOL_ENDPOINTS : NETPOL_PEER_SETS;
      await world.kube.delete(type, { namespace: ns, name: metadata.name });
    }
    expect((await deliver(world.resyncEvent(), world.instance())).kind).toBe("done");
    expect(await world.tableContents(ns)).toBe(raced);
    expect(JSON.parse(raced)).toMatchObject({
      endpoints: [{ name: "a" }, { name: "b" }, { name: "c" }],
      peerSets: [{ name: "api-isolated" }, { name: "db-deny" }],
    });
  }, 60_000);
});

describe("Kubernetes Events on the Pods and policies whose tables change as an operator must see", () => {
  interface RecordedEvent {
    reason: string;
    type: string;
    note: string;
    reportingController: string;
    regarding: { kind: string; name: string };
    series?: { count: number };
  }

  async function eventsIn(namespace: string): Promise<RecordedEvent[]> {
    const listed = await world.kube.list(EVENTS, { namespace });
    return (listed as unknown as RecordedEvent[]).sort((a, b) =>
      `${a.regarding.name}/${a.reason}` < `${b.regarding.name}/${b.reason}` ? -1 : 1,
    );
  }

  const summary = (events: RecordedEvent[]) =>
    events.map((e) => `${e.regarding.kind} ${e.regarding.name} ${e.type} ${e.reason}`);

  it("one Event per transition: tables written, fail closed and its repair, tables removed", async () => {
    const ns = await world.namespace("events");
    await world.pod(ns, "api", { app: "api" }, { ip: `${net}.40` });
    await world.policy(ns, "api-deny", { podSelector: { matchLabels: { app: "api" } } });
    // Delivered twice, as a broker may: the second writes nothing and says nothing.
    await deliver(world.policyEvent(ns, "api-deny", "add"));
    await deliver(world.policyEvent(ns, "api-deny", "add"));
    expect(summary(await eventsIn(ns))).toEqual(["Pod api Normal EndpointTablesWritten"]);
    const [written] = await eventsIn(ns);
    expect(written?.reportingController).toBe("sdewan.akraino.org/network-policy-sync");
    expect(written?.series).toBeUndefined();

    // 65 ingress rules for one Pod: past the datapath's 64 bits, ingress fails closed.
    const rules = Array.from({ length: 65 }, (_, i) => ({ ports: [{ port: 1000 + i }] }));
    await world.policy(ns, "too-many", {
      podSelector: { matchLabels: { app: "api" } },
      ingress: rules,
    });
    await deliver(world.policyEvent(ns, "too-many", "add"));
    await deliver(world.policyEvent(ns, "too-many", "update"));
    expect(summary(await eventsIn(ns))).toEqual([
      "Pod api Normal EndpointTablesWritten",
      "Pod api Warning FailClosed",
      "NetworkPolicy too-many Warning FailClosed",
    ]);
    const failClosed = (await eventsIn(ns)).find(
      (e) => e.regarding.kind === "Pod" && e.type === "Warning",
    );
    expect(failClosed?.note).toMatch(/65 ingress rule bits exceed the datapath's 64/);

    await world.deletePolicy(ns, "too-many");
    await deliver(world.policyEvent(ns, "too-many", "delete"));
    await world.relabelPod(ns, "api", { app: "web" });
    await deliver(world.podEvent(ns, "api"));
    expect(summary(await eventsIn(ns))).toEqual([
      "Pod api Normal EndpointTablesRemoved",
      "Pod api Normal EndpointTablesWritten",
      "Pod api Warning FailClosed",
      "Pod api Normal ProblemsResolved",
      "NetworkPolicy too-many Warning FailClosed",
    ]);
  }, 60_000);
});

describe("`npm run netpol -- demo`", () => {
  it("sets up a default deny plus one allow, runs the function, and prints check answers", async () => {
    const lines = await runNetpolDemo(world.kube, world.name("netpol-demo"));
    expect(lines.slice(0, 2)).toEqual([
      expect.stringMatching(
        /^network-policy-sync default-deny: done tables written: 4 created, 0 replaced, 0 deleted /,
      ),
      expect.stringMatching(/^network-policy-sync web-from-clients: done tables written: /),
    ]);
    expect(lines.slice(2).map((l) => l.replace(/ \(.*$/, ""))).toEqual([
      expect.stringMatching(
        /^netpol check: allow .*\/web ingress from 100\.64\.250\.11 TCP\/8080$/,
      ),
      expect.stringMatching(/^netpol check: deny .*\/web ingress from 100\.64\.250\.12 TCP\/8080$/),
      expect.stringMatching(/^netpol check: deny .*\/web ingress from 100\.64\.250\.11 TCP\/9090$/),
      expect.stringMatching(
        /^netpol check: deny .*\/client ingress from 100\.64\.250\.10 TCP\/8080$/,
      ),
      expect.stringMatching(/^netpol check: allow .*\/web egress to 100\.64\.250\.12 UDP\/53$/),
    ]);
    // Run again on the same namespace: nothing to create, nothing written.
    const again = await runNetpolDemo(world.kube, world.name("netpol-demo"));
    expect(again.slice(0, 2)).toEqual([
      expect.stringMatching(/^network-policy-sync default-deny: done unchanged/),
      expect.stringMatching(/^network-policy-sync web-from-clients: done unchanged/),
    ]);
  }, 60_000);
});
