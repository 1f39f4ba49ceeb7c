// One bad object never breaks the others (issue 24, section 3), for the ClusterLink functions'
// resyncs: an object that cannot be handled is reported on itself (a condition where its status
// can be written, an Event, a log line naming it) and skipped; the other objects converge, and
// the resync is answered 202, never 500.
//
// The bad objects are what a cluster really holds with the webhook down or a policy in force: an
// Import named `my.db` (a valid object name, not a valid Service name), stored before the CRD's
// name rule existed (support/unvalidated.ts); objects whose writes a ValidatingAdmissionPolicy
// refuses (support/refuse-writes.ts).
import {
  importLabels,
  LEASED_PORT_ANNOTATION,
  systemServiceName,
} from "../../shared/clusterlink/index.js";
import { PeerGatewayFleet } from "../../dev/peer-gateway-sim/index.js";
import { createClusterLinkPeerHealth } from "../../functions/clusterlink-peer-health/index.js";
import {
  clusterLinkResource,
  EVENTS,
  SERVICES,
  type KubeClient,
  type KubeObject,
} from "../../shared/kube/index.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import { ClusterLinkWorld, DEFAULT_PEER, EXPORTS, IMPORTS } from "./clusterlink-harness.js";
import { identityFrom } from "./support/identity.js";
import { refuseWrites } from "./support/refuse-writes.js";
import { storeUnvalidated } from "./support/unvalidated.js";

const world = new ClusterLinkWorld();
const CL = world.clNamespace;
/** Each function runs with exactly its manifests/rbac role: what it reports, it may write. */
let importer: EventFunction;
let exporter: EventFunction;
let peerHealthKube: KubeClient;

beforeAll(async () => {
  await world.setUp();
  importer = world.instance("import", (await identityFrom("clusterlink-import.yaml")).kube);
  exporter = world.instance("export", (await identityFrom("clusterlink-export.yaml")).kube);
  peerHealthKube = (await identityFrom("clusterlink-peer-health.yaml")).kube;
});

interface Recorded extends KubeObject {
  reason?: string;
  note?: string;
  type?: string;
  regarding?: { kind?: string; name?: string };
}

async function eventsOn(namespace: string, kind: string, name: string): Promise<Recorded[]> {
  const all = (await world.kube.list(EVENTS, { namespace })) as Recorded[];
  return all.filter((e) => e.regarding?.kind === kind && e.regarding.name === name);
}

const importConditions = (ns: string, name: string) => world.conditions(IMPORTS, ns, name);

describe("clusterlink-import: an Import named my.db (not a Service name) stored with the webhook down", () => {
  let ns: string;
  /** A port it held from before (spec.targetPort with our annotation): it must be released. */
  const heldPort = 40_000 + Math.floor(Math.random() * 9_000);

  beforeAll(async () => {
    ns = await world.namespace("badname");
    await world.importOf(ns, "db", { port: 5432 });
    await storeUnvalidated("imports", {
      apiVersion: "clusterlink.net/v1alpha1",
      kind: "Import",
      metadata: {
        name: "my.db",
        namespace: ns,
        annotations: { [LEASED_PORT_ANNOTATION]: String(heldPort) },
      },
      spec: {
        port: 5432,
        targetPort: heldPort,
        lbScheme: "round-robin",
        sources: [{ peer: DEFAULT_PEER, exportName: "db", exportNamespace: "data" }],
      },
    });
    // What an Import whose delete was lost left behind: the resync's sweep must still run.
    await world.kube.create(SERVICES, {
      metadata: {
        name: "gone",
        namespace: ns,
        labels: importLabels({ namespace: ns, name: "gone" }),
      },
      spec: { type: "ExternalName", externalName: "gone.example" },
    });
  });

  it("the resync answers 202: the good Import converges, the orphan is swept, my.db is Stalled", async () => {
    expect(await world.resync(importer)).toMatchObject({ kind: "done" });
    expect((await importConditions(ns, "db"))["Ready"]).toMatchObject({ status: "True" });
    expect(await world.getService(ns, "db")).toBeDefined();
    expect(await world.getService(ns, "gone")).toBeUndefined();
    const stalled = (await importConditions(ns, "my.db"))["Stalled"];
    expect(stalled).toMatchObject({ status: "True", reason: "InvalidName" });
    expect(stalled?.message).toMatch(/'my\.db'.*DNS-1035.*recreate .*'my-db'/);
  });

  it("it keeps no port and no Service, and says so once in an Event", async () => {
    const stored = await world.kube.get(IMPORTS, { namespace: ns, name: "my.db" });
    expect((stored?.spec as { targetPort?: number }).targetPort ?? 0).toBe(0);
    expect(stored?.metadata.annotations?.[LEASED_PORT_ANNOTATION]).toBeUndefined();
    const system = systemServiceName({ namespace: ns, name: "my.db" }, CL);
    expect(await world.getService(CL, system)).toBeUndefined();
    expect(await world.resync(importer)).toMatchObject({ kind: "done" });
    const events = await eventsOn(ns, "Import", "my.db");
    expect(events.map((e) => [e.type, e.reason])).toEqual([["Warning", "InvalidName"]]);
    expect(events[0]?.note).toMatch(/my\.db/);
  });

  it("its own event is answered 422 InvalidName (permanent, not redelivered), not 500", async () => {
    expect(await world.importEvent(ns, "my.db", "update", importer)).toMatchObject({
      kind: "permanent",
      code: "InvalidName",
    });
  });
});

