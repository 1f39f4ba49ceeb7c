/**
 * Which Imports an event concerns (clusterlink-import's scope planner, pure): the kind the event
 * names, the keys an Import, Service, EndpointSlice or Peer event brings into focus, which Imports a lease round settles,
 * and what an Import claims of the port leases (plan-lease.ts).
 */
import type { IntakeEvent } from "../events/types.js";
import { importNameProblem } from "../kinds/clusterlink.js";
import { LEASED_PORT_ANNOTATION, systemServiceName, type ImportKey } from "./names.js";
import type { ObservedImport } from "./observed.js";
import type { LeaseClaim, LeaseDecision } from "./plan-lease.js";
import { namespacedTrigger, type MalformedTrigger } from "./plan-trigger.js";
import { peersNamedBy, planSources, SOURCES_CONDITION } from "./plan-sources.js";

export const keyOf = (k: ImportKey): string => `${k.namespace}/${k.name}`;

/** The kinds whose events clusterlink-import takes; each has its applier (apply-import-event.ts). */
export type ImportEventKind = "Import" | "Service" | "EndpointSlice" | "Peer";

/** What the event names, before anything is read. */
export type ImportTrigger =
  | { readonly kind: "resync" }
  | { readonly kind: ImportEventKind; readonly namespace: string; readonly name: string }
  | MalformedTrigger;

const IMPORT_EVENT_KINDS: readonly ImportEventKind[] = [
  "Import",
  "Service",
  "EndpointSlice",
  "Peer",
];

export function importTriggerFromEvent(event: IntakeEvent): ImportTrigger {
  if (event.type === "resync") return { kind: "resync" };
  return namespacedTrigger(event.ref, "clusterlink-import", IMPORT_EVENT_KINDS);
}

/** An Import no Service can be named after claims no port (plan-import.ts: InvalidName). */
export const nameBarred = (imp: ObservedImport): boolean => importNameProblem(imp.name) !== null;

export function leaseClaimOf(imp: ObservedImport): LeaseClaim | null {
  if (imp.deleting || !imp.spec.ok || nameBarred(imp)) return null;
  const targetPort = imp.spec.value.targetPort ?? 0;
  return {
    key: keyOf(imp),
    uid: imp.uid,
    creationTimestamp: imp.creationTimestamp,
    targetPort,
    leasedByUs: targetPort !== 0 && imp.annotations[LEASED_PORT_ANNOTATION] === String(targetPort),
  };
}

export const peerNamesOf = (imp: ObservedImport): string[] =>
  peersNamedBy(imp.spec.ok ? imp.spec.value.sources : undefined);

/** Which Imports an event concerns, as keys; `own` is the Import the event is about, if any. */
export interface Focus {
  readonly keys: ReadonlySet<string>;
  readonly own: string | null;
  readonly all: boolean;
}

export const portInvalid = (imp: ObservedImport): boolean =>
  imp.status?.conditions?.some((c) => c.type === "ImportTargetPortValid" && c.status === "False") ??
  false;

/** Service events: the Import named like it, the Import whose system Service it is, its labels' Import. */
export function serviceFocus(
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
export function inFocus(
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

/** The Import a copy belongs to, from its name (`clusterlink-<len>-<import>-<slice>`). */
export function importOfCopyName(name: string): string | undefined {
  const match = /^clusterlink-(\d+)-/.exec(name);
  if (match === null) return undefined;
  const rest = name.slice(match[0].length);
  const length = Number(match[1]);
  return rest.length > length && rest[length] === "-" ? rest.slice(0, length) : undefined;
}

/** Whether the stored report of an Import's sources differs from what the Peers say now. */
export function sourcesReportChanged(
  imp: ObservedImport,
  peers: Parameters<typeof planSources>[1],
  clNamespace: string,
): boolean {
  if (!imp.spec.ok) return false;
  const want = planSources(imp.spec.value.sources ?? [], peers, clNamespace).condition;
  const stored = imp.status?.conditions?.find((c) => c.type === SOURCES_CONDITION);
  return (
    stored?.status !== want.status ||
    stored.reason !== want.reason ||
    stored.message !== want.message
  );
}
