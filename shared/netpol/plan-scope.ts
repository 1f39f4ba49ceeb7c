/**
 * Which stored tables an event can change, so only those are read and compared; and, given
 * desired and stored tables, the writes. Pure. The event is a hint: every decision is made from
 * the world re-read for this event, so a duplicate, late or reordered event writes nothing.
 * What each kind of event can change: docs/code-notes.md (netpol/plan-scope.ts).
 */
import type { IntakeEvent } from "../events/types.js";
import type { DesiredTable, StoredTable, TableKind } from "./table-objects.js";

export type NetpolTrigger =
  | { readonly kind: "pod"; readonly namespace: string; readonly name: string }
  | { readonly kind: "namespace"; readonly name: string }
  | { readonly kind: "policy"; readonly namespace: string; readonly name: string }
  | { readonly kind: "resync" };

export type NetpolTriggerClassification =
  | { readonly ok: true; readonly trigger: NetpolTrigger }
  | { readonly ok: false; readonly code: "UnknownKind" | "MissingName"; readonly reason: string };

const KINDS: Readonly<Record<string, { kind: NetpolTrigger["kind"]; apiVersion: string }>> = {
  Pod: { kind: "pod", apiVersion: "v1" },
  Namespace: { kind: "namespace", apiVersion: "v1" },
  NetworkPolicy: { kind: "policy", apiVersion: "networking.k8s.io/v1" },
};

export function netpolTriggerFromEvent(event: IntakeEvent): NetpolTriggerClassification {
  if (event.type === "resync") return { ok: true, trigger: { kind: "resync" } };
  const { kind, apiVersion, namespace, name } = event.ref;
  // Own keys only: a kind named "constructor" must not find Object.prototype's member.
  const known = Object.hasOwn(KINDS, kind) ? KINDS[kind] : undefined;
  if (known === undefined || (apiVersion !== "" && apiVersion !== known.apiVersion)) {
    const shown = apiVersion === "" ? kind : `${apiVersion} ${kind}`;
    return {
      ok: false,
      code: "UnknownKind",
      reason: `network-policy-sync does not handle ${shown} events`,
    };
  }
  const namespaced = known.kind !== "namespace";
  if (name === "" || (namespaced && namespace === "")) {
    return {
      ok: false,
      code: "MissingName",
      reason: `${kind} event without ${name === "" ? "name" : "namespace"}`,
    };
  }
  if (known.kind === "namespace") return { ok: true, trigger: { kind: "namespace", name } };
  return { ok: true, trigger: { kind: known.kind, namespace, name } };
}

/** A set of stored tables of one kind: listed (all, or one namespace), labelled, single keys. */
export interface TableReads {
  /** One namespace, every namespace (EVERY), or no list at all. */
  readonly list: { readonly namespace: string } | null;
  /** Also every table carrying its kind's SCOPE_LABEL (table-objects.ts), in every namespace. */
  readonly labelled: boolean;
  /** "<namespace>/<name>" keys read one by one. */
  readonly keys: readonly string[];
}

export interface TableScope {
  readonly endpoints: TableReads;
  readonly peerSets: TableReads;
}

/** A list of every namespace ("*" is no namespace name). */
export const EVERY = { namespace: "*" } as const;

export const tableKeyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

const NOTHING: TableReads = { list: null, labelled: false, keys: [] };
const ALL: TableReads = { list: EVERY, labelled: false, keys: [] };

/**
 * From the trigger alone, so the stored tables can be read before the world: a table written
 * after that read then fails our resourceVersion precondition instead of being overwritten
 * with a world older than its writer's. `olderPeerSets`: some peer sets were written by an older
 * version (OLDER_PEER_SETS), so labels cannot find all those a Namespace changes.
 */
export function planTableScope(trigger: NetpolTrigger, olderPeerSets = false): TableScope {
  switch (trigger.kind) {
    case "resync":
      return { endpoints: ALL, peerSets: ALL };
    case "policy":
      return {
        endpoints: { ...NOTHING, list: { namespace: trigger.namespace } },
        peerSets: { ...NOTHING, keys: [tableKeyOf(trigger.namespace, trigger.name)] },
      };
    case "namespace":
      return {
        endpoints: { ...NOTHING, labelled: true },
        peerSets: olderPeerSets ? ALL : { ...NOTHING, labelled: true },
      };
    case "pod": {
      const own = tableKeyOf(trigger.namespace, trigger.name);
      return { endpoints: { list: null, labelled: true, keys: [own] }, peerSets: ALL };
    }
  }
}

export type TableWrite =
  | { readonly action: "create"; readonly desired: DesiredTable }
  | {
      readonly action: "replace";
      readonly desired: DesiredTable;
      readonly resourceVersion: string;
      /** The table as read (its problems tell which Events the write is worth). */
      readonly previous: StoredTable;
    }
  | { readonly action: "delete"; readonly stored: StoredTable };

/** Whether `reads` cover the table (`labelled`: it carries its kind's SCOPE_LABEL). */
export function inScope(
  reads: TableReads,
  table: { readonly namespace: string; readonly name: string; readonly labelled?: boolean },
): boolean {
  const listed = reads.list?.namespace;
  if (listed === EVERY.namespace || listed === table.namespace) return true;
  if (reads.labelled && table.labelled === true) return true;
  return reads.keys.includes(tableKeyOf(table.namespace, table.name));
}

/**
 * The writes that make the stored tables in scope equal the desired ones: create the missing,
 * replace (at the read resourceVersion) the different, delete the undesired. `stored` holds only
 * what `reads` read, so every stored table is in scope. Sorted by key.
 */
export function planTableWrites(
  kind: TableKind,
  reads: TableReads,
  desired: readonly DesiredTable[],
  stored: readonly StoredTable[],
): TableWrite[] {
  const storedByKey = new Map(stored.map((s) => [tableKeyOf(s.namespace, s.name), s]));
  const writes: TableWrite[] = [];
  const wanted = new Set<string>();
  for (const table of desired) {
    if (table.kind !== kind || !inScope(reads, table)) continue;
    const key = tableKeyOf(table.namespace, table.name);
    wanted.add(key);
    const current = storedByKey.get(key);
    if (current === undefined) writes.push({ action: "create", desired: table });
    else if (current.content !== table.content) {
      const { resourceVersion } = current;
      writes.push({ action: "replace", desired: table, resourceVersion, previous: current });
    }
  }
  for (const [key, current] of storedByKey) {
    if (!wanted.has(key)) {
      writes.push({ action: "delete", stored: current });
    }
  }
  const keyOf = (w: TableWrite): string =>
    w.action === "delete"
      ? tableKeyOf(w.stored.namespace, w.stored.name)
      : tableKeyOf(w.desired.namespace, w.desired.name);
  return writes.sort((a, b) => (keyOf(a) < keyOf(b) ? -1 : keyOf(a) > keyOf(b) ? 1 : 0));
}
