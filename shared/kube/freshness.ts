/**
 * How fresh an event's reads are (ADR 0004, "Addendum: the freshness rule of the event paths"):
 * the first attempt lists from the watch cache ("cached") and writes with each object's
 * resourceVersion as a precondition, so a stale copy fails with 409; every later attempt lists
 * consistently ("consistent"). GETs by name are always consistent. A consistent list can wait up
 * to 100 ms per kind: the measurements are in docs/code-notes.md (kube/freshness.ts).
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
