/**
 * clusterlink-import's appliers, one per kind of event (on-import-event.ts dispatches): re-read
 * every Import (leases derive from all of them, plan-lease.ts), bring those in scope
 * (plan-import-scope.ts) to their plan (plan-import.ts), write status only when it changed. A lease is
 * written first and re-checked by the next round, so racing instances find out; rounds stop when
 * one leases nothing.
 */
import type { Log } from "../core/context.js";
import { batchOutcome, done, retryLater, worstOutcome, type Outcome } from "../core/outcome.js";
import {
  apiVersionOf,
  eachObject,
  ENDPOINT_SLICES,
  raced,
  readOptions,
  retryOnConflict,
  SERVICES,
  type EventRegarding,
  type KubeObject,
} from "../kube/index.js";
import { CLUSTERLINK_API_VERSION } from "../kinds/clusterlink.js";
import {
  importOfLabels,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  MERGE_LABEL,
  type ImportKey,
} from "./names.js";
import {
  deleteIfStill,
  keyOf,
  leaseClaimOf,
  listImports,
  listPeers,
  peerNamesOf,
  readPeers,
  removeCopiesOf,
  removeServicesOf,
  settleImport,
  type ImportEventOptions,
} from "./apply-import.js";
import { settleByPort } from "./lease-by-port.js";
import { observeImport, type ObservedImport } from "./observed.js";
import { grantedPort } from "./plan-import.js";
import { planLeases, type LeaseClaim } from "./plan-lease.js";
import { SERVICE_NAME_LABEL, SLICE_MANAGED_BY_LABEL } from "./plan-merge.js";
import { planStatus, reconcileConditions } from "./plan-status.js";
import {
  importOfCopyName,
  inFocus,
  portInvalid,
  serviceFocus,
  sourcesReportChanged,
  type Focus,
} from "./plan-import-scope.js";
import type { ClusterLinkStore } from "./store.js";

const isMerge = (imp: ObservedImport): boolean => imp.labels[MERGE_LABEL] === "true";

/** An event's options with its log: what a round reports a skipped Import with. */
export interface RoundOptions extends ImportEventOptions {
  readonly log: Log;
}

const importRegarding = (imp: ObservedImport): EventRegarding => ({
  apiVersion: CLUSTERLINK_API_VERSION,
  kind: "Import",
  namespace: imp.namespace,
  name: imp.name,
  uid: imp.uid,
});

/**
 * What an Import that could not be settled is told beside eachObject's Event: Ready False with
 * why, Stalled (or Reconciling, for what a retry may fix). Re-read: its lease may have been written.
 */
async function recordSkipped(
  store: ClusterLinkStore,
  key: ImportKey,
  outcome: Outcome,
  options: RoundOptions,
): Promise<void> {
  const live = await store.getImport(key);
  if (live === undefined || outcome.kind === "done") return;
  const imp = observeImport(live);
  const kind = outcome.kind === "retry" ? "reconciling" : "stalled";
  const wanted = reconcileConditions({ kind, reason: "ReconcileFailed", message: outcome.reason });
  const status = planStatus(imp.status, wanted, imp.generation, options.now);
  if (status.write === null) return;
  await store.patchImportStatus(imp, status.write, { resourceVersion: imp.resourceVersion });
}

/**
 * The resync's sweep: every Service with our labels whose Import is gone (a lost delete), and
 * every EndpointSlice copy whose Import is gone or no longer merge. One that cannot be deleted is
 * reported on itself and left for the next resync.
 */