describe("clusterlink-import: an Import whose Service the API server refuses (a policy)", () => {
  let ns: string;
  let removePolicy: () => Promise<void>;

  beforeAll(async () => {
    ns = await world.namespace("refused-svc");
    let probes = 0;
    removePolicy = await refuseWrites({
      name: `no-blocked-services-${ns}`,
      resources: [{ apiGroups: [""], resources: ["services"], operations: ["CREATE"] }],
      admits: "!object.metadata.name.startsWith('blocked')",
      message: "this namespace takes no Service named blocked*",
      namespace: ns,
      probe: async () => {
        probes += 1;
        const probe = await world
          .service(ns, `blocked-probe-${probes}`, [80])
          .then(() => false)
          .catch(() => true);
        return probe;
      },
    });
    await world.importOf(ns, "blocked", { port: 80 });
    await world.importOf(ns, "fine", { port: 80 });
  });
  afterAll(() => removePolicy());

  it("the resync answers 202: the other Import converges, the refused one is reported on itself", async () => {
    expect(await world.resync(importer)).toMatchObject({ kind: "done" });
    expect((await importConditions(ns, "fine"))["Ready"]).toMatchObject({ status: "True" });
    expect(await world.getService(ns, "fine")).toBeDefined();
    expect(await world.getService(ns, "blocked")).toBeUndefined();
    expect((await importConditions(ns, "blocked"))["Stalled"]).toMatchObject({
      status: "True",
      reason: "ReconcileFailed",
      message: expect.stringMatching(/this namespace takes no Service named blocked/) as unknown,
    });
    const events = await eventsOn(ns, "Import", "blocked");
    expect(events.map((e) => [e.type, e.reason])).toContainEqual(["Warning", "ReconcileFailed"]);
  });
});

describe("clusterlink-export: an Export whose status the API server refuses (a policy)", () => {
  let ns: string;
  let removePolicy: () => Promise<void>;

  beforeAll(async () => {
    ns = await world.namespace("refused-export");
    await world.service(ns, "fine", [5432]);
    await world.service(ns, "blocked", [5432]);
    await world.exportOf(ns, "fine", { port: 5432 });
    await world.exportOf(ns, "blocked", { port: 5432 });
    await world.exportOf(ns, "probe", { port: 5432 });
    let probes = 0;
    removePolicy = await refuseWrites({
      name: `frozen-export-status-${ns}`,
      resources: [
        { apiGroups: ["clusterlink.net"], resources: ["exports/status"], operations: ["UPDATE"] },
      ],
      admits: "!(object.metadata.name in ['blocked', 'probe'])",
      message: "this Export's status is frozen",
      namespace: ns,
      probe: async () => {
        probes += 1;
        const condition = {
          type: "Probe",
          status: "True",
          reason: "Probe",
          message: String(probes),
          lastTransitionTime: new Date().toISOString(),
        };
        return world.kube
          .patchStatus(EXPORTS, { namespace: ns, name: "probe" }, { conditions: [condition] })
          .then(() => false)
          .catch(() => true);
      },
    });
  });
  afterAll(() => removePolicy());

  it("the resync answers 202: the other Export is verified, the refused one is reported on itself", async () => {
    expect(await world.resync(exporter)).toMatchObject({ kind: "done" });
    expect((await world.conditions(EXPORTS, ns, "fine"))["ExportValid"]).toMatchObject({
      status: "True",
    });
    const events = await eventsOn(ns, "Export", "blocked");
    expect(events.map((e) => [e.type, e.reason])).toEqual([["Warning", "ReconcileFailed"]]);
    expect(events[0]?.note).toMatch(/this Export's status is frozen/);
  });
});

describe("clusterlink-peer-health: a Peer whose status the API server refuses (a policy)", () => {
  let clNs: string;
  let fleet: PeerGatewayFleet;
  let removePolicy: () => Promise<void>;
  const PEERS = clusterLinkResource("Peer");

  beforeAll(async () => {
    // Its own ClusterLink namespace: a peer-health resync heartbeats every Peer there.
    clNs = await world.namespace("cl-refused-peer");
    fleet = await PeerGatewayFleet.start({ peers: [{ name: "fine" }, { name: "blocked" }] });
    for (const name of ["fine", "blocked", "probe"]) {
      const port = fleet.gateway(name === "probe" ? "fine" : name).port;
      await world.kube.create(PEERS, {
        metadata: { name, namespace: clNs },
        spec: { gateways: [{ host: "127.0.0.1", port }] },
      });
    }
    let probes = 0;
    removePolicy = await refuseWrites({
      name: `frozen-peer-status-${clNs}`,
      resources: [
        { apiGroups: ["clusterlink.net"], resources: ["peers/status"], operations: ["UPDATE"] },
      ],
      admits: "!(object.metadata.name in ['blocked', 'probe'])",
      message: "this Peer's status is frozen",
      namespace: clNs,
      probe: async () => {
        probes += 1;
        return world.kube
          .patchStatus(PEERS, { namespace: clNs, name: "probe" }, { consecutiveFailures: probes })
          .then(() => false)
          .catch(() => true);
      },
    });
    await world.kube.delete(PEERS, { namespace: clNs, name: "probe" });
  });
  afterAll(async () => {
    await removePolicy();
    await fleet.close();
  });

  it("the resync answers 202: the other Peer is heartbeaten, the refused one is reported on itself", async () => {
    const fn = createClusterLinkPeerHealth({
      kube: () => peerHealthKube,
      env: { CL_NAMESPACE: clNs, CL_PEER_TLS_DIR: fleet.identityDir },
    });
    expect(await world.resync(fn)).toMatchObject({ kind: "done" });
    expect((await world.conditions(PEERS, clNs, "fine"))["PeerReachable"]).toMatchObject({
      status: "True",
    });
    const events = await eventsOn(clNs, "Peer", "blocked");
    expect(events.map((e) => [e.type, e.reason])).toEqual([["Warning", "ReconcileFailed"]]);
  });
});
