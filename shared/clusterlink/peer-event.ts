/**
 * clusterlink-peer-health's one entry: a Peer event or the resync -> heartbeat the Peers it
 * concerns (all in parallel, so silent gateways do not serialize), plan their reachability
 * with the thresholds kept in status (plan-peer-health.ts), write status when it changed.
 * Peers outside the ClusterLink namespace are not heartbeaten, and their status says so.
 *
 * Outcomes: done when every status is written (an unreachable Peer is a state, not a failure);
 * retry when the client certificate cannot be read (the Peers say so) or on API errors;
 * malformed for events of other kinds.
 */
import type { Log } from "../core/context.js";
import { done, malformed, retryLater, worstOutcome, type Outcome } from "../core/outcome.js";
import type { IntakeEvent } from "../events/index.js";
import {
  clusterLinkResource,
  isKubeError,
  type EventRecorder,
  type KubeClient,
  type KubeObject,
} from "../kube/index.js";
import { planClusterLinkEvents } from "./plan-events.js";
import { recordClusterLinkEvents } from "./record-events.js";
import { peerSpecSchema, peerStatusSchema } from "../rules/clusterlink-kinds.js";
import { heartbeat, InvalidPeerTlsError, type PeerTls } from "./heartbeat.js";
import { planPeerHealth, type HeartbeatMemory } from "./plan-peer-health.js";
import { planStatus, reconcileConditions, type WantedCondition } from "./plan-status.js";

const PEERS = clusterLinkResource("Peer");

export interface PeerEventOptions {
  readonly now: string;
  readonly clNamespace: string;
  /** The client certificate, key and CA; rejects when they cannot be read. */
  readonly tls: () => Promise<PeerTls>;
  readonly timeoutMs: number;
  /** Where transitions an operator must see are recorded (plan-events.ts). */
  readonly events?: EventRecorder;
  /**
   * Told each heartbeaten Peer's reachability (the function's metrics). `complete`: every Peer of
   * the ClusterLink namespace was heartbeaten (a resync).
   */
  readonly onPeersChecked?: (
    peers: readonly { readonly peer: string; readonly reachable: boolean }[],
    complete: boolean,
  ) => void;
}

function memoryOf(status: unknown): HeartbeatMemory {
  const parsed = peerStatusSchema.safeParse(status ?? {});
  const s = parsed.success ? parsed.data : {};
  const reachable = s.conditions?.find((c) => c.type === "PeerReachable")?.status;
  return {
    reachable: reachable === undefined ? undefined : reachable === "True",
    consecutiveSuccesses: s.consecutiveSuccesses ?? 0,
    consecutiveFailures: s.consecutiveFailures ?? 0,
    lastSeen: s.lastSeen,
    labels: s.labels,
  };
}

/** Removed labels become null: a merge patch would otherwise keep them. */
function labelsPatch(
  before: Readonly<Record<string, string>> | undefined,
  after: Readonly<Record<string, string>> | undefined,
): Record<string, string | null> | undefined {
  if (after === undefined) return undefined;
  const removed = Object.keys(before ?? {}).filter((k) => !(k in after));
  return { ...Object.fromEntries(removed.map((k) => [k, null])), ...after };
}

async function writeStatus(
  kube: KubeClient,
  peer: KubeObject,
  conditions: readonly WantedCondition[],
  extra: Record<string, unknown>,
  options: PeerEventOptions,
): Promise<boolean> {
  const stored = peerStatusSchema.safeParse(peer.status ?? {});
  const before = stored.success ? stored.data : undefined;
  const plan = planStatus(before, conditions, peer.metadata.generation ?? 0, options.now);
  const current = (peer.status ?? {}) as Record<string, unknown>;
  const extraChanged = Object.entries(extra).some(
    ([k, v]) => JSON.stringify(current[k] ?? null) !== JSON.stringify(v ?? null),
  );
  if (plan.write === null && !extraChanged) return false;
  const status = { ...(plan.write ?? {}), ...extra };
  const key = { namespace: peer.metadata.namespace ?? "", name: peer.metadata.name };
  await kube.patchStatus(PEERS, key, status);
  await recordClusterLinkEvents(
    options.events,
    { kind: "Peer", ...key, uid: peer.metadata.uid ?? "" },
    planClusterLinkEvents(before, conditions),
  );
  return true;
}

