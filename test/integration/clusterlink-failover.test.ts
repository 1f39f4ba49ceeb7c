// User story "Service Load Balancing and Failover" (design proposal): a Service provided by
// several remote locations, one primary (lbScheme static: first source, then the next on
// failure), failing over when the primary is unavailable. What the control plane owes the
// dataplane for that: the Import with all its sources served, which Peers are reachable,
// reported by heartbeats (dev/peer-gateway-sim gateways) with upstream's thresholds, and on the
// Import the sources whose Peer is unreachable, re-evaluated when a Peer's status changes (the
// import function's Peer event). The dataplane's choice among sources is not the control plane's.
//
// The Peers live in the shared ClusterLink namespace (the Import function reads them there) and
// are heartbeaten by Peer events, never a resync, which would heartbeat other files' Peers too.
import { jest } from "@jest/globals";
import { PeerGatewayFleet } from "../../dev/peer-gateway-sim/index.js";
import { createClusterLinkPeerHealth } from "../../functions/clusterlink-peer-health/index.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import {
  ClusterLinkWorld,
  heartbeatWindowStart,
  IMPORTS,
  objectEvent,
  PEERS,
  peersLimitedTo,
} from "./clusterlink-harness.js";

jest.setTimeout(60_000);

const world = new ClusterLinkWorld();
const CL = world.clNamespace;
const [primary, secondary, tertiary] = ["primary", "secondary", "tertiary"].map(
  (p) => `${p}-${world.run}`,
) as [string, string, string];
const LOCATIONS = [primary, secondary, tertiary];
let fleet: PeerGatewayFleet;
let peerHealth: EventFunction;
let ns: string;

beforeAll(async () => {
  await world.setUp();
  ns = await world.namespace("failover");
  fleet = await PeerGatewayFleet.start({
    peers: [
      { name: primary, labels: { site: "primary" } },
      { name: secondary, labels: { site: "secondary" }, mode: { mode: "silent" } },
      { name: tertiary, labels: { site: "tertiary" }, mode: { mode: "fail", status: 503 } },
    ],
  });
  for (const name of LOCATIONS) {
    await world.kube.create(PEERS, {
      metadata: { name, namespace: CL },
      spec: fleet.peerSpec(name),
    });
  }
  peerHealth = createClusterLinkPeerHealth({
    kube: () => peersLimitedTo(world.kube, LOCATIONS),
    env: { CL_NAMESPACE: CL, CL_PEER_TLS_DIR: fleet.identityDir, CL_HEARTBEAT_TIMEOUT_MS: "300" },
    now: heartbeatWindowStart,
  });
});

const peerRef = (name: string) => ({
  apiVersion: "clusterlink.net/v1alpha1",
  kind: "Peer",
  namespace: CL,
  name,
});

/** One heartbeat tick over the locations, then each one's Peer event to the import function. */
async function heartbeatAll(): Promise<void> {
  expect(await world.resync(peerHealth)).toMatchObject({ kind: "done" });
  for (const name of LOCATIONS) {
    const reply = await world.send(world.importer, objectEvent("update", peerRef(name)));
    expect(reply).toMatchObject({ kind: "done" });
  }
}

afterAll(() => fleet.close());

async function reachability(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of LOCATIONS) {
    const peer = await world.kube.get(PEERS, { namespace: CL, name });
    const conditions = (peer?.status as { conditions?: { type: string; status: string }[] })
      ?.conditions;
    out[name] = conditions?.find((c) => c.type === "PeerReachable")?.status ?? "none";
  }
  return out;
}

async function importStatus(): Promise<
  Record<string, { status: string; reason: string; message: string }>
> {
  return world.conditions(IMPORTS, ns, "orders");
}

const unusable = (message: string | undefined): string[] =>
  LOCATIONS.filter((peer) => message?.includes(`${peer}/shop/orders:`));

