/**
 * What one watch stream remembers (per object: uid and resourceVersion, plus the object itself in
 * Resource mode) and the pure planning around it:
 * - planRelist: a fresh LIST against what was known -> the add/update/delete events that bring a
 *   sink up to date. The first list knows nothing, so every object becomes an `add` (the edge
 *   over ApiServerSource, which emits nothing for existing objects).
 * - applyWatchEvent: one watch event -> the event to emit and the new memory.
 */
import type { WatchAction } from "../shared/events/types.js";
import type { KubeObject } from "./objects.js";

export interface KnownObject {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly resourceVersion: string;
  /** Kept only in Resource mode, so a delete found by a re-list can carry the last state seen. */
  readonly object?: KubeObject;
}

export type KnownObjects = ReadonlyMap<string, KnownObject>;

export interface ObservedChange {
  readonly action: WatchAction;
  readonly namespace: string;
  readonly name: string;
  /** The object (or the last state known, for a delete found by re-list) when remembered. */
  readonly object?: KubeObject;
}

export function objectKey(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

function remember(object: KubeObject, keepObject: boolean): KnownObject {
  const { metadata } = object;
  return {
    namespace: metadata.namespace ?? "",
    name: metadata.name,
    uid: metadata.uid ?? "",
    resourceVersion: metadata.resourceVersion ?? "",
    ...(keepObject ? { object } : {}),
  };
}

function change(action: WatchAction, known: KnownObject, object?: KubeObject): ObservedChange {
  const carried = object ?? known.object;
  return {
    action,
    namespace: known.namespace,
    name: known.name,
    ...(carried === undefined ? {} : { object: carried }),
  };
}

export interface RelistPlan {
  readonly changes: ObservedChange[];
  readonly known: Map<string, KnownObject>;
}

/**
 * Listed objects that are new become `add`; changed ones `update`; a different uid under a known
 * name is a delete of the old incarnation followed by an add; known objects missing from the list
 * become `delete`. Unchanged objects emit nothing.
 */
export function planRelist(
  known: KnownObjects,
  listed: readonly KubeObject[],
  keepObjects: boolean,
): RelistPlan {
  const next = new Map<string, KnownObject>();
  const changes: ObservedChange[] = [];
  for (const object of listed) {
    const now = remember(object, keepObjects);
    const key = objectKey(now.namespace, now.name);
    next.set(key, now);
    const before = known.get(key);
    if (before === undefined) {
      changes.push(change("add", now, object));
    } else if (before.uid !== now.uid) {
      changes.push(change("delete", before), change("add", now, object));
    } else if (before.resourceVersion !== now.resourceVersion) {
      changes.push(change("update", now, object));
    }
  }
  for (const [key, before] of known) {
    if (!next.has(key)) changes.push(change("delete", before));
  }
  return { changes, known: next };
}

const ACTIONS = { ADDED: "add", MODIFIED: "update", DELETED: "delete" } as const;

/** Updates `known` in place for one object event and returns the change to emit. */
export function applyWatchEvent(
  known: Map<string, KnownObject>,
  type: keyof typeof ACTIONS,
  object: KubeObject,
  keepObjects: boolean,
): ObservedChange {
  const now = remember(object, keepObjects);
  const key = objectKey(now.namespace, now.name);
  if (type === "DELETED") known.delete(key);
  else known.set(key, now);
  return change(ACTIONS[type], now, object);
}
