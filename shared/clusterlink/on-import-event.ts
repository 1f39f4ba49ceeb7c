/**
 * clusterlink-import's one entry: an Import, Service, EndpointSlice or Peer event (or a resync) ->
 * re-read every Import (leases are derived from all of them, plan-lease.ts), bring the Imports
 * the event concerns to their plan (plan-import.ts), and write status only when it changed.
 *
 * A lease is written into the Import's spec first; the next round re-lists and re-plans, so two
 * instances that leased one port in the same instant find out, and the younger Import moves
 * (whoever notices moves it). Rounds stop when a round leases nothing.
 *
 * Outcomes: done when every Import touched is as planned (one that cannot be served is Stalled
 * and recorded, still done when a Service or the resync brought it); permanent (422, Stalled)
 * for an Import event whose Import cannot be served; retry on API errors and repeated races;
 * malformed for events of other kinds. Nothing lingers: an Import delete event removes its
 * Services, and the resync removes Services whose Import is gone (docs/adr/0006). A Peer event
 * re-settles the Imports whose sources' report (plan-sources.ts) it changed.
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
  apiVersionOf,
  eachObject,
  ENDPOINT_SLICES,
  kubeFailureOutcome,
  raced,
  readOptions,
  retryOnConflict,
  SERVICES,
  type EventRegarding,
  type KubeClient,
  type KubeObject,
} from "../kube/index.js";
import { CLUSTERLINK_API_VERSION } from "../rules/clusterlink-kinds.js";
import {
  importOfLabels,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  MERGE_LABEL,
  systemServiceName,
  type ImportKey,
} from "./names.js";
import {
  deleteIfStill,
  IMPORTS,
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
import { LeaseRaceError, settleByPort } from "./lease-by-port.js";
import { observeImport, type ObservedImport } from "./observed.js";
import { grantedPort } from "./plan-import.js";
import { planLeases, type LeaseClaim, type LeaseDecision } from "./plan-lease.js";
import { SERVICE_NAME_LABEL, SLICE_MANAGED_BY_LABEL } from "./plan-merge.js";
import { planSources, SOURCES_CONDITION } from "./plan-sources.js";
import { planStatus, reconcileConditions } from "./plan-status.js";

const isMerge = (imp: ObservedImport): boolean => imp.labels[MERGE_LABEL] === "true";

/** An event's options with its log: what a round reports a skipped Import with. */
interface RoundOptions extends ImportEventOptions {
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
  kube: KubeClient,
  key: ImportKey,
  outcome: Outcome,
  options: RoundOptions,
): Promise<void> {
  const live = await kube.get(IMPORTS, key);
  if (live === undefined || outcome.kind === "done") return;
  const imp = observeImport(live);
  const kind = outcome.kind === "retry" ? "reconciling" : "stalled";
  const wanted = reconcileConditions({ kind, reason: "ReconcileFailed", message: outcome.reason });
  const status = planStatus(imp.status, wanted, imp.generation, options.now);
  if (status.write === null) return;
  await kube.patchStatus(IMPORTS, imp, status.write, { resourceVersion: imp.resourceVersion });
}

/**
 * The resync's sweep: every Service with our labels whose Import is gone (a lost delete), and
 * every EndpointSlice copy whose Import is gone or no longer merge. One that cannot be deleted is
 * reported on itself and left for the next resync.
 */
