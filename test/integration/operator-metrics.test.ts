// The gauges two alerts of manifests/monitoring watch, set by the real functions against the real
// API server through HandlerContext.metrics (as the runtime passes them):
// sdewan_clusterlink_peer_unreachable (SdewanClusterLinkPeerUnreachable), per Peer as its last
// heartbeat left it, and sdewan_netpol_endpoints_fail_closed (SdewanNetpolFailClosed), the Pods
// whose tables deny a whole direction after a recompute of every table.
import { randomBytes } from "node:crypto";
import { jest } from "@jest/globals";
import { PeerGatewayFleet } from "../../dev/peer-gateway-sim/index.js";
import { createClusterLinkPeerHealth } from "../../functions/clusterlink-peer-health/index.js";
import type { IntakeEvent } from "../../shared/events/types.js";
import { NETPOL_ENDPOINTS } from "../../shared/kube/index.js";
import { RuntimeMetrics } from "../../shared/runtime/index.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import { ClusterLinkWorld, PEERS } from "./clusterlink-harness.js";
import { NetpolWorld } from "./netpol-harness.js";

jest.setTimeout(60_000);

const silentLog = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };
const resync = (): IntakeEvent => ({
  type: "resync",
  id: `resync-${randomBytes(4).toString("hex")}`,
  scope: {},
});

/** One delivery as the runtime makes it: with the runtime's metrics in the context. */
const deliver = (fn: EventFunction, event: IntakeEvent, metrics: RuntimeMetrics) =>
  fn.handle(event, {
    correlationId: event.id,
    log: silentLog,
    calls: { api: 0, cnf: 0 },
    signal: new AbortController().signal,
    metrics,
  });

async function series(metrics: RuntimeMetrics, name: string): Promise<string[]> {
  return (await metrics.registry.getSingleMetricAsString(name))
    .split("\n")
    .filter((line) => line.startsWith(`${name}{`));
}

describe("sdewan_clusterlink_peer_unreachable", () => {
  const world = new ClusterLinkWorld();
  let fleet: PeerGatewayFleet;
  let clNs: string;

  beforeAll(async () => {
    await world.setUp();
    clNs = await world.namespace("cl-metrics");
    fleet = await PeerGatewayFleet.start({
      peers: [{ name: "up" }, { name: "down", mode: { mode: "silent" } }],
    });
  });
  afterAll(() => fleet.close());

  it("1 for an unreachable Peer, 0 for a reachable one; a deleted Peer leaves with the next resync", async () => {
    const env = {
      CL_NAMESPACE: clNs,
      CL_PEER_TLS_DIR: fleet.identityDir,
      CL_HEARTBEAT_TIMEOUT_MS: "300",
    };
    const fn = createClusterLinkPeerHealth({ kube: () => world.kube, env });
    for (const peer of ["up", "down"]) {
      await world.kube.create(PEERS, {
        metadata: { name: peer, namespace: clNs },
        spec: fleet.peerSpec(peer),
      });
    }
    const metrics = new RuntimeMetrics();
    expect(await deliver(fn, resync(), metrics)).toMatchObject({ kind: "done" });
    expect(await series(metrics, "sdewan_clusterlink_peer_unreachable")).toEqual([
      'sdewan_clusterlink_peer_unreachable{peer="up"} 0',
      'sdewan_clusterlink_peer_unreachable{peer="down"} 1',
    ]);
    await world.kube.delete(PEERS, { namespace: clNs, name: "down" });
    expect(await deliver(fn, resync(), metrics)).toMatchObject({ kind: "done" });
    expect(await series(metrics, "sdewan_clusterlink_peer_unreachable")).toEqual([
      'sdewan_clusterlink_peer_unreachable{peer="up"} 0',
    ]);
  });
});

describe("sdewan_netpol_endpoints_fail_closed", () => {
  const world = new NetpolWorld();

  /** Endpoint tables of the whole cluster whose `direction` fails closed, as stored. */
  async function storedFailingClosed(direction: "ingress" | "egress"): Promise<number> {
    const tables = await world.kube.list(NETPOL_ENDPOINTS);
    return tables.filter(
      (t) => (t.spec as Record<string, { failClosed?: boolean }>)[direction]?.failClosed === true,
    ).length;
  }

  it("counts the Pods whose table fails closed after a recompute of every table, per direction", async () => {
    const ns = await world.namespace("metrics");
    await world.pod(ns, "api", { app: "api" }, { ip: "198.51.100.40" });
    // 65 ingress rules for one Pod: past the datapath's 64 bits, ingress fails closed.
    const rules = Array.from({ length: 65 }, (_, i) => ({ ports: [{ port: 1000 + i }] }));
    await world.policy(ns, "too-many", {
      podSelector: { matchLabels: { app: "api" } },
      ingress: rules,
    });
    const metrics = new RuntimeMetrics();
    expect(await deliver(world.fn, resync(), metrics)).toMatchObject({ kind: "done" });
    const lines = await series(metrics, "sdewan_netpol_endpoints_fail_closed");
    // Cluster-wide: other files' tables count too, so compare with what is stored.
    expect(lines).toEqual([
      `sdewan_netpol_endpoints_fail_closed{direction="ingress"} ${await storedFailingClosed("ingress")}`,
      `sdewan_netpol_endpoints_fail_closed{direction="egress"} ${await storedFailingClosed("egress")}`,
    ]);
    expect(lines[0]).not.toMatch(/ 0$/);

    await world.deletePolicy(ns, "too-many");
    expect(await deliver(world.fn, resync(), metrics)).toMatchObject({ kind: "done" });
    expect(await series(metrics, "sdewan_netpol_endpoints_fail_closed")).toEqual([
      `sdewan_netpol_endpoints_fail_closed{direction="ingress"} ${await storedFailingClosed("ingress")}`,
      `sdewan_netpol_endpoints_fail_closed{direction="egress"} ${await storedFailingClosed("egress")}`,
    ]);
  });
});
