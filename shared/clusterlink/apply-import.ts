/**
 * The I/O shell of one Import, shared by every way an event reaches it: write its lease, read and
 * write its two Services as plan-import.ts says, write its status when it changed, and remove
 * the Services of an Import that is gone.
 */
import { done, permanent, type Outcome } from "../core/outcome.js";
import {
  isKubeError,
  raced,
  retryOnConflict,
  type EventRecorder,
  type KubeObject,
} from "../kube/index.js";
import { planClusterLinkEvents, planSourceEvents } from "./plan-events.js";
import { recordClusterLinkEvents } from "./record-events.js";
import { LEASED_PORT_ANNOTATION, MERGE_LABEL, ownedBy, type ImportKey } from "./names.js";
import {
  copySelector,
  DATAPLANE_SERVICE_NAME,
  SERVICE_NAME_LABEL,
  type FoundSlices,
  type SliceWrite,
} from "./plan-merge.js";
import { observeImport, type ObservedImport } from "./observed.js";
import {
  planImport,
  serviceRefs,
  type FoundServices,
  type ImportPlan,
  type ServiceWrite,
} from "./plan-import.js";
import type { LeaseDecision } from "./plan-lease.js";
import { planSources, type PeerReading } from "./plan-sources.js";
import { planStatus } from "./plan-status.js";
import { keyOf, nameBarred, peerNamesOf } from "./plan-import-scope.js";
import { peerStatusSchema } from "../kinds/clusterlink.js";
import type { ClusterLinkStore } from "./store.js";

export { keyOf, leaseClaimOf, peerNamesOf } from "./plan-import-scope.js";

/** Tries of a write whose object changed since it was read, each after a fresh read. */
const WRITE_ATTEMPTS = 3;

/** A write refused because its object changed (409) or vanished (404) since it was read. */
const changedSinceRead = raced;

export interface ImportEventOptions {
  /** RFC 3339 time for condition transitions. */
  readonly now: string;
  /** The ClusterLink namespace (system Services live there). */
  readonly clNamespace: string;
  /** Lease rounds before giving up with a retry. Default 5. */
  readonly maxRounds?: number;
  /** Where transitions an operator must see are recorded (plan-events.ts). */
  readonly events?: EventRecorder;
}

export async function listImports(store: ClusterLinkStore): Promise<ObservedImport[]> {
  return (await store.listImports()).map(observeImport);
}

/** The lease goes into the spec with our annotation, in one write guarded by resourceVersion. */
export async function writeLease(
  store: ClusterLinkStore,
  imp: ObservedImport,
  port: number,
): Promise<ObservedImport> {
  const { raw } = imp;
  const annotations = { ...imp.annotations, [LEASED_PORT_ANNOTATION]: String(port) };
  const spec = { ...(raw.spec as Record<string, unknown>), targetPort: port };
  const written = await store.replaceImport({
    ...raw,
    metadata: { ...raw.metadata, name: imp.name, namespace: imp.namespace, annotations },
    spec,
  });
  return observeImport(written);
}

/**
 * A port we leased an Import whose name bars it (leased before that was checked) is given back:
 * its spec says no port again, and our annotation goes, in one write guarded by resourceVersion.
 */
async function releaseBarredLease(
  store: ClusterLinkStore,
  imp: ObservedImport,
): Promise<ObservedImport> {
  const port = imp.spec.ok ? (imp.spec.value.targetPort ?? 0) : 0;
  if (!nameBarred(imp) || port === 0 || imp.annotations[LEASED_PORT_ANNOTATION] !== String(port)) {
    return imp;
  }
  const { [LEASED_PORT_ANNOTATION]: _released, ...annotations } = imp.annotations;
  const { targetPort: _port, ...spec } = imp.raw.spec as Record<string, unknown>;
  const written = await store.replaceImport({
    ...imp.raw,
    metadata: { ...imp.raw.metadata, name: imp.name, namespace: imp.namespace, annotations },
    spec,
  });
  return observeImport(written);
}

export async function findServices(
  store: ClusterLinkStore,
  key: ImportKey,
  clNamespace: string,
): Promise<FoundServices> {
  const refs = serviceRefs(key, clNamespace);
  const [system, user] = await Promise.all([
    store.getService(refs.system),
    refs.user === null ? undefined : store.getService(refs.user),
  ]);
  return { system, user };
}

