/**
 * The effectful shell around the pure compiler: read only the stored tables the trigger can
 * change (plan-scope.ts), then re-read the world (NetworkPolicies, Pods, Namespaces), compile
 * every table, and write only those that differ, replaces at the resourceVersion read.
 * Peer sets are written before endpoint tables, so a new reference finds its address group.
 * Knows nothing of HTTP or of the Kubernetes client: kube-store.ts implements NetpolStore.
 */
import pLimit from "p-limit";
import type { Log } from "../core/context.js";
import { done, type Outcome } from "../core/outcome.js";
import {
  eachObject,
  raced,
  NO_EVENTS,
  type EventRecorder,
  type EventRegarding,
  type ReadFreshness,
} from "../kube/index.js";
import { applyPodEventFast } from "./apply-pod-event.js";
import { planTableEvents } from "./plan-events.js";
import type { NetpolEventResult, NetpolStore } from "./store.js";
import { compileWorld, parseWorld } from "./compile.js";
import type { CompiledNetpol } from "./plan-tables.js";
import {
  DEFAULT_MAX_PEER_SET_BYTES,
  PEER_SET_TOO_LARGE,
  peerSetTooLarge,
} from "./peer-set-bound.js";
import {
  EVERY,
  inScope,
  planTableScope,
  planTableWrites,
  type NetpolTrigger,
  type TableReads,
  type TableScope,
  type TableWrite,
} from "./plan-scope.js";
import {
  OLDER_PEER_SETS,
  SCOPE_LABEL,
  desiredEndpointTable,
  desiredPeerSetTable,
  type StoredTable,
  type TableKind,
} from "./table-objects.js";

/**
 * Requests in flight for a resync, which creates or rewrites every table of the cluster: all of
 * the process's sockets to the API server (MAX_SOCKETS), as on-deployment-ready's status writes.
 * The API server and etcd spend less CPU per create with more in flight (measured on the bench's
 * 8,500 tables: 21-23 s at 32, 26-29 s at 16), and they are what bounds a full store.
 */
export const RESYNC_IN_FLIGHT = 32;

export interface NetpolApplyOptions {
  /** Concurrent reads and writes. Default 8, RESYNC_IN_FLIGHT for a resync. */
  readonly concurrency?: number;
  /** Pod events take the Pod-only path (apply-pod-event.ts) where it applies. Default true. */
  readonly podFastPath?: boolean;
  /** Where the Events of plan-events.ts go (best-effort, bounded). Default: none. */
  readonly events?: EventRecorder;
  /**
   * How fresh the Pod path's lists are (shared/kube/freshness.ts): "cached" on an event's first
   * attempt, "consistent" after a refused write. The full recompute always reads consistently.
   * Default "consistent".
   */
  readonly freshness?: ReadFreshness;
  /** Where a table that could not be written is reported (eachObject). Default: silent. */
  readonly log?: Log;
  /** Bytes of JSON one peer set may take (peer-set-bound.ts). Default 1.25 MiB. */
  readonly maxPeerSetBytes?: number;
  /**
   * Told, after a full recompute's writes, the problems of every peer set it covered (for the
   * function's metric); `complete`: it covered every peer set of the cluster (a resync).
   */
  readonly onPolicyProblems?: (report: readonly PolicyProblems[], complete: boolean) => void;
}

/** The problem reasons of one policy's peer set (none: it is stored as compiled). */
export interface PolicyProblems {
  readonly namespace: string;
  readonly policy: string;
  readonly reasons: readonly string[];
}

/** Events per delivery at most: a policy edit over a large namespace must not become a storm. */
export const MAX_EVENTS_PER_DELIVERY = 20;

/** Writes, then records the Events the write is worth (at most MAX_EVENTS_PER_DELIVERY). */
function writerWithEvents(
  store: NetpolStore,
  trigger: NetpolTrigger,
  events: EventRecorder,
): (w: TableWrite) => Promise<void> {
  let budget = MAX_EVENTS_PER_DELIVERY;
  return async (w) => {
    await write(store, w);
    for (const planned of planTableEvents([w], trigger.kind === "resync")) {
      if (budget <= 0) return;
      budget -= 1;
      await events.record({ ...planned, action: "Compile" });
    }
  };
}