async function sweepOrphans(
  store: ClusterLinkStore,
  imports: readonly ObservedImport[],
  options: RoundOptions,
): Promise<Outcome[]> {
  const live = new Set(imports.filter((i) => !i.deleting).map(keyOf));
  const merging = new Set(imports.filter((i) => !i.deleting && isMerge(i)).map(keyOf));
  const [ours, copies] = await Promise.all([
    store.listServices({ labelSelector: { [MANAGED_BY_LABEL]: MANAGED_BY } }),
    store.listEndpointSlices({ labelSelector: { [SLICE_MANAGED_BY_LABEL]: MANAGED_BY } }),
  ]);
  // Each delete is of the version whose labels were checked (deleteIfStill): a Service relabelled
  // or replaced since the list is decided again, never removed on the list's word.
  const orphanService = (svc: KubeObject): boolean => {
    const owner = importOfLabels(svc.metadata.labels);
    return owner !== undefined && !live.has(keyOf(owner));
  };
  const orphanCopy = (copy: KubeObject): boolean => {
    const labels = copy.metadata.labels ?? {};
    const owner = {
      namespace: copy.metadata.namespace ?? "",
      name: labels[SERVICE_NAME_LABEL] ?? "",
    };
    return labels[SLICE_MANAGED_BY_LABEL] === MANAGED_BY && !merging.has(keyOf(owner));
  };
  const orphans = [
    ...ours.filter(orphanService).map((object) => ({
      kind: "Service" as const,
      type: SERVICES,
      object,
      still: orphanService,
    })),
    ...copies.filter(orphanCopy).map((object) => ({
      kind: "EndpointSlice" as const,
      type: ENDPOINT_SLICES,
      object,
      still: orphanCopy,
    })),
  ];
  return eachObject(
    orphans,
    async ({ kind, object, still }) =>
      (await deleteIfStill(store, kind, object, still))
        ? done("removed")
        : done("not an orphan now"),
    {
      regarding: ({ type, object }) => ({
        apiVersion: apiVersionOf(type),
        kind: type.kind,
        namespace: object.metadata.namespace ?? "",
        name: object.metadata.name,
        uid: object.metadata.uid ?? "",
      }),
      log: options.log,
      events: options.events,
    },
  );
}

interface RoundResult {
  readonly leased: number;
  /** Per Import key. */
  readonly outcomes: ReadonlyMap<string, Outcome>;
}

/**
 * One round: list (the Imports, and the Peers once for all of them), plan leases, settle the
 * focused Imports and every re-lease loser. An Import that cannot be settled is reported on
 * itself and skipped (eachObject); a race is the round's, which is run again.
 */
async function round(
  store: ClusterLinkStore,
  focus: (imports: readonly ObservedImport[]) => Focus,
  options: RoundOptions,
  settledPorts: Map<string, number>,
): Promise<RoundResult> {
  const [imports, peers] = await Promise.all([
    listImports(store),
    listPeers(store, options.clNamespace),
  ]);
  const claims = imports.map(leaseClaimOf).filter((c): c is LeaseClaim => c !== null);
  const decisions = planLeases(claims);
  const focused = focus(imports);
  const settling = imports.filter((imp) =>
    inFocus(imp, decisions.get(keyOf(imp)), focused, settledPorts),
  );
  let leased = 0;
  const settled = await eachObject(
    settling,
    async (imp) => {
      const key = keyOf(imp);
      const decision = decisions.get(key);
      const { outcome } = await settleImport(store, imp, decision, options, {
        fromOwnEvent: key === focused.own,
        peers,
      });
      if (decision?.kind === "lease") leased += 1;
      const port = grantedPort(decision);
      if (port !== null) settledPorts.set(key, port);
      return outcome;
    },
    {
      regarding: importRegarding,
      log: options.log,
      events: options.events,
      rethrow: raced,
      onFailure: (imp, outcome) => recordSkipped(store, imp, outcome, options),
    },
  );
  const outcomes = new Map(settling.map((imp, i) => [keyOf(imp), settled[i] ?? done("")]));
  return { leased, outcomes };
}

