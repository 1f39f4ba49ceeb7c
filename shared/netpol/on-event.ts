/**
 * One NetworkPolicy, Pod or Namespace event (or a resync) from intake to Outcome: classify it,
 * recompute the tables it can change (kube-store.ts), and after a race (a 409, a vanished table)
 * recompute from scratch, a bounded number of times. Instances compute byte-identical tables from
 * the same world, so racing ones converge. Outcomes: docs/code-notes.md (netpol/on-event.ts).
 */
import { batchOutcome, done, malformed, type Outcome } from "../core/outcome.js";
import type { IntakeEvent } from "../events/types.js";
import {
  cachedThenConsistent,
  kubeFailureOutcome,
  raced,
  type EntryContext,
  type EventRecorder,
} from "../kube/index.js";
import { applyNetpolTrigger, type NetpolApplyOptions } from "./apply-event.js";
import type { NetpolEventResult } from "./store.js";
import { kubeNetpolStore } from "./kube-store.js";
import { netpolTriggerFromEvent } from "./plan-scope.js";

export interface NetpolEventOptions {
  /** Whole recomputes tried when a write races. Default 3. */
  readonly maxRaceAttempts?: number;
  /** Kubernetes Events on Pods and NetworkPolicies (plan-events.ts). Default: none. */
  readonly events?: EventRecorder;
  /** Told the cluster's count of tables failing closed after a recompute of every table. */
  readonly onFailingClosed?: (count: NonNullable<NetpolEventResult["failingClosed"]>) => void;
  /** Bytes of JSON one peer set may take (peer-set-bound.ts). Default 1.25 MiB. */
  readonly maxPeerSetBytes?: number;
  /** The problems of the peer sets a full recompute covered, for a metric (apply-event.ts). */
  readonly onPolicyProblems?: NetpolApplyOptions["onPolicyProblems"];
}

function summary(result: NetpolEventResult): string {
  const { create, replace, delete: deleted } = result.writes;
  const changed = create + replace + deleted;
  const how =
    result.path === "pod"
      ? "; the Pod's entry only"
      : result.path === "full"
        ? ""
        : `; ${result.path}`;
  const what = `${result.endpoints} endpoints, ${result.peerSets} policies${how}`;
  const problems = result.problems.length === 0 ? "" : `; problems: ${result.problems.join(", ")}`;
  if (changed === 0) return `unchanged: ${what}${problems}`;
  return `tables written: ${create} created, ${replace} replaced, ${deleted} deleted (${what})${problems}`;
}

/** network-policy-sync's context: the API, the log, the clock, and its own settings. */
export type NetpolEventContext = EntryContext & NetpolEventOptions;

export async function syncNetpolEvent(
  event: IntakeEvent,
  ctx: NetpolEventContext,
): Promise<Outcome> {
  const { kube, log, ...options } = ctx;
  const classified = netpolTriggerFromEvent(event);
  if (!classified.ok) return malformed(classified.code, classified.reason);
  const store = kubeNetpolStore(kube);
  try {
    // The Pod path's first attempt lists from the watch cache; a refused write means a copy was
    // stale or raced, and the next attempt reads consistently (shared/kube/freshness.ts).
    const result = await cachedThenConsistent(
      { attempts: options.maxRaceAttempts ?? 3, isRace: raced },
      (freshness) =>
        applyNetpolTrigger(classified.trigger, store, {
          freshness,
          log,
          ...(options.events === undefined ? {} : { events: options.events }),
          ...(options.maxPeerSetBytes === undefined
            ? {}
            : { maxPeerSetBytes: options.maxPeerSetBytes }),
          ...(options.onPolicyProblems === undefined
            ? {}
            : { onPolicyProblems: options.onPolicyProblems }),
        }),
    );
    log.debug({ writes: result.writes }, "netpol tables recomputed");
    if (result.failingClosed !== undefined) options.onFailingClosed?.(result.failingClosed);
    return batchOutcome([...(result.failures ?? []), done(summary(result))]);
  } catch (error) {
    return kubeFailureOutcome(error, "recomputing the NetworkPolicy tables", {
      notFound: "raced",
      retryAfterSeconds: 5,
    });
  }
}
