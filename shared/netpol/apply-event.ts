/**
 * The effectful shell around the pure compiler: re-read the world (NetworkPolicies, Pods,
 * Namespaces), compile every table, read only the stored tables the trigger can change
 * (plan-scope.ts), and write only those that differ, replaces at the resourceVersion read.
 * Peer sets are written before endpoint tables, so a new reference finds its address group.
 * Knows nothing of HTTP or of the Kubernetes client: kube-store.ts implements NetpolStore.
 */
import pLimit from "p-limit";
import { parseWorld } from "./compile.js";
import { compileNetworkPolicies } from "./plan-tables.js";
import {
  EVERY,
  planTableScope,
  planTableWrites,
  type NetpolTrigger,
  type TableReads,
  type TableWrite,
} from "./plan-scope.js";
import {
  desiredEndpointTable,
  desiredPeerSetTable,
  type DesiredTable,
  type StoredTable,
  type TableKind,
} from "./table-objects.js";

/** What the shell reads and writes; every method may throw the store's own (retryable) errors. */
export interface NetpolStore {
  listPolicies(): Promise<readonly unknown[]>;
  /** Pods that have not terminated, in every namespace. */
  listPods(): Promise<readonly unknown[]>;
  listNamespaces(): Promise<readonly unknown[]>;
  /** Stored tables of a kind in one namespace, or every namespace (null). */
  listTables(kind: TableKind, namespace: string | null): Promise<StoredTable[]>;
  getTable(kind: TableKind, namespace: string, name: string): Promise<StoredTable | null>;
  createTable(desired: DesiredTable): Promise<void>;
  /** Replaces the table read at `resourceVersion`; fails (conflict) if it changed since. */
  replaceTable(desired: DesiredTable, resourceVersion: string): Promise<void>;
  deleteTable(stored: StoredTable): Promise<void>;
}

export interface NetpolApplyOptions {
  /** Concurrent reads and writes. Default 8. */
  readonly concurrency?: number;
}

export interface NetpolEventResult {
  readonly trigger: NetpolTrigger;
  readonly endpoints: number;
  readonly peerSets: number;
  readonly writes: Readonly<Record<TableWrite["action"], number>>;
  /** Endpoint and policy problems (TooManyRules, InvalidSelector) and unreadable objects. */
  readonly problems: readonly string[];
}

type Limit = ReturnType<typeof pLimit>;

async function readTables(
  store: NetpolStore,
  kind: TableKind,
  reads: TableReads,
  limit: Limit,
): Promise<StoredTable[]> {
  const listed =
    reads.list === null
      ? []
      : await store.listTables(
          kind,
          reads.list.namespace === EVERY.namespace ? null : reads.list.namespace,
        );
  const single = await Promise.all(
    reads.keys.map((key) => {
      const [namespace = "", name = ""] = key.split("/");
      return limit(() => store.getTable(kind, namespace, name));
    }),
  );
  return [...listed, ...single.flatMap((t) => (t === null ? [] : [t]))];
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

export async function applyNetpolTrigger(
  trigger: NetpolTrigger,
  store: NetpolStore,
  options: NetpolApplyOptions = {},
): Promise<NetpolEventResult> {
  const limit = pLimit(options.concurrency ?? 8);
  const [policies, pods, namespaces] = await Promise.all([
    store.listPolicies(),
    store.listPods(),
    store.listNamespaces(),
  ]);
  const { world, unreadable } = parseWorld({ policies, pods, namespaces });
  const compiled = compileNetworkPolicies(world);
  const desired = [
    ...compiled.peerSets.map(desiredPeerSetTable),
    ...compiled.endpoints.map(desiredEndpointTable),
  ];
  const scope = planTableScope(trigger, world);
  const [storedPeerSets, storedEndpoints] = await Promise.all([
    readTables(store, "peerSet", scope.peerSets, limit),
    readTables(store, "endpoint", scope.endpoints, limit),
  ]);
  const phases = [
    planTableWrites("peerSet", scope.peerSets, desired, storedPeerSets),
    planTableWrites("endpoint", scope.endpoints, desired, storedEndpoints),
  ];
  const writes = { create: 0, replace: 0, delete: 0 };
  for (const phase of phases) {
    await Promise.all(phase.map((w) => limit(() => write(store, w))));
    for (const w of phase) writes[w.action] += 1;
  }
  const problems = [
    ...unreadable,
    ...compiled.endpoints.flatMap((e) =>
      e.problems.map((p) => `${e.namespace}/${e.name}: ${p.reason}`),
    ),
  ];
  return {
    trigger,
    endpoints: compiled.endpoints.length,
    peerSets: compiled.peerSets.length,
    writes,
    problems,
  };
}
