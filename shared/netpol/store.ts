/**
 * What the netpol shells (apply-event.ts, apply-pod-event.ts) need of the API server, and what
 * an event's recompute reports. kube-store.ts implements the store over shared/kube.
 */
import type { Outcome } from "../core/outcome.js";
import type { ReadFreshness } from "../kube/freshness.js";
import type { NetpolTrigger, TableWrite } from "./plan-scope.js";
import type { DesiredTable, StoredTable, TableKind } from "./table-objects.js";

/** What the shell reads and writes; every method may throw the store's own (retryable) errors. */
export interface NetpolStore {
  /**
   * NetworkPolicies of one namespace, or of every namespace (undefined). "cached": from the API
   * server's watch cache, maybe a little stale (shared/kube/freshness.ts). Default consistent.
   */
  listPolicies(namespace?: string, freshness?: ReadFreshness): Promise<readonly unknown[]>;
  /** Pods that have not terminated, in every namespace. */
  listPods(): Promise<readonly unknown[]>;
  listNamespaces(): Promise<readonly unknown[]>;
  /** One Pod, terminated or not; null when it does not exist. */
  getPod(namespace: string, name: string): Promise<unknown>;
  /** One Namespace; null when it does not exist. */
  getNamespace(name: string): Promise<unknown>;
  /** Stored tables of a kind in one namespace, or every namespace (null), maybe by label. */
  listTables(
    kind: TableKind,
    namespace: string | null,
    labelSelector?: string,
    freshness?: ReadFreshness,
  ): Promise<StoredTable[]>;
  getTable(kind: TableKind, namespace: string, name: string): Promise<StoredTable | null>;
  createTable(desired: DesiredTable): Promise<void>;
  /** Replaces the table read at `resourceVersion`; fails (conflict) if it changed since. */
  replaceTable(desired: DesiredTable, resourceVersion: string): Promise<void>;
  /** Deletes the table as read: fails (conflict) if it changed since; gone already is fine. */
  deleteTable(stored: StoredTable): Promise<void>;
}

export interface NetpolEventResult {
  readonly trigger: NetpolTrigger;
  readonly endpoints: number;
  readonly peerSets: number;
  readonly writes: Readonly<Record<TableWrite["action"], number>>;
  /** Endpoint and policy problems (TooManyRules, InvalidSelector) and unreadable objects. */
  readonly problems: readonly string[];
  /** "pod": the Pod-only path; else the full recompute, and why a Pod event needed it. */
  readonly path: "pod" | "full" | `full: ${string}`;
  /** Tables that could not be written: each reported on its Pod or policy, and skipped. */
  readonly failures?: readonly Outcome[];
  /**
   * Endpoint tables failing closed per direction, across the cluster: set by the full recompute,
   * which compiles every table (the Pod path sees one Pod and leaves it out).
   */
  readonly failingClosed?: { readonly ingress: number; readonly egress: number };
}
