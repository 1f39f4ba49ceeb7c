/**
 * Which Peers a clusterlink-peer-health event concerns (its scope planner, pure): a tick probes
 * the Peers that are due and keeps the others' stored reachability; a Peer event probes that
 * Peer unless it is gone or its status already answers for its spec.
 */
import type { KubeObject } from "../core/objects.js";
import type { IntakeEvent } from "../events/types.js";
import { peerStatusSchema } from "../kinds/clusterlink.js";
import { heartbeatDue, type HeartbeatCadence, type HeartbeatMemory } from "./plan-peer-health.js";

/** What the event names, before anything is read. */
export type PeerTrigger =
  | { readonly kind: "tick" }
  | { readonly kind: "peer"; readonly namespace: string; readonly name: string }
  | { readonly kind: "malformed"; readonly code: "UnknownKind"; readonly reason: string };

export function peerTriggerFromEvent(event: IntakeEvent): PeerTrigger {
  if (event.type === "resync") return { kind: "tick" };
  const { kind, namespace, name } = event.ref;
  if (kind !== "Peer") {
    const reason = `clusterlink-peer-health handles Peer events, not ${kind}`;
    return { kind: "malformed", code: "UnknownKind", reason };
  }
  return { kind: "peer", namespace, name };
}

export type Reachability = { readonly peer: string; readonly reachable: boolean };

/** The Peers to probe, the reachability of those left alone, and why they were. */
export interface PeerScope {
  readonly peers: KubeObject[];
  /** A tick's Peers that are not due (unreachable, between their 10 s probes), as stored. */
  readonly held: readonly Reachability[];
  readonly skipped?: string;
}

/** The heartbeat state a Peer's status keeps (upstream keeps it in memory). */
export function memoryOf(status: unknown): HeartbeatMemory {
  const parsed = peerStatusSchema.safeParse(status ?? {});
  const s = parsed.success ? parsed.data : {};
  const reachable = s.conditions?.find((c) => c.type === "PeerReachable")?.status;
  return {
    reachable: reachable === undefined ? undefined : reachable === "True",
    consecutiveSuccesses: s.consecutiveSuccesses ?? 0,
    consecutiveFailures: s.consecutiveFailures ?? 0,
    labels: s.labels,
  };
}

/** A tick: every Peer read, split into those due now and those that keep their stored answer. */
export function planTickScope(
  all: readonly KubeObject[],
  now: string,
  cadence: HeartbeatCadence,
): PeerScope {
  const nowMs = Date.parse(now);
  const isDue = (p: KubeObject) => heartbeatDue(memoryOf(p.status).reachable, nowMs, cadence);
  const due: KubeObject[] = [];
  const waiting: KubeObject[] = [];
  for (const p of all) (isDue(p) ? due : waiting).push(p);
  // A tick reports every Peer: those not due keep the reachability their status says.
  const held = waiting.map((p) => ({
    peer: p.metadata.name,
    reachable: memoryOf(p.status).reachable === true,
  }));
  return waiting.length === 0
    ? { peers: due, held }
    : { peers: due, held, skipped: `${waiting.length} unreachable Peer(s) not due this tick` };
}

/**
 * Whether a Peer's status already answers for its spec: it was heartbeaten at this generation.
 * Its update events are then our own status writes (or label edits), not a reason to probe.
 */
function heartbeatCurrent(peer: KubeObject): boolean {
  const stored = peerStatusSchema.safeParse(peer.status ?? {});
  if (!stored.success) return false;
  const generation = peer.metadata.generation ?? 0;
  const probed = stored.data.conditions?.some((c) => c.type === "PeerReachable") ?? false;
  const stalled = stored.data.conditions?.some((c) => c.type === "Stalled" && c.status === "True");
  return stored.data.observedGeneration === generation && (probed || stalled === true);
}

/** A Peer event: the Peer as read now (undefined: gone). */
export function planPeerEventScope(
  trigger: { readonly namespace: string; readonly name: string },
  peer: KubeObject | undefined,
): PeerScope {
  if (peer === undefined || peer.metadata.deletionTimestamp !== undefined) {
    return { peers: [], held: [] };
  }
  if (heartbeatCurrent(peer)) {
    return {
      peers: [],
      held: [],
      skipped: `Peer ${trigger.namespace}/${trigger.name} unchanged since its last heartbeat (the heartbeat tick checks it)`,
    };
  }
  return { peers: [peer], held: [] };
}