type Limit = ReturnType<typeof pLimit>;

async function readTables(
  store: NetpolStore,
  kind: TableKind,
  reads: TableReads,
  limit: Limit,
): Promise<StoredTable[]> {
  const { list } = reads;
  const namespace = list === null || list.namespace === EVERY.namespace ? null : list.namespace;
  const [listed, labelled, single] = await Promise.all([
    list === null ? [] : limit(() => store.listTables(kind, namespace)),
    reads.labelled ? limit(() => store.listTables(kind, null, `${SCOPE_LABEL[kind]}=true`)) : [],
    Promise.all(
      reads.keys.map((key) => {
        const [ns = "", name = ""] = key.split("/");
        return limit(() => store.getTable(kind, ns, name));
      }),
    ),
  ]);
  const byKey = new Map<string, StoredTable>();
  for (const table of [...listed, ...labelled, ...single]) {
    if (table !== null) byKey.set(`${table.namespace}/${table.name}`, table);
  }
  return [...byKey.values()];
}

/** planTableScope, after asking whether peer sets of an older version exist when that matters. */
async function tableScope(store: NetpolStore, trigger: NetpolTrigger): Promise<TableScope> {
  const olderPeerSets =
    trigger.kind === "namespace" &&
    (await store.listTables("peerSet", null, OLDER_PEER_SETS)).length > 0;
  return planTableScope(trigger, olderPeerSets);
}

function write(store: NetpolStore, w: TableWrite): Promise<void> {
  switch (w.action) {
    case "create":
      return store.createTable(w.desired);
    case "replace":
      return store.replaceTable(w.desired, w.resourceVersion);
    case "delete":
      return store.deleteTable(w.stored);
  }
}

const SILENT: Log = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

/** The object a table stands for: its Pod (endpoint table) or its NetworkPolicy (peer set). */
function tableRegarding(w: TableWrite): EventRegarding {
  const table = w.action === "delete" ? w.stored : w.desired;
  const pod = table.kind === "endpoint";
  return {
    apiVersion: pod ? "v1" : "networking.k8s.io/v1",
    kind: pod ? "Pod" : "NetworkPolicy",
    namespace: table.namespace,
    name: table.name,
  };
}

/**
 * One phase's writes, bounded: a table the API server refuses is reported on its Pod or policy
 * and skipped (eachObject), the others are written; a race is the recompute's.
 */
function writeEach(
  phase: readonly TableWrite[],
  limit: Limit,
  writeTable: (w: TableWrite) => Promise<void>,
  options: NetpolApplyOptions,
): Promise<Outcome[]> {
  return eachObject(
    phase,
    (w) =>
      limit(async () => {
        await writeTable(w);
        return done(w.action);
      }),
    {
      regarding: tableRegarding,
      log: options.log ?? SILENT,
      events: options.events,
      rethrow: raced,
      concurrency: phase.length,
    },
  );
}

/** The options' defaults for what the Pod path reads and bounds. */
const readingOf = (options: NetpolApplyOptions, limit: Limit) => ({
  limit,
  freshness: options.freshness ?? "consistent",
  maxPeerSetBytes: options.maxPeerSetBytes ?? DEFAULT_MAX_PEER_SET_BYTES,
});

/**
 * The problems of the compiled tables, as the outcome lists them; the peer sets this recompute
 * covered also go to options.onPolicyProblems (the function's metric).
 */
