// User story "Service Load Balancing and Failover" (design proposal): a Service provided by
// several remote locations, one primary (lbScheme static: first source, then the next on
// failure), failing over when the primary is unavailable. What the control plane owes the
// dataplane for that: the Import with all its sources served, and which Peers are reachable,
// reported by heartbeats (dev/peer-gateway-sim gateways) and following failures and recoveries
// with upstream's thresholds. The dataplane's choice among sources is not the control plane's.
import { jest } from "@jest/globals";
import { PeerGatewayFleet } from "../../dev/peer-gateway-sim/index.js";
import { createClusterLinkPeerHealth } from "../../functions/clusterlink-peer-health/index.js";
import { clusterLinkResource } from "../../shared/kube/index.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import { ClusterLinkWorld, IMPORTS } from "./clusterlink-harness.js";

jest.setTimeout(60_000);

const PEERS = clusterLinkResource("Peer");
const world = new ClusterLinkWorld();
const [primary, secondary, tertiary] = ["primary", "secondary", "tertiary"].map(
  (p) => `${p}-${world.run}`,
) as [string, string, string];
let fleet: PeerGatewayFleet;
let peerHealth: EventFunction;
let ns: string;
/**
 * The Peers' own ClusterLink namespace (CL_NAMESPACE of this file's peer-health): a resync
 * heartbeats every Peer of its namespace, and other files' resyncs, with another fabric's
 * client certificate, would count failures against these Peers' thresholds.
 */
let peerNs: string;

beforeAll(async () => {
  await world.setUp();
  ns = await world.namespace("failover");
  peerNs = await world.namespace("cl-peers");
  fleet = await PeerGatewayFleet.start({
    peers: [
      { name: primary, labels: { site: "primary" } },
      { name: secondary, labels: { site: "secondary" }, mode: { mode: "silent" } },
      { name: tertiary, labels: { site: "tertiary" }, mode: { mode: "fail", status: 503 } },
    ],
  });
  for (const name of [primary, secondary, tertiary]) {
    await world.kube.create(PEERS, {
      metadata: { name, namespace: peerNs },
      spec: fleet.peerSpec(name),
    });
  }
  peerHealth = createClusterLinkPeerHealth({
    kube: () => world.kube,
    env: {
      CL_NAMESPACE: peerNs,
      CL_PEER_TLS_DIR: fleet.identityDir,
      CL_HEARTBEAT_TIMEOUT_MS: "300",
    },
  });
});

afterAll(() => fleet.close());

async function reachability(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const name of [primary, secondary, tertiary]) {
    const peer = await world.kube.get(PEERS, { namespace: peerNs, name });
    const conditions = (peer?.status as { conditions?: { type: string; status: string }[] })
      ?.conditions;
    out[name] = conditions?.find((c) => c.type === "PeerReachable")?.status ?? "none";
  }
  return out;
}

describe("Service Load Balancing and Failover", () => {
  it("an Import from three locations, primary first (static), is served whatever their health", async () => {
    await world.importOf(ns, "orders", {
      port: 8080,
      lbScheme: "static",
      sources: [primary, secondary, tertiary].map((peer) => ({
        peer,
        exportName: "orders",
        exportNamespace: "shop",
      })),
    });
    expect(await world.importEvent(ns, "orders", "add")).toMatchObject({ kind: "done" });
    const object = await world.kube.get(IMPORTS, { namespace: ns, name: "orders" });
    expect((object?.spec as { sources: { peer: string }[] }).sources.map((s) => s.peer)).toEqual([
      primary,
      secondary,
      tertiary,
    ]);
    expect(await world.conditions(IMPORTS, ns, "orders")).toMatchObject({
      Ready: { status: "True", reason: "Imported" },
    });
    expect((await world.getService(ns, "orders"))?.spec?.type).toBe("ExternalName");
  });

  it("one resync reports which locations are up: the primary reachable, a silent and a failing one not", async () => {
    expect(await world.resync(peerHealth)).toMatchObject({ kind: "done" });
    expect(await reachability()).toEqual({
      [primary]: "True",
      [secondary]: "False",
      [tertiary]: "False",
    });
  });

  it("the primary goes down and the secondary comes up: after upstream's thresholds the report follows", async () => {
    fleet.gateway(primary).setMode({ mode: "silent" });
    fleet.gateway(secondary).setMode({ mode: "healthy" });
    const seen: Record<string, string>[] = [];
    for (let i = 0; i < 5; i += 1) {
      await world.resync(peerHealth);
      seen.push(await reachability());
    }
    // 3 successes to become reachable, 5 failures to become unreachable.
    expect(seen.map((s) => s[secondary])).toEqual(["False", "False", "True", "True", "True"]);
    expect(seen.map((s) => s[primary])).toEqual(["True", "True", "True", "True", "False"]);
    expect(seen.every((s) => s[tertiary] === "False")).toBe(true);
  });
});