/**
 * One Service write. Update and delete carry the resourceVersion the plan was made from (a merge
 * patch with metadata.resourceVersion is refused with 409 like an update): a Service replaced or
 * relabelled since our read is never overwritten or deleted. See settleImport for the re-read.
 */
export async function applyWrite(store: ClusterLinkStore, write: ServiceWrite): Promise<void> {
  if (write.action === "delete") {
    await store.deleteService(write.ref, { resourceVersion: write.resourceVersion });
    return;
  }
  const { namespace, name, labels, spec } = write.service;
  if (write.action === "create") {
    await store.createService({ metadata: { name, namespace, labels }, spec });
  } else {
    // Merge patch: ports and selector are replaced whole; clusterIP and other defaults stay.
    const metadata = { labels, resourceVersion: write.resourceVersion };
    await store.mergePatchService({ namespace, name }, { metadata, spec });
  }
}

/** A Peer's PeerReachable as an Import's plan reads it (plan-sources.ts). */
export function peerReadingOf(peer: KubeObject | undefined): PeerReading {
  if (peer === undefined || peer.metadata.deletionTimestamp !== undefined) return { found: false };
  const status = peerStatusSchema.safeParse(peer.status ?? {});
  const condition = status.success
    ? status.data.conditions?.find((c) => c.type === "PeerReachable")
    : undefined;
  return {
    found: true,
    reachable: condition === undefined ? undefined : condition.status === "True",
    message: condition?.message ?? "",
  };
}

/** The Peers an Import's sources name, read live from the ClusterLink namespace, by name. */
export async function readPeers(
  store: ClusterLinkStore,
  names: readonly string[],
  clNamespace: string,
): Promise<Map<string, PeerReading>> {
  const read = await Promise.all(
    names.map(async (name) => {
      const peer = await store.getPeer({ namespace: clNamespace, name });
      return [name, peerReadingOf(peer)] as const;
    }),
  );
  return new Map(read);
}

/** Every Peer of the ClusterLink namespace, by name: one list for a round over many Imports. */
export async function listPeers(
  store: ClusterLinkStore,
  clNamespace: string,
): Promise<Map<string, PeerReading>> {
  const peers = await store.listPeers({ namespace: clNamespace });
  return new Map(peers.map((peer) => [peer.metadata.name, peerReadingOf(peer)]));
}

/** The dataplane's EndpointSlices and this Import's copies of them. */
export async function findSlices(
  store: ClusterLinkStore,
  key: ImportKey,
  clNamespace: string,
): Promise<FoundSlices> {
  const [dataplane, copies] = await Promise.all([
    store.listEndpointSlices({
      namespace: clNamespace,
      labelSelector: { [SERVICE_NAME_LABEL]: DATAPLANE_SERVICE_NAME },
    }),
    store.listEndpointSlices({ namespace: key.namespace, labelSelector: copySelector(key) }),
  ]);
  return { dataplane, copies };
}

/** One copy's write; update and delete with the resourceVersion read, as applyWrite's. */
export async function applySliceWrite(store: ClusterLinkStore, write: SliceWrite): Promise<void> {
  if (write.action === "delete") {
    await store.deleteEndpointSlice(write.ref, { resourceVersion: write.resourceVersion });
    return;
  }
  const { namespace, name, labels, addressType, endpoints, ports } = write.slice;
  if (write.action === "create") {
    await store.createEndpointSlice({
      metadata: { name, namespace, labels },
      addressType,
      endpoints,
      ports,
    });
  } else {
    // Merge patch: endpoints and ports are replaced whole.
    await store.mergePatchEndpointSlice(
      { namespace, name },
      { metadata: { labels, resourceVersion: write.resourceVersion }, endpoints, ports },
    );
  }
}

/**
 * Slices are read only for a merge Import, or one whose status says it was merged (its copies
 * must go): a normal Import's event pays nothing for merge mode. A copy left by an Import that
 * stopped being merge before its status said so is the resync's (sweepOrphans).
 */