function reportProblems(
  trigger: NetpolTrigger,
  scope: TableScope,
  compiled: CompiledNetpol,
  options: NetpolApplyOptions,
): string[] {
  const covered = compiled.peerSets.filter((p) =>
    inScope(scope.peerSets, { ...p, labelled: p.namespaceSelected }),
  );
  options.onPolicyProblems?.(
    covered.map((p) => ({
      namespace: p.namespace,
      policy: p.name,
      reasons: [...new Set(p.problems.map((problem) => problem.reason))].sort(),
    })),
    trigger.kind === "resync",
  );
  return [
    ...compiled.endpoints.flatMap((e) =>
      e.problems.map((p) => `${e.namespace}/${e.name}: ${p.reason}`),
    ),
    // What a policy's endpoints do not show: its peer set stored failing closed.
    ...covered
      .filter((p) => peerSetTooLarge(p.problems))
      .map((p) => `${p.namespace}/${p.name}: ${PEER_SET_TOO_LARGE}`),
  ];
}

/** The stored tables of `scope`, then the world (in that order: see planTableScope). */
async function readScopeThenWorld(store: NetpolStore, scope: TableScope, limit: Limit) {
  const [storedPeerSets, storedEndpoints] = await Promise.all([
    readTables(store, "peerSet", scope.peerSets, limit),
    readTables(store, "endpoint", scope.endpoints, limit),
  ]);
  const [policies, pods, namespaces] = await Promise.all([
    store.listPolicies(),
    store.listPods(),
    store.listNamespaces(),
  ]);
  return { storedPeerSets, storedEndpoints, ...parseWorld({ policies, pods, namespaces }) };
}

/** Each phase after the one before (peer sets, then the endpoints naming them), counted. */
async function writePhases(
  phases: readonly (readonly TableWrite[])[],
  limit: Limit,
  writeTable: (w: TableWrite) => Promise<void>,
  options: NetpolApplyOptions,
): Promise<Pick<NetpolEventResult, "writes"> & { failures: Outcome[] }> {
  const writes = { create: 0, replace: 0, delete: 0 };
  const failures: Outcome[] = [];
  for (const phase of phases) {
    const outcomes = await writeEach(phase, limit, writeTable, options);
    phase.forEach((w, i) => {
      const outcome = outcomes[i] ?? done("");
      if (outcome.kind === "done") writes[w.action] += 1;
      else failures.push(outcome);
    });
  }
  return { writes, failures };
}

const failingClosedOf = (compiled: CompiledNetpol) => ({
  ingress: compiled.endpoints.filter((e) => e.spec.ingress.failClosed).length,
  egress: compiled.endpoints.filter((e) => e.spec.egress.failClosed).length,
});

export async function applyNetpolTrigger(
  trigger: NetpolTrigger,
  store: NetpolStore,
  options: NetpolApplyOptions = {},
): Promise<NetpolEventResult> {
  const limit = pLimit(options.concurrency ?? (trigger.kind === "resync" ? RESYNC_IN_FLIGHT : 8));
  const writeTable = writerWithEvents(store, trigger, options.events ?? NO_EVENTS);
  const reading = readingOf(options, limit);
  let fullBecause: string | null = null;
  if (trigger.kind === "pod" && options.podFastPath !== false) {
    const fast = await applyPodEventFast(trigger, store, reading, writeTable);
    if (!("fullBecause" in fast)) return fast;
    fullBecause = fast.fullBecause;
  }
  const scope = await tableScope(store, trigger);
  const read = await readScopeThenWorld(store, scope, limit);
  const compiled = compileWorld(read.world, { maxPeerSetBytes: reading.maxPeerSetBytes });
  const desired = [
    ...compiled.peerSets.map(desiredPeerSetTable),
    ...compiled.endpoints.map(desiredEndpointTable),
  ];
  const { writes, failures } = await writePhases(
    [
      planTableWrites("peerSet", scope.peerSets, desired, read.storedPeerSets),
      planTableWrites("endpoint", scope.endpoints, desired, read.storedEndpoints),
    ],
    limit,
    writeTable,
    options,
  );
  return {
    trigger,
    endpoints: compiled.endpoints.length,
    peerSets: compiled.peerSets.length,
    writes,
    problems: [...read.unreadable, ...reportProblems(trigger, scope, compiled, options)],
    path: fullBecause === null ? "full" : `full: ${fullBecause}`,
    failures,
    failingClosed: failingClosedOf(compiled),
  };
}
