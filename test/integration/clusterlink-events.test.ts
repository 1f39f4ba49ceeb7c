// Kubernetes Events of the ClusterLink functions (issue 18: the same recorder as reconcile-rule),
// each function running with exactly its manifests/rbac role: one Event per transition an
// operator must see (a Peer unreachable or reachable again, an Import's port leased or taken, an
// Export invalid or valid again), none for a redelivery that changes nothing.
import { jest } from "@jest/globals";
import { PeerGatewayFleet } from "../../dev/peer-gateway-sim/index.js";
import { createClusterLinkPeerHealth } from "../../functions/clusterlink-peer-health/index.js";
import { clusterLinkResource, EVENTS, type KubeObject } from "../../shared/kube/index.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import {
  ClusterLinkWorld,
  heartbeatWindowStart,
  IMPORTS,
  objectEvent,
} from "./clusterlink-harness.js";
import { identityFrom } from "./support/identity.js";

jest.setTimeout(60_000);

const PEERS = clusterLinkResource("Peer");
const world = new ClusterLinkWorld();
const peerName = `ev-${world.run}`;
let fleet: PeerGatewayFleet;
let ns: string;
/** The Peer's own ClusterLink namespace: other files' resyncs must not heartbeat it. */
let peerNs: string;

interface Recorded extends KubeObject {
  reason?: string;
  note?: string;
  type?: string;
  regarding?: { kind?: string; name?: string };
  series?: { count?: number };
  reportingController?: string;
}

/** Events about one object, as `kubectl describe` would show them: reason, note, and count. */
async function eventsOf(namespace: string, kind: string, name: string): Promise<Recorded[]> {
  const all = (await world.kube.list(EVENTS, { namespace })) as Recorded[];
  return all.filter((e) => e.regarding?.kind === kind && e.regarding.name === name);
}

const reasons = async (namespace: string, kind: string, name: string): Promise<string[]> =>
  (await eventsOf(namespace, kind, name)).map((e) => e.reason ?? "").sort();

beforeAll(async () => {
  await world.setUp();
  ns = await world.namespace("cl-events");
  peerNs = await world.namespace("cl-peers");
  fleet = await PeerGatewayFleet.start({ peers: [{ name: peerName }] });
});

afterAll(() => fleet.close());

