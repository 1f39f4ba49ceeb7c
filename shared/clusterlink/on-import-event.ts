/**
 * clusterlink-import's one entry: an Import, Service, EndpointSlice or Peer event (or a resync)
 * goes to its kind's applier (apply-import-event.ts); an API failure becomes an outcome as
 * shared/kube maps it, a lease race a retry. Outcomes and cleanup: docs/code-notes.md
 * (clusterlink/on-import-event.ts).
 */
import { malformed, retryLater, type Outcome } from "../core/outcome.js";
import type { IntakeEvent } from "../events/index.js";
import { kubeFailureOutcome, type EntryContext } from "../kube/index.js";
import {
  onEndpointSliceEvent,
  onImportEvent,
  onPeerEvent,
  onResync,
  onServiceEvent,
  type RoundOptions,
} from "./apply-import-event.js";
import type { ImportEventOptions } from "./apply-import.js";
import { LeaseRaceError } from "./lease-by-port.js";
import { importTriggerFromEvent } from "./plan-import-scope.js";
import { kubeClusterLinkStore } from "./kube-store.js";

/** clusterlink-import's context: the API, the log, the clock, and its own settings. */
export type ImportEventContext = EntryContext & Omit<ImportEventOptions, "now" | "events">;

export async function syncImportEvent(
  event: IntakeEvent,
  ctx: ImportEventContext,
): Promise<Outcome> {
  const { kube, log, now, ...settings } = ctx;
  const store = kubeClusterLinkStore(kube);
  const withLog: RoundOptions = { ...settings, now: now(), log };
  const trigger = importTriggerFromEvent(event);
  if (trigger.kind === "malformed") return malformed(trigger.code, trigger.reason);
  try {
    if (trigger.kind === "resync") return await onResync(store, withLog);
    const { kind, namespace, name } = trigger;
    const handlers = {
      Import: onImportEvent,
      Service: onServiceEvent,
      EndpointSlice: onEndpointSliceEvent,
      Peer: onPeerEvent,
    } as const;
    const outcome = await handlers[kind](store, { namespace, name }, withLog);
    log.debug({ kind, namespace, name, outcome: outcome.kind }, "imports reconciled");
    return outcome;
  } catch (error) {
    return retryOrThrow(error);
  }
}

/** A lease race is retried; an API failure as shared/kube maps it; anything else is a bug (500). */
function retryOrThrow(error: unknown): Outcome {
  if (error instanceof LeaseRaceError) return retryLater(error.message, 1);
  return kubeFailureOutcome(error, "settling the Imports", {
    notFound: "raced",
    retryAfterSeconds: 5,
  });
}

export type { ImportEventOptions } from "./apply-import.js";
