// Which objects each ClusterLink function's event concerns, decided before and after the reads.
import { observeExport } from "../../../shared/clusterlink/observed.js";
import {
  exportTriggerFromEvent,
  serviceNamespaces,
} from "../../../shared/clusterlink/plan-export-scope.js";
import { importTriggerFromEvent } from "../../../shared/clusterlink/plan-import-scope.js";
import {
  peerTriggerFromEvent,
  planPeerEventScope,
  planTickScope,
} from "../../../shared/clusterlink/plan-peer-scope.js";
import { DEFAULT_HEARTBEAT_CADENCE } from "../../../shared/clusterlink/plan-peer-health.js";
import type { KubeObject } from "../../../shared/core/objects.js";
import type { IntakeEvent } from "../../../shared/events/types.js";

const ref = (kind: string, namespace: string, name: string): IntakeEvent => ({
  type: "object",
  id: "1",
  action: "update",
  ref: { apiVersion: "", kind, namespace, name },
});
const resync = (namespace?: string): IntakeEvent => ({
  type: "resync",
  id: "r",
  scope: namespace === undefined ? {} : { namespace },
});

describe("clusterlink-export's scope", () => {
  it("an Export event is about that Export, and its verdict is permanent", () => {
    expect(exportTriggerFromEvent(ref("Export", "data", "db"))).toEqual({
      kind: "one",
      namespace: "data",
      name: "db",
      fromExportEvent: true,
    });
  });

  it("a Service event re-checks the Export named like it", () => {
    expect(exportTriggerFromEvent(ref("Service", "data", "db"))).toMatchObject({
      kind: "one",
      fromExportEvent: false,
    });
  });

  it("a resync is about every Export of its namespace", () => {
    expect(exportTriggerFromEvent(resync("data"))).toEqual({ kind: "all", namespace: "data" });
    expect(exportTriggerFromEvent(resync())).toEqual({ kind: "all", namespace: undefined });
  });

  it.each([
    [ref("Import", "data", "db"), "UnknownKind"],
    [ref("Export", "", "db"), "MissingNamespace"],
  ])("%j is malformed: %s", (event, code) => {
    expect(exportTriggerFromEvent(event)).toMatchObject({ kind: "malformed", code });
  });

  it("a resync lists Services only where an Export names no host", () => {
    const exp = (namespace: string, spec: Record<string, unknown>) =>
      observeExport({
        apiVersion: "clusterlink.net/v1alpha1",
        kind: "Export",
        metadata: { name: "db", namespace },
        spec,
      });
    const exports = [exp("a", { port: 5432 }), exp("b", { host: "db.example", port: 1 })];
    expect(serviceNamespaces([...exports, exp("a", {})])).toEqual(["a"]);
  });
});

describe("clusterlink-import's scope", () => {
  it("an event of another kind is told which kinds the function takes", () => {
    expect(importTriggerFromEvent(ref("Export", "data", "db"))).toEqual({
      kind: "malformed",
      code: "UnknownKind",
      reason:
        "clusterlink-import handles Import, Service, EndpointSlice and Peer events, not Export",
    });
    expect(exportTriggerFromEvent(ref("Import", "data", "db"))).toMatchObject({
      reason: "clusterlink-export handles Export and Service events, not Import",
    });
    expect(exportTriggerFromEvent(ref("Export", "", "db"))).toMatchObject({
      reason: "Export db has no namespace",
    });
  });

  it.each(["Import", "Service", "EndpointSlice", "Peer"])("a %s event names its object", (kind) => {
    expect(importTriggerFromEvent(ref(kind, "data", "db"))).toEqual({
      kind,
      namespace: "data",
      name: "db",
    });
  });

  it.each([
    [ref("Export", "data", "db"), "UnknownKind"],
    [ref("Import", "", "db"), "MissingNamespace"],
  ])("%j is malformed: %s", (event, code) => {
    expect(importTriggerFromEvent(event)).toMatchObject({ kind: "malformed", code });
  });
});

describe("clusterlink-peer-health's scope", () => {
  // Between the 10 s windows in which an unreachable Peer is probed (plan-peer-health.ts).
  const NOW = "2026-01-01T00:00:15Z";
  const peer = (
    name: string,
    status: Record<string, unknown> = {},
    generation = 1,
  ): KubeObject => ({
    apiVersion: "clusterlink.net/v1alpha1",
    kind: "Peer",
    metadata: { name, namespace: "clusterlink-system", generation },
    spec: {},
    status,
  });
  const unreachableSince = (time: string) => ({
    conditions: [
      {
        type: "PeerReachable",
        status: "False",
        reason: "HeartbeatFailed",
        message: "",
        lastTransitionTime: time,
      },
    ],
  });

  it("a resync is a tick; a Peer event names its Peer; another kind is malformed", () => {
    expect(peerTriggerFromEvent(resync())).toEqual({ kind: "tick" });
    expect(peerTriggerFromEvent(ref("Peer", "cl", "p"))).toEqual({
      kind: "peer",
      namespace: "cl",
      name: "p",
    });
    expect(peerTriggerFromEvent(ref("Export", "cl", "p"))).toMatchObject({
      kind: "malformed",
      code: "UnknownKind",
    });
  });

  it("a tick probes the due Peers and holds the rest at their stored reachability", () => {
    const fresh = peer("new");
    const waiting = peer("down", unreachableSince("2026-01-01T00:00:05Z"));
    const scope = planTickScope([fresh, waiting], NOW, DEFAULT_HEARTBEAT_CADENCE);
    expect(scope.peers.map((p) => p.metadata.name)).toEqual(["new"]);
    expect(scope.held).toEqual([{ peer: "down", reachable: false }]);
    expect(scope.skipped).toBe("1 unreachable Peer(s) not due this tick");
  });

  it("a Peer event probes a new or changed Peer, not a gone or already answered one", () => {
    const at = { namespace: "clusterlink-system", name: "p" };
    expect(planPeerEventScope(at, undefined)).toEqual({ peers: [], held: [] });
    expect(planPeerEventScope(at, peer("p")).peers).toHaveLength(1);
    const answered = peer("p", { observedGeneration: 1, ...unreachableSince(NOW) });
    expect(planPeerEventScope(at, answered)).toMatchObject({
      peers: [],
      skipped: expect.stringContaining("unchanged since its last heartbeat") as unknown,
    });
    const changed = peer("p", { observedGeneration: 1, ...unreachableSince(NOW) }, 2);
    expect(planPeerEventScope(at, changed).peers).toHaveLength(1);
  });
});