export const slicesMatter = (imp: ObservedImport): boolean =>
  imp.labels[MERGE_LABEL] === "true" ||
  (imp.status?.conditions?.some((c) => c.type === "Ready" && c.reason === "Merged") ?? false);

export interface Settled {
  readonly outcome: Outcome;
  readonly stalled: boolean;
}

/** The status when it changed, and the Events its transitions (or a new lease) are worth. */
async function writeStatusAndEvents(
  store: ClusterLinkStore,
  imp: ObservedImport,
  next: {
    readonly conditions: ImportPlan["conditions"];
    /** The Peers the plan read: what the sources' Events are planned from. */
    readonly peers: ReadonlyMap<string, PeerReading>;
  },
  options: ImportEventOptions,
  decision: LeaseDecision | undefined,
): Promise<"unchanged" | "status written"> {
  const status = planStatus(imp.status, next.conditions, imp.generation, options.now);
  if (status.write !== null) {
    await store.patchImportStatus(imp, status.write, { resourceVersion: imp.resourceVersion });
  }
  const leased = decision?.kind === "lease" ? decision.port : undefined;
  if (status.write !== null || leased !== undefined) {
    const sources = imp.spec.ok ? (imp.spec.value.sources ?? []) : undefined;
    await recordClusterLinkEvents(
      options.events,
      { kind: "Import", namespace: imp.namespace, name: imp.name, uid: imp.uid },
      [
        ...planClusterLinkEvents(imp.status, next.conditions, leased),
        // Only a written status can hold a new transition of the sources (their report changed).
        ...(status.write === null || sources === undefined
          ? []
          : planSourceEvents(
              imp.status,
              sources,
              planSources(sources, next.peers, options.clNamespace),
            )),
      ],
    );
  }
  return status.write === null ? "unchanged" : "status written";
}

/**
 * `found` when the caller knows an Import has no Services to read: one never leased (its
 * spec.targetPort is 0) made none, so its Services are created without a read. A create that
 * meets a Service after all (AlreadyExists: a Service of someone else's, or ours left from
 * before the port was reset) reads both and plans again, as does a plan that fails (its cleanup
 * must see what is there).
 */
export const PRESUMED_ABSENT = "presumed absent" as const;

const NO_SERVICES: FoundServices = { system: undefined, user: undefined };

/** The plan's creates, sent together; false when one found its name taken. */
async function createdAll(
  store: ClusterLinkStore,
  writes: readonly ServiceWrite[],
): Promise<boolean> {
  const results = await Promise.allSettled(writes.map((write) => applyWrite(store, write)));
  let taken = false;
  for (const result of results) {
    if (result.status === "fulfilled") continue;
    if (!isKubeError(result.reason, "conflict")) throw result.reason;
    taken = true;
  }
  return !taken;
}

/**
 * One Import: its lease (if it needs one), its Services, its status. `found` are its Services
 * if the caller already read them (their names do not depend on the lease), or PRESUMED_ABSENT.
 */
