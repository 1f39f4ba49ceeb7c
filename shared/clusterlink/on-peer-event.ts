import { isDeepStrictEqual } from "node:util";
/**
 * clusterlink-peer-health's one entry. The heartbeat tick (every second) probes the Peers that are
 * due (plan-peer-health.ts), in parallel; a Peer event probes that Peer only when it is new or its
 * spec changed. Status is written only when reachability changes, with a precondition, so our own
 * writes never start another heartbeat (issue 24). A Peer whose status cannot be written is
 * reported on itself and skipped. Outcomes: docs/code-notes.md (clusterlink/on-peer-event.ts).
 */
import type { Log } from "../core/context.js";
import {
  batchOutcome,
  done,
  malformed,
  retryLater,
  worstOutcome,
  type Outcome,
} from "../core/outcome.js";
import type { IntakeEvent } from "../events/index.js";
import {
  eachObject,
  isKubeError,
  kubeFailureOutcome,
  type EntryContext,
  readOptions,
  type EventRecorder,
  type EventRegarding,
  type KubeObject,
} from "../kube/index.js";
import { planClusterLinkEvents } from "./plan-events.js";
import { recordClusterLinkEvents } from "./record-events.js";
import { CLUSTERLINK_API_VERSION, peerSpecSchema, peerStatusSchema } from "../kinds/clusterlink.js";
import { heartbeat, InvalidPeerTlsError, type PeerTls } from "./heartbeat.js";
import {
  DEFAULT_HEARTBEAT_CADENCE,
  planPeerHealth,
  type HeartbeatCadence,
} from "./plan-peer-health.js";
import { planStatus, reconcileConditions, type WantedCondition } from "./plan-status.js";
import type { ClusterLinkStore } from "./store.js";
import { kubeClusterLinkStore } from "./kube-store.js";
import {
  memoryOf,
  peerTriggerFromEvent,
  planPeerEventScope,
  planTickScope,
  type PeerScope,
  type PeerTrigger,
  type Reachability,
} from "./plan-peer-scope.js";

