/**
 * clusterlink-import's one entry: an Import, Service or EndpointSlice event (or a resync) ->
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
 * Services, and the resync removes Services whose Import is gone (docs/adr/0006).
 */
import type { Log } from "../core/context.js";
import {
  done,
  malformed,
  permanent,
  retryLater,
  worstOutcome,
  type Outcome,
} from "../core/outcome.js";
import type { IntakeEvent } from "../events/index.js";
import {
  clusterLinkResource,
  isKubeError,
  retryOnConflict,
  SERVICES,
  type KubeClient,
} from "../kube/index.js";
import {
  importOfLabels,
  LEASED_PORT_ANNOTATION,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  ownedBy,
  systemServiceName,
  type ImportKey,
} from "./names.js";
import { observeImport, type ObservedImport } from "./observed.js";
import {
  grantedPort,
  planImport,
  serviceRefs,
  type FoundServices,
  type ServiceWrite,
} from "./plan-import.js";
import { planLeases, type LeaseClaim, type LeaseDecision } from "./plan-lease.js";
import { planStatus } from "./plan-status.js";

const IMPORTS = clusterLinkResource("Import");

export interface ImportEventOptions {
  /** RFC 3339 time for condition transitions. */
  readonly now: string;
  /** The ClusterLink namespace (system Services live there). */
  readonly clNamespace: string;
  /** Lease rounds before giving up with a retry. Default 5. */
  readonly maxRounds?: number;
}

const keyOf = (k: ImportKey): string => `${k.namespace}/${k.name}`;

export function leaseClaimOf(imp: ObservedImport): LeaseClaim | null {
  if (imp.deleting || !imp.spec.ok) return null;
  const targetPort = imp.spec.value.targetPort ?? 0;
  return {
    key: keyOf(imp),
    uid: imp.uid,
    creationTimestamp: imp.creationTimestamp,
    targetPort,
    leasedByUs: targetPort !== 0 && imp.annotations[LEASED_PORT_ANNOTATION] === String(targetPort),
  };
}

async function listImports(kube: KubeClient): Promise<ObservedImport[]> {
  return (await kube.list(IMPORTS)).map(observeImport);
}

/** The lease goes into the spec with our annotation, in one write guarded by resourceVersion. */
async function writeLease(
  kube: KubeClient,
  imp: ObservedImport,
  port: number,
): Promise<ObservedImport> {
  const { raw } = imp;
  const annotations = { ...imp.annotations, [LEASED_PORT_ANNOTATION]: String(port) };
  const spec = { ...(raw.spec as Record<string, unknown>), targetPort: port };
  const written = await kube.replace(IMPORTS, {
    ...raw,
    metadata: { ...raw.metadata, name: imp.name, namespace: imp.namespace, annotations },
    spec,
  });
  return observeImport(written);
}

async function findServices(
  kube: KubeClient,
  key: ImportKey,
  clNamespace: string,
): Promise<FoundServices> {
  const refs = serviceRefs(key, clNamespace);
  const [system, user] = await Promise.all([
    kube.get(SERVICES, refs.system),
    refs.user === null ? undefined : kube.get(SERVICES, refs.user),
  ]);
  return { system, user };
}

async function applyWrite(kube: KubeClient, write: ServiceWrite): Promise<void> {
  if (write.action === "delete") {
    await kube.delete(SERVICES, write.ref);
    return;
  }
  const { namespace, name, labels, spec } = write.service;
  if (write.action === "create") {
    await kube.create(SERVICES, { metadata: { name, namespace, labels }, spec });
  } else {
    // Merge patch: ports and selector are replaced whole; clusterIP and other defaults stay.
    await kube.mergePatch(SERVICES, { namespace, name }, { metadata: { labels }, spec });
  }
}

interface Settled {
  readonly outcome: Outcome;
  readonly stalled: boolean;
}

/** One Import: its lease (if it needs one), its Services, its status. */
async function settleImport(
  kube: KubeClient,
  observed: ObservedImport,
  decision: LeaseDecision | undefined,
  options: ImportEventOptions,
  fromOwnEvent: boolean,
): Promise<Settled> {
  const imp =
    decision?.kind === "lease" ? await writeLease(kube, observed, decision.port) : observed;
  const found = await findServices(kube, imp, options.clNamespace);
  const plan = planImport({ imp, decision, found, clNamespace: options.clNamespace });
  for (const write of plan.writes) await applyWrite(kube, write);
  const status = planStatus(imp.status, plan.conditions, imp.generation, options.now);
  if (status.write !== null) {
    await kube.patchStatus(IMPORTS, imp, status.write, { resourceVersion: imp.resourceVersion });
  }
  const ref = `Import ${keyOf(imp)}`;
  const written = status.write === null ? "unchanged" : "status written";
  if (plan.problem === null) return { outcome: done(`${ref} ready, ${written}`), stalled: false };
  const outcome = fromOwnEvent
    ? permanent(plan.problem.reason, `${ref}: ${plan.problem.message}`)
    : done(`${ref} stalled (${plan.problem.reason}), ${written}`);
  return { outcome, stalled: true };
}

/** Services of an Import that no longer exists: remove exactly what carries its labels. */
async function removeServicesOf(
  kube: KubeClient,
  key: ImportKey,
  clNamespace: string,
): Promise<number> {
  const found = await findServices(kube, key, clNamespace);
  const refs = serviceRefs(key, clNamespace);
  let removed = 0;
  for (const [svc, ref] of [
    [found.system, refs.system],
    [found.user, refs.user],
  ] as const) {
    if (svc !== undefined && ref !== null && ownedBy(svc.metadata.labels, key)) {
      if (await kube.delete(SERVICES, ref)) removed += 1;
    }
  }
  return removed;
}