export async function settleImport(
  store: ClusterLinkStore,
  observed: ObservedImport,
  decision: LeaseDecision | undefined,
  options: ImportEventOptions,
  how: {
    readonly fromOwnEvent: boolean;
    readonly found?: FoundServices | typeof PRESUMED_ABSENT;
    /** The Peers its sources name, if the caller already read them. */
    readonly peers?: ReadonlyMap<string, PeerReading>;
  },
): Promise<Settled> {
  const { fromOwnEvent } = how;
  // The Peers are read alongside the lease write and the slices: none depends on the others.
  const [imp, peers, slices] = await Promise.all([
    decision?.kind === "lease"
      ? writeLease(store, observed, decision.port)
      : releaseBarredLease(store, observed),
    how.peers ?? readPeers(store, peerNamesOf(observed), options.clNamespace),
    slicesMatter(observed) ? findSlices(store, observed, options.clNamespace) : undefined,
  ]);
  const planFor = (found: FoundServices, copies: FoundSlices | undefined): ImportPlan =>
    planImport({
      imp,
      decision,
      found,
      peers,
      clNamespace: options.clNamespace,
      ...(copies === undefined ? {} : { slices: copies }),
    });
  // A write refused because its Service or copy changed (409), or vanished (404), since it was
  // read: read both again and decide again (the Service may be someone else's now).
  const planAndApply = (given: FoundServices | undefined): Promise<ImportPlan> =>
    retryOnConflict({ attempts: WRITE_ATTEMPTS, isRace: changedSinceRead }, async (attempt) => {
      const [found, copies] = await Promise.all([
        attempt === 1 && given !== undefined
          ? given
          : findServices(store, imp, options.clNamespace),
        attempt === 1 || slices === undefined
          ? slices
          : findSlices(store, imp, options.clNamespace),
      ]);
      const next = planFor(found, copies);
      // At most one write per Service (system, user) and per copy: independent, sent together.
      await Promise.all([
        ...next.writes.map((write) => applyWrite(store, write)),
        ...next.sliceWrites.map((write) => applySliceWrite(store, write)),
      ]);
      return next;
    });
  const presumed = how.found === PRESUMED_ABSENT && slices === undefined;
  let plan = presumed ? planFor(NO_SERVICES, undefined) : undefined;
  if (plan === undefined || plan.problem !== null || !(await createdAll(store, plan.writes))) {
    plan = await planAndApply(how.found === PRESUMED_ABSENT ? undefined : how.found);
  }
  const next = { conditions: plan.conditions, peers };
  const written = await writeStatusAndEvents(store, imp, next, options, decision);
  return settledAs(`Import ${keyOf(imp)}`, plan, written, fromOwnEvent);
}

/** A problem is the Import's own event's 422; any other event only records it. */
function settledAs(ref: string, plan: ImportPlan, written: string, fromOwnEvent: boolean): Settled {
  if (plan.problem === null) return { outcome: done(`${ref} ready, ${written}`), stalled: false };
  const outcome = fromOwnEvent
    ? permanent(plan.problem.reason, `${ref}: ${plan.problem.message}`)
    : done(`${ref} stalled (${plan.problem.reason}), ${written}`);
  return { outcome, stalled: true };
}

/** Copies of an Import that no longer exists (listed by the labels only its copies carry). */
export async function removeCopiesOf(store: ClusterLinkStore, key: ImportKey): Promise<number> {
  const removed = await Promise.all(
    (
      await store.listEndpointSlices({
        namespace: key.namespace,
        labelSelector: copySelector(key),
      })
    ).map((copy) =>
      deleteIfStill(store, "EndpointSlice", copy, (now) =>
        Object.entries(copySelector(key)).every(([k, v]) => now.metadata.labels?.[k] === v),
      ),
    ),
  );
  return removed.filter(Boolean).length;
}

/**
 * Deletes `read` if `still` holds for it, with its resourceVersion as precondition; when it
 * changed since (409), reads it again and decides again. False when it is gone or no longer
 * qualifies (someone else's now): the check and the delete are about the same version.
 */
export function deleteIfStill(
  store: ClusterLinkStore,
  kind: "Service" | "EndpointSlice",
  read: KubeObject,
  still: (object: KubeObject) => boolean,
): Promise<boolean> {
  const ref = { namespace: read.metadata.namespace ?? "", name: read.metadata.name };
  const reread = (key: typeof ref) =>
    kind === "Service" ? store.getService(key) : store.getEndpointSlice(key);
  const remove = (key: typeof ref, options: { resourceVersion: string }) =>
    kind === "Service"
      ? store.deleteService(key, options)
      : store.deleteEndpointSlice(key, options);
  return retryOnConflict({ attempts: WRITE_ATTEMPTS }, async (attempt) => {
    const current = attempt === 1 ? read : await reread(ref);
    if (current === undefined || !still(current)) return false;
    const resourceVersion = current.metadata.resourceVersion ?? "";
    return remove(ref, { resourceVersion });
  });
}

/** Services of an Import that no longer exists: remove exactly what carries its labels. */
export async function removeServicesOf(
  store: ClusterLinkStore,
  key: ImportKey,
  clNamespace: string,
): Promise<number> {
  const found = await findServices(store, key, clNamespace);
  const removed = await Promise.all(
    [found.system, found.user]
      .filter((svc) => svc !== undefined)
      .map((svc) =>
        deleteIfStill(store, "Service", svc, (now) => ownedBy(now.metadata.labels, key)),
      ),
  );
  return removed.filter(Boolean).length;
}