async function sweepOrphans(
  kube: KubeClient,
  imports: readonly ObservedImport[],
  options: RoundOptions,
): Promise<Outcome[]> {
  const live = new Set(imports.filter((i) => !i.deleting).map(keyOf));
  const merging = new Set(imports.filter((i) => !i.deleting && isMerge(i)).map(keyOf));
  const [ours, copies] = await Promise.all([
    kube.list(SERVICES, { labelSelector: { [MANAGED_BY_LABEL]: MANAGED_BY } }),
    kube.list(ENDPOINT_SLICES, { labelSelector: { [SLICE_MANAGED_BY_LABEL]: MANAGED_BY } }),
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
    ...ours
      .filter(orphanService)
      .map((object) => ({ type: SERVICES, object, still: orphanService })),
    ...copies
      .filter(orphanCopy)
      .map((object) => ({ type: ENDPOINT_SLICES, object, still: orphanCopy })),
  ];
  return eachObject(
    orphans,
    async ({ type, object, still }) =>
      (await deleteIfStill(kube, type, object, still))
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

/** Which Imports an event concerns, as keys; `own` is the Import the event is about, if any. */
interface Focus {
  readonly keys: ReadonlySet<string>;
  readonly own: string | null;
  readonly all: boolean;
}

const portInvalid = (imp: ObservedImport): boolean =>
  imp.status?.conditions?.some((c) => c.type === "ImportTargetPortValid" && c.status === "False") ??
  false;

/** Service events: the Import named like it, the Import whose system Service it is, its labels' Import. */
function serviceFocus(
  imports: readonly ObservedImport[],
  ref: { namespace: string; name: string },
  labelled: ImportKey | undefined,
  clNamespace: string,
): Set<string> {
  const keys = new Set<string>([keyOf(ref)]);
  if (labelled !== undefined) keys.add(keyOf(labelled));
  if (ref.namespace === clNamespace) {
    for (const imp of imports) {
      if (systemServiceName(imp, clNamespace) === ref.name) keys.add(keyOf(imp));
    }
  }
  return keys;
}

/**
 * Whether this round settles an Import: it is in focus, or it lost its leased port to an older
 * Import (someone must move it, and no event of its own may come). One already settled in an
 * earlier round of this event, still holding that port, needs nothing more.
 */
function inFocus(
  imp: ObservedImport,
  decision: LeaseDecision | undefined,
  focus: Focus,
  settledPorts: ReadonlyMap<string, number>,
): boolean {
  const key = keyOf(imp);
  if (imp.deleting) return false;
  if (decision?.kind === "held" && settledPorts.get(key) === decision.port) return false;
  const loser = decision?.kind === "lease" && decision.previous !== 0;
  return focus.all || focus.keys.has(key) || loser;
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
  kube: KubeClient,
  focus: (imports: readonly ObservedImport[]) => Focus,
  options: RoundOptions,
  settledPorts: Map<string, number>,
): Promise<RoundResult> {
  const [imports, peers] = await Promise.all([
    listImports(kube),
    listPeers(kube, options.clNamespace),
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
      const { outcome } = await settleImport(kube, imp, decision, options, {
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
      onFailure: (imp, outcome) => recordSkipped(kube, imp, outcome, options),
    },
  );
  const outcomes = new Map(settling.map((imp, i) => [keyOf(imp), settled[i] ?? done("")]));
  return { leased, outcomes };
}

async function rounds(
  kube: KubeClient,
  focus: (imports: readonly ObservedImport[]) => Focus,
  options: RoundOptions,
): Promise<Outcome[]> {
  const settledPorts = new Map<string, number>();
  const max = options.maxRounds ?? 5;
  const latest = new Map<string, Outcome>();
  for (let n = 1; n <= max; n += 1) {
    const result = await retryOnConflict({ attempts: 5, isRace: raced }, () =>
      round(kube, focus, options, settledPorts),
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
async function onImportEvent(
  kube: KubeClient,
  ref: ImportKey,
  options: RoundOptions,
): Promise<Outcome> {
  const own = keyOf(ref);
  const live = await kube.get(IMPORTS, ref);
  if (live !== undefined && live.metadata.deletionTimestamp === undefined) {
    const settled = await settleByPort(kube, ref, options, { fromOwnEvent: true, read: live });
    const outcomes = [...(settled.own ? [settled.own] : []), ...settled.others].map(
      (s) => s.outcome,
    );
    return worstOutcome(outcomes);
  }
  const outcomes = await rounds(
    kube,
    (imports) => ({ keys: new Set(imports.filter(portInvalid).map(keyOf)), own: null, all: false }),
    options,
  );
  const [removed, copies] = await Promise.all([
    removeServicesOf(kube, ref, options.clNamespace),
    removeCopiesOf(kube, ref),
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
async function onServiceEvent(
  kube: KubeClient,
  ref: ImportKey,
  options: RoundOptions,
): Promise<Outcome> {
  const svc = await kube.get(SERVICES, ref);
  const labelled = importOfLabels(svc?.metadata.labels);
  if (labelled === undefined && ref.namespace === options.clNamespace) {
    const outcomes = await rounds(
      kube,
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
    const settled = await settleByPort(kube, key, options, { fromOwnEvent: false });
    outcomes.push(...[settled.own, ...settled.others].flatMap((x) => (x ? [x.outcome] : [])));
  }
  if (labelled !== undefined && (await kube.get(IMPORTS, labelled)) === undefined) {
    const removed = await removeServicesOf(kube, labelled, options.clNamespace);
    outcomes.push(done(`Import ${keyOf(labelled)} is gone, ${removed} Services removed`));
  }
  return outcomes.length === 0
    ? done(`no Import uses Service ${keyOf(ref)}`)
    : worstOutcome(outcomes);
}

/** Every Import, then the sweep: an Import that cannot be settled never keeps the sweep from running. */
async function onResync(kube: KubeClient, options: RoundOptions): Promise<Outcome> {
  const outcomes = await rounds(kube, () => ({ keys: new Set(), own: null, all: true }), options);
  const swept = await sweepOrphans(kube, await listImports(kube), options);
  const removed = swept.filter((o) => o.kind === "done" && o.result === "removed").length;
  outcomes.push(...swept.filter((o) => o.kind !== "done"));
  outcomes.push(done(`${removed} orphaned Services and EndpointSlice copies removed`));
  return batchOutcome(outcomes);
}

/** The Import a copy belongs to, from its name (`clusterlink-<len>-<import>-<slice>`). */
function importOfCopyName(name: string): string | undefined {
  const match = /^clusterlink-(\d+)-/.exec(name);
  if (match === null) return undefined;
  const rest = name.slice(match[0].length);
  const length = Number(match[1]);
  return rest.length > length && rest[length] === "-" ? rest.slice(0, length) : undefined;
}

/**
 * A dataplane EndpointSlice (ClusterLink namespace) changed: every merge Import re-copies. A
 * copy changed or deleted elsewhere: its Import is settled again (or, gone, loses its copies).
 */
async function onEndpointSliceEvent(
  kube: KubeClient,
  ref: ImportKey,
  options: ImportEventOptions,
): Promise<Outcome> {
  if (ref.namespace === options.clNamespace) {
    const merging = await kube.list(IMPORTS, { labelSelector: { [MERGE_LABEL]: "true" } });
    const outcomes: Outcome[] = [];
    for (const imp of merging) {
      const key = { namespace: imp.metadata.namespace ?? "", name: imp.metadata.name };
      const settled = await settleByPort(kube, key, options, { fromOwnEvent: false, read: imp });
      if (settled.own !== null) outcomes.push(settled.own.outcome);
    }
    return outcomes.length === 0 ? done("no merge Import to copy to") : worstOutcome(outcomes);
  }
  const slice = await kube.get(ENDPOINT_SLICES, ref);
  const labels = slice?.metadata.labels ?? {};
  const owner =
    slice === undefined
      ? importOfCopyName(ref.name)
      : labels[SLICE_MANAGED_BY_LABEL] === MANAGED_BY
        ? labels[SERVICE_NAME_LABEL]
        : undefined;
  if (owner === undefined) return done(`EndpointSlice ${keyOf(ref)} is not a copy of ours`);
  const key = { namespace: ref.namespace, name: owner };
  const settled = await settleByPort(kube, key, options, { fromOwnEvent: false });
  if (settled.own !== null) return settled.own.outcome;
  const removed = await removeCopiesOf(kube, key);
  return done(`Import ${keyOf(key)} is gone, ${removed} EndpointSlice copies removed`);
}

/** Whether the stored report of an Import's sources differs from what the Peers say now. */
function sourcesReportChanged(
  imp: ObservedImport,
  peers: Parameters<typeof planSources>[1],
  clNamespace: string,
): boolean {
  if (!imp.spec.ok) return false;
  const want = planSources(imp.spec.value.sources ?? [], peers, clNamespace).condition;
  const stored = imp.status?.conditions?.find((c) => c.type === SOURCES_CONDITION);
  return (
    stored?.status !== want.status ||
    stored.reason !== want.reason ||
    stored.message !== want.message
  );
}

/** Imports re-settled at once for one Peer event (each a handful of requests). */
const PEER_EVENT_CONCURRENCY = 8;

/**
 * A Peer's status changed (clusterlink-peer-health writes it on every heartbeat that changes
 * something, lastSeen included): the Imports naming it whose sources' report is now wrong are
 * settled again. Which Imports name it is read from the watch cache (an Import too new for it
 * is settled by its own event, which reads its Peers live); the Peers are read live.
 */
async function onPeerEvent(
  kube: KubeClient,
  ref: ImportKey,
  options: ImportEventOptions,
): Promise<Outcome> {
  const peer = `Peer ${keyOf(ref)}`;
  if (ref.namespace !== options.clNamespace) {
    return done(`${peer} is outside the ClusterLink namespace: no Import's source names it`);
  }
  const naming = (await kube.list(IMPORTS, readOptions("cached")))
    .map(observeImport)
    .filter((imp) => !imp.deleting && peerNamesOf(imp).includes(ref.name));
  if (naming.length === 0) return done(`no Import names ${peer}`);
  const peers = await readPeers(
    kube,
    [...new Set(naming.flatMap(peerNamesOf))],
    options.clNamespace,
  );
  const stale = naming.filter((imp) => sourcesReportChanged(imp, peers, options.clNamespace));
  const outcomes: Outcome[] = [];
  for (let i = 0; i < stale.length; i += PEER_EVENT_CONCURRENCY) {
    const batch = stale.slice(i, i + PEER_EVENT_CONCURRENCY);
    const settled = await Promise.all(
      batch.map((imp) => settleByPort(kube, imp, options, { fromOwnEvent: false })),
    );
    outcomes.push(...settled.flatMap((s) => (s.own ? [s.own.outcome] : [])));
  }
  const summary = done(`${stale.length} of ${naming.length} Imports naming ${peer} re-settled`);
  return worstOutcome([summary, ...outcomes]);
}

export async function syncImportEvent(
  event: IntakeEvent,
  kube: KubeClient,
  log: Log,
  options: ImportEventOptions,
): Promise<Outcome> {
  const withLog: RoundOptions = { ...options, log };
  try {
    if (event.type === "resync") return await onResync(kube, withLog);
    const { kind, namespace, name } = event.ref;
    if (kind !== "Import" && kind !== "Service" && kind !== "EndpointSlice" && kind !== "Peer") {
      return malformed(
        "UnknownKind",
        `clusterlink-import handles Import, Service, EndpointSlice and Peer events, not ${kind}`,
      );
    }
    if (namespace === "") return malformed("MissingNamespace", `${kind} ${name} has no namespace`);
    const ref = { namespace, name };
    const handlers = {
      Import: onImportEvent,
      Service: onServiceEvent,
      EndpointSlice: onEndpointSliceEvent,
      Peer: onPeerEvent,
    } as const;
    const outcome = await handlers[kind](kube, ref, withLog);
    log.debug({ kind, namespace, name, outcome: outcome.kind }, "imports reconciled");
    return outcome;
  } catch (error) {
    return retryOrThrow(error);
  }
}

/** A lease race is retried; an API failure as shared/kube maps it; anything else is a bug (500). */
function retryOrThrow(error: unknown): Outcome {
  if (error instanceof LeaseRaceError) return retryLater(error.message, 1);
  return kubeFailureOutcome(error, "settling the Imports", {
    notFound: "raced",
    retryAfterSeconds: 5,
  });
}

export type { ImportEventOptions } from "./apply-import.js";
