/**
 * An event the connector owes a route, and how two queued events for the same object coalesce.
 * Pure data and rules: no clock, no I/O.
 */
import type { ObjectRef, WatchAction } from "../shared/events/types.js";

export type PendingEvent =
  | {
      readonly route: string;
      readonly action: WatchAction;
      readonly ref: ObjectRef;
      /** Resource mode only: the object as observed (Reference mode sends just the ref). */
      readonly object?: Readonly<Record<string, unknown>>;
      /** CloudEvent id: fresh per observed change, kept across retries of that change. */
      readonly id: string;
    }
  | { readonly route: string; readonly action: "resync"; readonly id: string };

/** Per-object ordering and coalescing happen per key: one route x one object (or its resync). */
export function eventKey(event: PendingEvent): string {
  if (event.action === "resync") return `${event.route}|resync`;
  const { apiVersion, kind, namespace, name } = event.ref;
  return `${event.route}|${apiVersion}|${kind}|${namespace}|${name}`;
}

/**
 * Merges an incoming event into the one queued before it for the same key, or answers undefined
 * when both must be delivered in order. The later event's data and id win, but:
 * - a queued `delete` is a barrier: what follows it is another incarnation of the name, so an
 *   add/update after it is delivered separately (only a second delete replaces it);
 * - a queued `add` stays `add` when an update follows: the sink has not heard of the object yet;
 * - an incoming `delete` replaces anything before it (the object is gone either way).
 */
export function coalesce(queued: PendingEvent, incoming: PendingEvent): PendingEvent | undefined {
  if (queued.action === "resync" || incoming.action === "resync") {
    return queued.action === incoming.action ? incoming : undefined;
  }
  if (queued.action === "delete") {
    return incoming.action === "delete" ? incoming : undefined;
  }
  if (incoming.action === "delete") return incoming;
  if (queued.action === "add") return { ...incoming, action: "add" };
  return incoming;
}