describe("Service Load Balancing and Failover", () => {
  it("an Import from three locations, primary first (static), is served before any heartbeat", async () => {
    await world.importOf(ns, "orders", {
      port: 8080,
      lbScheme: "static",
      sources: LOCATIONS.map((peer) => ({ peer, exportName: "orders", exportNamespace: "shop" })),
    });
    expect(await world.importEvent(ns, "orders", "add")).toMatchObject({ kind: "done" });
    const object = await world.kube.get(IMPORTS, { namespace: ns, name: "orders" });
    expect((object?.spec as { sources: { peer: string }[] }).sources.map((s) => s.peer)).toEqual(
      LOCATIONS,
    );
    // No Peer heartbeaten yet: none known to be down, so Ready; the report says it does not know.
    expect(await importStatus()).toMatchObject({
      Ready: { status: "True", reason: "Imported" },
      ImportSourcesReachable: {
        status: "Unknown",
        reason: "Pending",
        message: `not heartbeaten yet: ${LOCATIONS.map((p) => `Peer '${p}'`).join(", ")}`,
      },
    });
    expect((await world.getService(ns, "orders"))?.spec?.type).toBe("ExternalName");
  });

  it("one heartbeat each: the primary up, a silent and a failing one down, and the Import names those two", async () => {
    await heartbeatAll();
    expect(await reachability()).toEqual({
      [primary]: "True",
      [secondary]: "False",
      [tertiary]: "False",
    });
    const status = await importStatus();
    expect(status["Ready"]).toMatchObject({ status: "True", reason: "Imported" });
    expect(status["ImportSourcesReachable"]).toMatchObject({
      status: "False",
      reason: "Unreachable",
    });
    expect(status["ImportSourcesReachable"]?.message).toMatch(/^2 of 3 sources unusable: /);
    expect(unusable(status["ImportSourcesReachable"]?.message)).toEqual([secondary, tertiary]);
  });

  it("heartbeats that change nothing the Import reports write nothing to it", async () => {
    const before = await world.kube.get(IMPORTS, { namespace: ns, name: "orders" });
    await heartbeatAll(); // every Peer is steady: no status written, the Import re-checked anyway
    const after = await world.kube.get(IMPORTS, { namespace: ns, name: "orders" });
    expect(after?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
  });

  it("the primary goes down and the secondary comes up: after upstream's thresholds both reports follow", async () => {
    fleet.gateway(primary).setMode({ mode: "silent" });
    fleet.gateway(secondary).setMode({ mode: "healthy" });
    const seen: Record<string, string>[] = [];
    const reported: string[][] = [];
    for (let i = 0; i < 5; i += 1) {
      await heartbeatAll();
      seen.push(await reachability());
      reported.push(unusable((await importStatus())["ImportSourcesReachable"]?.message));
    }
    // 3 successes to become reachable, 5 failures to become unreachable.
    expect(seen.map((s) => s[secondary])).toEqual(["False", "False", "True", "True", "True"]);
    expect(seen.map((s) => s[primary])).toEqual(["True", "True", "True", "True", "False"]);
    expect(seen.every((s) => s[tertiary] === "False")).toBe(true);
    expect(reported).toEqual([
      [secondary, tertiary],
      [secondary, tertiary],
      [tertiary],
      [tertiary],
      [primary, tertiary],
    ]);
    expect((await importStatus())["Ready"]).toMatchObject({ status: "True" });
  });

  it("every location down: not Ready (Reconciling, not Stalled), Services kept; one back: Ready again", async () => {
    fleet.gateway(secondary).setMode({ mode: "silent" });
    for (let i = 0; i < 5; i += 1) await heartbeatAll();
    expect(await reachability()).toEqual({
      [primary]: "False",
      [secondary]: "False",
      [tertiary]: "False",
    });
    const down = await importStatus();
    expect(down).toMatchObject({
      Ready: { status: "False", reason: "NoUsableSource" },
      Reconciling: { status: "True", reason: "NoUsableSource" },
      Stalled: { status: "False" },
    });
    expect(down["Ready"]?.message).toMatch(/^3 of 3 sources unusable: /);
    expect((await world.getService(ns, "orders"))?.spec?.type).toBe("ExternalName");

    fleet.gateway(tertiary).setMode({ mode: "healthy" });
    for (let i = 0; i < 3; i += 1) await heartbeatAll();
    expect((await reachability())[tertiary]).toBe("True");
    expect((await importStatus())["Ready"]).toMatchObject({ status: "True", reason: "Imported" });
  });

  it("a Peer deleted: its delete event reports the source as naming no Peer", async () => {
    await world.kube.delete(PEERS, { namespace: CL, name: tertiary });
    const reply = await world.send(world.importer, objectEvent("delete", peerRef(tertiary)));
    expect(reply).toMatchObject({ kind: "done" });
    const status = await importStatus();
    expect(status["ImportSourcesReachable"]?.message).toContain(
      `${tertiary}/shop/orders: no Peer '${tertiary}' in ${CL}`,
    );
    expect(status["Ready"]).toMatchObject({ status: "False", reason: "NoUsableSource" });
  });
});