describe("ClusterLink Events, one per transition, written with each function's own role", () => {
  it("Peer: reachable once, unreachable once after the 5 failures, not per heartbeat", async () => {
    const { kube } = await identityFrom("clusterlink-peer-health.yaml");
    const env = {
      CL_NAMESPACE: peerNs,
      CL_PEER_TLS_DIR: fleet.identityDir,
      CL_HEARTBEAT_TIMEOUT_MS: "300",
    };
    const fn: EventFunction = createClusterLinkPeerHealth({
      kube: () => kube,
      env,
      now: heartbeatWindowStart,
    });
    // One heartbeat tick (the function's resync) over this file's own ClusterLink namespace.
    const beat = () => world.resync(fn);
    await world.kube.create(PEERS, {
      metadata: { name: peerName, namespace: peerNs },
      spec: fleet.peerSpec(peerName),
    });
    await beat();
    await beat();
    expect(await reasons(peerNs, "Peer", peerName)).toEqual(["PeerReachable"]);
    fleet.gateway(peerName).setMode({ mode: "fail", status: 503 });
    for (let i = 0; i < 7; i += 1) await beat();
    const events = await eventsOf(peerNs, "Peer", peerName);
    expect(events.map((e) => e.reason).sort()).toEqual(["PeerReachable", "PeerUnreachable"]);
    const down = events.find((e) => e.reason === "PeerUnreachable");
    expect(down).toMatchObject({
      type: "Warning",
      reportingController: "sdewan.akraino.org/clusterlink-peer-health",
    });
    expect(down?.note).toMatch(/HTTP 503/);
    expect(down?.series).toBeUndefined();
  });

  it("Import: PortLeased on its lease; PortConflict for a requested port another Import holds", async () => {
    const { kube } = await identityFrom("clusterlink-import.yaml");
    const fn = world.instance("import", kube);
    const targetPort = async (name: string): Promise<number> =>
      (
        (await world.kube.get(IMPORTS, { namespace: ns, name }))?.spec as {
          targetPort: number;
        }
      ).targetPort;
    const notes = async () => (await eventsOf(ns, "Import", "db")).map((e) => [e.reason, e.note]);
    await world.importOf(ns, "db", { port: 5432 });
    await world.importEvent(ns, "db", "add", fn);
    const firstPort = await targetPort("db");
    const afterAdd = await notes();
    expect(afterAdd.at(-1)).toEqual(["PortLeased", `dataplane target port ${firstPort} leased`]);
    await world.importEvent(ns, "db", "update", fn); // a redelivery: nothing new
    const port = await targetPort("db");
    // Ports are cluster-wide and other files lease at random meanwhile: a lease written where
    // another Import turns out to sit moves once, with an Event for the new port (docs/adr/0006).
    // Otherwise the redelivery records nothing.
    expect(await notes()).toEqual(
      port === firstPort
        ? afterAdd
        : [...afterAdd, ["PortLeased", `dataplane target port ${port} leased`]],
    );
    expect(afterAdd.map(([reason]) => reason)).toEqual(
      afterAdd.length === 1 ? ["PortLeased"] : ["PortLeased", "PortLeased"],
    );
    // Two Imports asking for one port: the older (creationTimestamp, then uid; docs/adr/0006)
    // keeps it, the other gets one PortConflict Event however many deliveries it receives.
    // A port no Import holds now (other files lease ports at random while this runs).
    let wanted = 40_000 + (port % 5_000);
    while ((await world.kube.list(IMPORTS, { fieldSelector: `spec.targetPort=${wanted}` })).length)
      wanted += 1;
    await world.importOf(ns, "first", { port: 80, targetPort: wanted });
    await world.importOf(ns, "second", { port: 80, targetPort: wanted });
    for (const name of ["first", "second", "first", "second"]) {
      await world.importEvent(ns, name, "update", fn);
    }
    const [first, second] = await Promise.all([
      eventsOf(ns, "Import", "first"),
      eventsOf(ns, "Import", "second"),
    ]);
    const loser = first.length > 0 ? "first" : "second";
    const holder = loser === "first" ? "second" : "first";
    expect([...first, ...second].map((e) => [e.type, e.reason])).toEqual([
      ["Warning", "PortConflict"],
    ]);
    expect((loser === "first" ? first : second)[0]?.note).toBe(
      `cannot generate listening port: port ${wanted} is already in use by service ${ns}/${holder}`,
    );
  });

  it("Export: ExportInvalid while its Service is missing, ExportVerified once it is there", async () => {
    const { kube } = await identityFrom("clusterlink-export.yaml");
    const fn = world.instance("export", kube);
    await world.exportOf(ns, "api", { port: 8080 });
    const exportEvent = () =>
      world.send(
        fn,
        objectEvent("update", {
          apiVersion: "clusterlink.net/v1alpha1",
          kind: "Export",
          namespace: ns,
          name: "api",
        }),
      );
    await exportEvent();
    await exportEvent();
    expect(await reasons(ns, "Export", "api")).toEqual(["ExportInvalid"]);
    await world.service(ns, "api", [8080]);
    await world.serviceEvent(fn, ns, "api", "add");
    expect(await reasons(ns, "Export", "api")).toEqual(["ExportInvalid", "ExportVerified"]);
  });

  it("Import: SourceUnusable once when a source's Peer goes down or away, SourcesReachable when all are back", async () => {
    const { kube } = await identityFrom("clusterlink-import.yaml");
    const fn = world.instance("import", kube);
    const [a, b] = [`src-a-${world.run}`, `src-b-${world.run}`];
    for (const peer of [a, b]) {
      await world.kube.create(PEERS, {
        metadata: { name: peer, namespace: world.clNamespace },
        spec: { gateways: [{ host: "127.0.0.1", port: 1 }] },
      });
      await world.peerReachable(peer, true);
    }
    const peerEvent = (peer: string, action: "update" | "delete" = "update") =>
      world.send(
        fn,
        objectEvent(action, {
          apiVersion: "clusterlink.net/v1alpha1",
          kind: "Peer",
          namespace: world.clNamespace,
          name: peer,
        }),
      );
    const sources = [a, b].map((peer) => ({ peer, exportName: "cache", exportNamespace: "data" }));
    await world.importOf(ns, "cache", { port: 6379, sources });
    await world.importEvent(ns, "cache", "add", fn);
    const sourceEvents = async () =>
      (await eventsOf(ns, "Import", "cache"))
        .filter((e) => e.reason?.startsWith("Source") === true)
        .map((e) => [e.type, e.reason, e.note]);
    expect(await sourceEvents()).toEqual([]);

    await world.peerReachable(a, false, "no answer within 2000 ms");
    await peerEvent(a);
    await peerEvent(a); // redelivered
    await world.importEvent(ns, "cache", "update", fn); // and the Import's own event
    const aDown = [
      "Warning",
      "SourceUnusable",
      `a source turned unusable: ${a}/data/cache: Peer '${a}' unreachable (no answer within 2000 ms)`,
    ];
    expect(await sourceEvents()).toEqual([aDown]);

    // Still down, another reason: the condition's message changes, no new Event.
    await world.peerReachable(a, false, "HTTP 503");
    await peerEvent(a);
    expect(await sourceEvents()).toEqual([aDown]);

    await world.kube.delete(PEERS, { namespace: world.clNamespace, name: b });
    await peerEvent(b, "delete");
    const bGone = [
      "Warning",
      "SourceUnusable",
      `a source turned unusable: ${b}/data/cache: no Peer '${b}' in ${world.clNamespace}`,
    ];
    expect(await sourceEvents()).toEqual(expect.arrayContaining([aDown, bGone]));
    expect(await sourceEvents()).toHaveLength(2);
    expect((await world.conditions(IMPORTS, ns, "cache"))["Ready"]).toMatchObject({
      status: "False",
      reason: "NoUsableSource",
    });

    await world.kube.create(PEERS, {
      metadata: { name: b, namespace: world.clNamespace },
      spec: { gateways: [{ host: "127.0.0.1", port: 1 }] },
    });
    await world.peerReachable(b, true);
    await world.peerReachable(a, true);
    await peerEvent(a);
    await peerEvent(b);
    const all = await sourceEvents();
    expect(all).toHaveLength(3);
    expect(all).toEqual(
      expect.arrayContaining([["Normal", "SourcesReachable", "all 2 sources usable again"]]),
    );
  });
});