async function rounds(
  store: ClusterLinkStore,
  focus: (imports: readonly ObservedImport[]) => Focus,
  options: RoundOptions,
): Promise<Outcome[]> {
  const settledPorts = new Map<string, number>();
  const max = options.maxRounds ?? 5;
  const latest = new Map<string, Outcome>();
  for (let n = 1; n <= max; n += 1) {
    const result = await retryOnConflict({ attempts: 5, isRace: raced }, () =>
      round(store, focus, options, settledPorts),
    );
    for (const [key, outcome] of result.outcomes) latest.set(key, outcome);
    if (result.leased === 0) return [...latest.values()];
  }
  return [retryLater(`leases still moving after ${max} rounds`, 1)];
}

/**
 * A live Import is settled by its port alone (lease-by-port.ts: a few small lists). A deleted one
 * loses its Services, and every Import whose requested port was taken is looked at again, from
 * the full list: this Import may have been the holder.
 */
export async function onImportEvent(
  store: ClusterLinkStore,
  ref: ImportKey,
  options: RoundOptions,
): Promise<Outcome> {
  const own = keyOf(ref);
  const live = await store.getImport(ref);
  if (live !== undefined && live.metadata.deletionTimestamp === undefined) {
    const settled = await settleByPort(store, ref, options, { fromOwnEvent: true, read: live });
    const outcomes = [...(settled.own ? [settled.own] : []), ...settled.others].map(
      (s) => s.outcome,
    );
    return worstOutcome(outcomes);
  }
  const outcomes = await rounds(
    store,
    (imports) => ({ keys: new Set(imports.filter(portInvalid).map(keyOf)), own: null, all: false }),
    options,
  );
  const [removed, copies] = await Promise.all([
    removeServicesOf(store, ref, options.clNamespace),
    removeCopiesOf(store, ref),
  ]);
  outcomes.push(
    done(`Import ${own} is gone, ${removed} Services and ${copies} EndpointSlice copies removed`),
  );
  return batchOutcome(outcomes);
}

/**
 * Most Service events concern no Import: two reads say so (its labels, an Import named like it).
 * Only a Service in the ClusterLink namespace without our labels (a system Service deleted, or
 * someone else's at its name) needs the full list, to find the Import by its system name.
 */
export async function onServiceEvent(
  store: ClusterLinkStore,
  ref: ImportKey,
  options: RoundOptions,
): Promise<Outcome> {
  const svc = await store.getService(ref);
  const labelled = importOfLabels(svc?.metadata.labels);
  if (labelled === undefined && ref.namespace === options.clNamespace) {
    const outcomes = await rounds(
      store,
      (imports) => ({
        keys: serviceFocus(imports, ref, labelled, options.clNamespace),
        own: null,
        all: false,
      }),
      options,
    );
    return outcomes.length === 0
      ? done(`no Import uses Service ${keyOf(ref)}`)
      : batchOutcome(outcomes);
  }
  const keys = new Map([ref, ...(labelled ? [labelled] : [])].map((k) => [keyOf(k), k]));
  const outcomes: Outcome[] = [];
  for (const key of keys.values()) {
    const settled = await settleByPort(store, key, options, { fromOwnEvent: false });
    outcomes.push(...[settled.own, ...settled.others].flatMap((x) => (x ? [x.outcome] : [])));
  }
  if (labelled !== undefined && (await store.getImport(labelled)) === undefined) {
    const removed = await removeServicesOf(store, labelled, options.clNamespace);
    outcomes.push(done(`Import ${keyOf(labelled)} is gone, ${removed} Services removed`));
  }
  return outcomes.length === 0
    ? done(`no Import uses Service ${keyOf(ref)}`)
    : worstOutcome(outcomes);
}

/** Every Import, then the sweep: an Import that cannot be settled never keeps the sweep from running. */
export async function onResync(store: ClusterLinkStore, options: RoundOptions): Promise<Outcome> {
  const outcomes = await rounds(store, () => ({ keys: new Set(), own: null, all: true }), options);
  const swept = await sweepOrphans(store, await listImports(store), options);
  const removed = swept.filter((o) => o.kind === "done" && o.result === "removed").length;
  outcomes.push(...swept.filter((o) => o.kind !== "done"));
  outcomes.push(done(`${removed} orphaned Services and EndpointSlice copies removed`));
  return batchOutcome(outcomes);
}