async function checkPeer(
  kube: KubeClient,
  peer: KubeObject,
  tls: PeerTls,
  options: PeerEventOptions,
  seen: Map<string, boolean>,
): Promise<Outcome> {
  const ref = `Peer ${peer.metadata.namespace ?? ""}/${peer.metadata.name}`;
  const spec = peerSpecSchema.safeParse(peer.spec ?? {});
  const gateways = spec.success ? spec.data.gateways : [];
  const before = memoryOf(peer.status);
  const beat = await heartbeat(peer.metadata.name, gateways, tls, options.timeoutMs);
  const plan = planPeerHealth(before, beat, options.now);
  seen.set(peer.metadata.name, plan.reachable);
  const ready = plan.reachable
    ? reconcileConditions({ kind: "ready", reason: "Reachable", message: "" })
    : reconcileConditions({
        kind: "reconciling",
        reason: "Unreachable",
        message: plan.condition.message,
      });
  const m = plan.memory;
  await writeStatus(
    kube,
    peer,
    [plan.condition, ...ready],
    {
      consecutiveSuccesses: m.consecutiveSuccesses,
      consecutiveFailures: m.consecutiveFailures,
      ...(m.lastSeen ? { lastSeen: m.lastSeen } : {}),
      ...(m.labels ? { labels: labelsPatch(before.labels, m.labels) } : {}),
    },
    options,
  );
  return done(`${ref} ${plan.reachable ? "reachable" : "unreachable"}`);
}

/** Every Peer heartbeaten at once; their reachability reported when all are done. */
async function checkAll(
  kube: KubeClient,
  peers: readonly KubeObject[],
  tls: PeerTls,
  options: PeerEventOptions,
  complete: boolean,
): Promise<Outcome[]> {
  const seen = new Map<string, boolean>();
  const checked = await Promise.all(peers.map((p) => checkPeer(kube, p, tls, options, seen)));
  const reachability = [...seen].map(([peer, reachable]) => ({ peer, reachable }));
  options.onPeersChecked?.(reachability, complete);
  return checked;
}

async function ignorePeer(
  kube: KubeClient,
  peer: KubeObject,
  options: PeerEventOptions,
): Promise<Outcome> {
  const message = `Peers are read only in the ClusterLink namespace '${options.clNamespace}'`;
  const conditions = reconcileConditions({
    kind: "stalled",
    reason: "OutsideClusterLinkNamespace",
    message,
  });
  await writeStatus(kube, peer, conditions, {}, options);
  return done(`Peer ${peer.metadata.namespace ?? ""}/${peer.metadata.name} ignored: ${message}`);
}

async function peersOf(
  kube: KubeClient,
  event: IntakeEvent,
  clNamespace: string,
): Promise<KubeObject[]> {
  if (event.type === "resync") return kube.list(PEERS, { namespace: clNamespace });
  const peer = await kube.get(PEERS, { namespace: event.ref.namespace, name: event.ref.name });
  return peer === undefined || peer.metadata.deletionTimestamp !== undefined ? [] : [peer];
}

export async function syncPeerEvent(
  event: IntakeEvent,
  kube: KubeClient,
  log: Log,
  options: PeerEventOptions,
): Promise<Outcome> {
  if (event.type === "object" && event.ref.kind !== "Peer") {
    return malformed(
      "unsupported-kind",
      `clusterlink-peer-health handles Peer events, not ${event.ref.kind}`,
    );
  }
  try {
    const peers = await peersOf(kube, event, options.clNamespace);
    const outside = peers.filter((p) => p.metadata.namespace !== options.clNamespace);
    const inside = peers.filter((p) => p.metadata.namespace === options.clNamespace);
    const ignored = await Promise.all(outside.map((p) => ignorePeer(kube, p, options)));
    if (inside.length === 0)
      return ignored.length === 0 ? done("no Peer to check") : worstOutcome(ignored);
    let tls: PeerTls;
    try {
      tls = await options.tls();
    } catch (error) {
      const invalid = error instanceof InvalidPeerTlsError;
      const message = invalid
        ? (error as Error).message
        : `the client certificate, key or CA cannot be read: ${(error as Error).message}`;
      const conditions = reconcileConditions({
        kind: "stalled",
        reason: invalid ? "TlsMaterialInvalid" : "TlsMaterialMissing",
        message,
      });
      await Promise.all(inside.map((p) => writeStatus(kube, p, conditions, {}, options)));
      return retryLater(message, 30);
    }
    const checked = await checkAll(kube, inside, tls, options, event.type === "resync");
    log.debug({ peers: inside.length }, "peers heartbeaten");
    return worstOutcome([...ignored, ...checked]);
  } catch (error) {
    if (isKubeError(error) && (error.retryable || error.code === "forbidden"))
      return retryLater(error.message);
    throw error;
  }
}
