/**
 * How fresh an event's reads are (ADR 0004, "Addendum: the freshness rule of the event paths").
 *
 * A list without a resourceVersion is consistent: kube-apiserver 1.36 serves it from its watch
 * cache only once that cache has caught up with etcd's current revision, and a kind nobody wrote
 * since the last change elsewhere catches up only on an etcd progress notification, which the API
 * server requests at most every 100 ms per kind. A burst of events therefore pays up to 100 ms per
 * consistent list (measured: 96 ms back to back, 1 ms with resourceVersion "0"; so does
 * `resourceVersionMatch=NotOlderThan` with the event object's resourceVersion, 97 ms).
 *
 * The rule: an event's first attempt reads lists from the watch cache ("cached") and writes every
 * object it read with that object's resourceVersion as a precondition; a stale copy then fails
 * the write with 409 Conflict, and every later attempt reads consistently ("consistent"). GETs by
 * name go to etcd and are always consistent, at no wait.
 */
import { retryOnConflict, type ConflictRetryOptions } from "./retry.js";

export type ReadFreshness = "cached" | "consistent";

/** The list (or get) options of a read at this freshness. */
export const readOptions = (freshness: ReadFreshness): { readonly resourceVersion?: "0" } =>
  freshness === "cached" ? { resourceVersion: "0" } : {};

/**
 * retryOnConflict whose first attempt may read from the watch cache and whose later attempts,
 * after a write was refused, read consistently: a stale read costs one more attempt, never a
 * write over a newer object.
 */
export function cachedThenConsistent<T>(
  options: ConflictRetryOptions,
  attempt: (freshness: ReadFreshness, n: number) => Promise<T>,
): Promise<T> {
  return retryOnConflict(options, (n) => attempt(n === 1 ? "cached" : "consistent", n));
}