/**
 * A dataplane EndpointSlice (ClusterLink namespace) changed: every merge Import re-copies. A
 * copy changed or deleted elsewhere: its Import is settled again (or, gone, loses its copies).
 */
export async function onEndpointSliceEvent(
  store: ClusterLinkStore,
  ref: ImportKey,
  options: ImportEventOptions,
): Promise<Outcome> {
  if (ref.namespace === options.clNamespace) {
    const merging = await store.listImports({ labelSelector: { [MERGE_LABEL]: "true" } });
    const outcomes: Outcome[] = [];
    for (const imp of merging) {
      const key = { namespace: imp.metadata.namespace ?? "", name: imp.metadata.name };
      const settled = await settleByPort(store, key, options, { fromOwnEvent: false, read: imp });
      if (settled.own !== null) outcomes.push(settled.own.outcome);
    }
    return outcomes.length === 0 ? done("no merge Import to copy to") : worstOutcome(outcomes);
  }
  const slice = await store.getEndpointSlice(ref);
  const labels = slice?.metadata.labels ?? {};
  const owner =
    slice === undefined
      ? importOfCopyName(ref.name)
      : labels[SLICE_MANAGED_BY_LABEL] === MANAGED_BY
        ? labels[SERVICE_NAME_LABEL]
        : undefined;
  if (owner === undefined) return done(`EndpointSlice ${keyOf(ref)} is not a copy of ours`);
  const key = { namespace: ref.namespace, name: owner };
  const settled = await settleByPort(store, key, options, { fromOwnEvent: false });
  if (settled.own !== null) return settled.own.outcome;
  const removed = await removeCopiesOf(store, key);
  return done(`Import ${keyOf(key)} is gone, ${removed} EndpointSlice copies removed`);
}

/** Imports re-settled at once for one Peer event (each a handful of requests). */
const PEER_EVENT_CONCURRENCY = 8;

/**
 * A Peer's status changed (clusterlink-peer-health writes it on every heartbeat that changes
 * something, lastSeen included): the Imports naming it whose sources' report is now wrong are
 * settled again. Which Imports name it is read from the watch cache (an Import too new for it
 * is settled by its own event, which reads its Peers live); the Peers are read live.
 */
export async function onPeerEvent(
  store: ClusterLinkStore,
  ref: ImportKey,
  options: ImportEventOptions,
): Promise<Outcome> {
  const peer = `Peer ${keyOf(ref)}`;
  if (ref.namespace !== options.clNamespace) {
    return done(`${peer} is outside the ClusterLink namespace: no Import's source names it`);
  }
  const naming = (await store.listImports(readOptions("cached")))
    .map(observeImport)
    .filter((imp) => !imp.deleting && peerNamesOf(imp).includes(ref.name));
  if (naming.length === 0) return done(`no Import names ${peer}`);
  const peers = await readPeers(
    store,
    [...new Set(naming.flatMap(peerNamesOf))],
    options.clNamespace,
  );
  const stale = naming.filter((imp) => sourcesReportChanged(imp, peers, options.clNamespace));
  const outcomes: Outcome[] = [];
  for (let i = 0; i < stale.length; i += PEER_EVENT_CONCURRENCY) {
    const batch = stale.slice(i, i + PEER_EVENT_CONCURRENCY);
    const settled = await Promise.all(
      batch.map((imp) => settleByPort(store, imp, options, { fromOwnEvent: false })),
    );
    outcomes.push(...settled.flatMap((s) => (s.own ? [s.own.outcome] : [])));
  }
  const summary = done(`${stale.length} of ${naming.length} Imports naming ${peer} re-settled`);
  return worstOutcome([summary, ...outcomes]);
}