export interface PeerEventOptions {
  readonly now: string;
  readonly clNamespace: string;
  /** The client certificate, key and CA; rejects when they cannot be read. */
  readonly tls: () => Promise<PeerTls>;
  readonly timeoutMs: number;
  /** Upstream's heartbeat periods; DEFAULT_HEARTBEAT_CADENCE unless set. */
  readonly cadence?: HeartbeatCadence;
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

/** Removed labels become null: a merge patch would otherwise keep them. */
function labelsPatch(
  before: Readonly<Record<string, string>> | undefined,
  after: Readonly<Record<string, string>> | undefined,
): Record<string, string | null> | undefined {
  if (after === undefined) return undefined;
  const removed = Object.keys(before ?? {}).filter((k) => !(k in after));
  return { ...Object.fromEntries(removed.map((k) => [k, null])), ...after };
}

/**
 * The status patch with the resourceVersion read as precondition; false when someone wrote the
 * Peer since (another tick, a spec change): this beat was planned from an older status, so it
 * is dropped and the next tick goes on.
 */
async function patchAsRead(
  store: ClusterLinkStore,
  peer: KubeObject,
  status: Record<string, unknown>,
): Promise<boolean> {
  const key = { namespace: peer.metadata.namespace ?? "", name: peer.metadata.name };
  const resourceVersion = peer.metadata.resourceVersion;
  try {
    await store.patchPeerStatus(key, status, resourceVersion ? { resourceVersion } : {});
    return true;
  } catch (error) {
    if (isKubeError(error, "conflict")) return false;
    throw error;
  }
}

/** A merge patch's nulls (removed keys) read as absent, for comparing with what is stored. */
function withoutNulls(value: unknown): unknown {
  if (value === null || value === undefined) return undefined;
  if (typeof value !== "object" || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}

async function writeStatus(
  store: ClusterLinkStore,
  peer: KubeObject,
  conditions: readonly WantedCondition[],
  extra: Record<string, unknown>,
  options: PeerEventOptions,
): Promise<boolean> {
  const stored = peerStatusSchema.safeParse(peer.status ?? {});
  const before = stored.success ? stored.data : undefined;
  const plan = planStatus(before, conditions, peer.metadata.generation ?? 0, options.now);
  const current = (peer.status ?? {}) as Record<string, unknown>;
  // Compared as values, not as JSON text: a peer may list its labels in any order.
  const extraChanged = Object.entries(extra).some(
    ([k, v]) => !isDeepStrictEqual(withoutNulls(current[k]), withoutNulls(v)),
  );
  if (plan.write === null && !extraChanged) return false;
  const status = { ...(plan.write ?? {}), ...extra };
  const key = { namespace: peer.metadata.namespace ?? "", name: peer.metadata.name };
  if (!(await patchAsRead(store, peer, status))) return false;
  await recordClusterLinkEvents(
    options.events,
    { kind: "Peer", ...key, uid: peer.metadata.uid ?? "" },
    planClusterLinkEvents(before, conditions),
  );
  return true;
}

async function checkPeer(
  store: ClusterLinkStore,
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
  const plan = planPeerHealth(before, beat);
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
    store,
    peer,
    [plan.condition, ...ready],
    {
      consecutiveSuccesses: m.consecutiveSuccesses,
      consecutiveFailures: m.consecutiveFailures,
      ...(m.labels ? { labels: labelsPatch(before.labels, m.labels) } : {}),
    },
    options,
  );
  return done(`${ref} ${plan.reachable ? "reachable" : "unreachable"}`);
}

/**
 * Every Peer heartbeaten at once, each on its own (a Peer whose status cannot be written is
 * reported and skipped); their reachability reported when all are done, with `held`: the Peers
 * not due this tick, as their status has them.
 */
async function checkAll(
  store: ClusterLinkStore,
  peers: readonly KubeObject[],
  tls: PeerTls,
  options: PeerEventOptions,
  tick: { readonly log: Log; readonly held: readonly Reachability[]; readonly complete: boolean },
): Promise<Outcome[]> {
  const { log, held, complete } = tick;
  const seen = new Map<string, boolean>();
  const checked = await eachObject(peers, (p) => checkPeer(store, p, tls, options, seen), {
    regarding: peerRegarding,
    log,
    events: options.events,
    concurrency: peers.length,
  });
  const reachability = [...seen].map(([peer, reachable]) => ({ peer, reachable }));
  options.onPeersChecked?.([...reachability, ...held], complete);
  return checked;
}

async function ignorePeer(
  store: ClusterLinkStore,
  peer: KubeObject,
  options: PeerEventOptions,
): Promise<Outcome> {
  const message = `Peers are read only in the ClusterLink namespace '${options.clNamespace}'`;
  const conditions = reconcileConditions({
    kind: "stalled",
    reason: "OutsideClusterLinkNamespace",
    message,
  });
  await writeStatus(store, peer, conditions, {}, options);
  return done(`Peer ${peer.metadata.namespace ?? ""}/${peer.metadata.name} ignored: ${message}`);
}

const peerRegarding = (peer: KubeObject): EventRegarding => ({
  apiVersion: CLUSTERLINK_API_VERSION,
  kind: "Peer",
  namespace: peer.metadata.namespace ?? "",
  name: peer.metadata.name,
  uid: peer.metadata.uid ?? "",
});

/** The Peers this event concerns, read and scoped (plan-peer-scope.ts). */
async function peersOf(
  store: ClusterLinkStore,
  trigger: Exclude<PeerTrigger, { kind: "malformed" }>,
  options: PeerEventOptions,
): Promise<PeerScope> {
  if (trigger.kind === "tick") {
    // Every second: from the watch cache (a stale Peer only loses its write to the precondition).
    const all = await store.listPeers({
      namespace: options.clNamespace,
      ...readOptions("cached"),
    });
    return planTickScope(all, options.now, options.cadence ?? DEFAULT_HEARTBEAT_CADENCE);
  }
  const peer = await store.getPeer({ namespace: trigger.namespace, name: trigger.name });
  return planPeerEventScope(trigger, peer);
}

/** The client identity, or the retry to answer after every Peer says why there is none. */
async function readTls(
  store: ClusterLinkStore,
  peers: readonly KubeObject[],
  options: PeerEventOptions,
): Promise<{ readonly tls: PeerTls } | { readonly retry: Outcome }> {
  try {
    return { tls: await options.tls() };
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
    await Promise.all(peers.map((p) => writeStatus(store, p, conditions, {}, options)));
    return { retry: retryLater(message, 30) };
  }
}

/** No Peer of the ClusterLink namespace to probe: a tick still reports the Peers it holds. */
function noneProbed(
  ignored: readonly Outcome[],
  tick: { readonly held: readonly Reachability[]; readonly complete: boolean },
  skipped: string | undefined,
  options: PeerEventOptions,
): Outcome {
  if (tick.complete) options.onPeersChecked?.(tick.held, true);
  return ignored.length === 0 ? done(skipped ?? "no Peer to check") : worstOutcome(ignored);
}

/** clusterlink-peer-health's context: the API, the log, the clock, and its own settings. */
export type PeerEventContext = EntryContext & Omit<PeerEventOptions, "now" | "events">;

export async function syncPeerEvent(event: IntakeEvent, ctx: PeerEventContext): Promise<Outcome> {
  const { kube, log, now, ...settings } = ctx;
  const store = kubeClusterLinkStore(kube);
  const options: PeerEventOptions = { ...settings, now: now() };
  const trigger = peerTriggerFromEvent(event);
  if (trigger.kind === "malformed") return malformed(trigger.code, trigger.reason);
  try {
    const { peers, held, skipped } = await peersOf(store, trigger, options);
    const complete = trigger.kind === "tick";
    const outside = peers.filter((p) => p.metadata.namespace !== options.clNamespace);
    const inside = peers.filter((p) => p.metadata.namespace === options.clNamespace);
    const ignored = await Promise.all(outside.map((p) => ignorePeer(store, p, options)));
    if (inside.length === 0) return noneProbed(ignored, { held, complete }, skipped, options);
    const tls = await readTls(store, inside, options);
    if ("retry" in tls) return tls.retry;
    const checked = await checkAll(store, inside, tls.tls, options, { log, held, complete });
    log.debug({ peers: inside.length }, "peers heartbeaten");
    return batchOutcome([...ignored, ...checked]);
  } catch (error) {
    return kubeFailureOutcome(error, "heartbeating the Peers", {
      notFound: "raced",
      retryAfterSeconds: 5,
    });
  }
}