/** The resync's sweep: every Service with our labels whose Import is gone (a lost delete). */
async function sweepOrphans(kube: KubeClient, live: ReadonlySet<string>): Promise<number> {
  const ours = await kube.list(SERVICES, { labelSelector: { [MANAGED_BY_LABEL]: MANAGED_BY } });
  let removed = 0;
  for (const svc of ours) {
    const owner = importOfLabels(svc.metadata.labels);
    if (owner === undefined || live.has(keyOf(owner))) continue;
    const ref = { namespace: svc.metadata.namespace ?? "", name: svc.metadata.name };
    if (await kube.delete(SERVICES, ref)) removed += 1;
  }
  return removed;
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

/** One round: list, plan leases, settle the focused Imports and every re-lease loser. */
async function round(
  kube: KubeClient,
  focus: (imports: readonly ObservedImport[]) => Focus,
  options: ImportEventOptions,
  settledPorts: Map<string, number>,
): Promise<RoundResult> {
  const imports = await listImports(kube);
  const claims = imports.map(leaseClaimOf).filter((c): c is LeaseClaim => c !== null);
  const decisions = planLeases(claims);
  const focused = focus(imports);
  let leased = 0;
  const outcomes = new Map<string, Outcome>();
  for (const imp of imports) {
    const key = keyOf(imp);
    const decision = decisions.get(key);
    if (!inFocus(imp, decision, focused, settledPorts)) continue;
    const settled = await settleImport(kube, imp, decision, options, key === focused.own);
    if (decision?.kind === "lease") leased += 1;
    const port = grantedPort(decision);
    if (port !== null) settledPorts.set(key, port);
    outcomes.set(key, settled.outcome);
  }
  return { leased, outcomes };
}

async function rounds(
  kube: KubeClient,
  focus: (imports: readonly ObservedImport[]) => Focus,
  options: ImportEventOptions,
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

/** A concurrent writer changed, created or deleted what we were about to write. */
const raced = (error: unknown): boolean =>
  isKubeError(error, "conflict") || isKubeError(error, "notFound");

async function onImportEvent(
  kube: KubeClient,
  ref: ImportKey,
  options: ImportEventOptions,
): Promise<Outcome> {
  const own = keyOf(ref);
  const outcomes = await rounds(
    kube,
    (imports) => {
      // Losers of a requested port are looked at again: this Import may have been the holder.
      const keys = new Set([own, ...imports.filter(portInvalid).map(keyOf)]);
      return { keys, own, all: false };
    },
    options,
  );
  const live = await kube.get(IMPORTS, ref);
  if (live === undefined || live.metadata.deletionTimestamp !== undefined) {
    const removed = await removeServicesOf(kube, ref, options.clNamespace);
    outcomes.push(done(`Import ${own} is gone, ${removed} Services removed`));
  }
  return worstOutcome(outcomes);
}

async function onServiceEvent(
  kube: KubeClient,
  ref: ImportKey,
  options: ImportEventOptions,
): Promise<Outcome> {
  const svc = await kube.get(SERVICES, ref);
  const labelled = importOfLabels(svc?.metadata.labels);
  const outcomes = await rounds(
    kube,
    (imports) => ({
      keys: serviceFocus(imports, ref, labelled, options.clNamespace),
      own: null,
      all: false,
    }),
    options,
  );
  if (labelled !== undefined && (await kube.get(IMPORTS, labelled)) === undefined) {
    const removed = await removeServicesOf(kube, labelled, options.clNamespace);
    outcomes.push(done(`Import ${keyOf(labelled)} is gone, ${removed} Services removed`));
  }
  return outcomes.length === 0
    ? done(`no Import uses Service ${keyOf(ref)}`)
    : worstOutcome(outcomes);
}

async function onResync(kube: KubeClient, options: ImportEventOptions): Promise<Outcome> {
  const outcomes = await rounds(kube, () => ({ keys: new Set(), own: null, all: true }), options);
  const live = new Set((await listImports(kube)).filter((i) => !i.deleting).map((i) => keyOf(i)));
  const removed = await sweepOrphans(kube, live);
  outcomes.push(done(`${removed} orphaned Services removed`));
  return worstOutcome(outcomes);
}

export async function syncImportEvent(
  event: IntakeEvent,
  kube: KubeClient,
  log: Log,
  options: ImportEventOptions,
): Promise<Outcome> {
  try {
    if (event.type === "resync") return await onResync(kube, options);
    const { kind, namespace, name } = event.ref;
    if (kind === "EndpointSlice") {
      return done("merge mode is not supported yet: no EndpointSlice copies to keep");
    }
    if (kind !== "Import" && kind !== "Service") {
      return malformed(
        "unsupported-kind",
        `clusterlink-import handles Import, Service and EndpointSlice events, not ${kind}`,
      );
    }
    if (namespace === "") return malformed("missing-namespace", `${kind} ${name} has no namespace`);
    const outcome =
      kind === "Import"
        ? await onImportEvent(kube, { namespace, name }, options)
        : await onServiceEvent(kube, { namespace, name }, options);
    log.debug({ kind, namespace, name, outcome: outcome.kind }, "imports reconciled");
    return outcome;
  } catch (error) {
    if (raced(error)) return retryLater((error as Error).message, 1);
    if (isKubeError(error) && (error.retryable || error.code === "forbidden")) {
      return retryLater(error.message);
    }
    throw error;
  }
}
