/**
 * One egress event from intake to Outcome: classify it, recompute the groups it touches over the
 * API server (kube-store.ts), and when a write raced with another writer (409, or the group
 * vanished), recompute from scratch, a bounded number of times.
 *
 * Outcomes: done when every touched group is as planned, also when a group is Stalled because of
 * a Pod or Namespace event (the group records it; redelivery cannot help); permanent for an Egress
 * event whose Egress has an invalid selector or too many members; retry on API errors and after
 * repeated races; malformed for events of other kinds. A group the API server refuses to write is
 * reported on itself and skipped (apply-event.ts): the Egress's own event answers with it, an event
 * over many groups (a resync) stays done.
 */
import { batchOutcome, done, malformed, permanent, type Outcome } from "../core/outcome.js";
import type { IntakeEvent } from "../events/index.js";
import {
  cachedThenConsistent,
  kubeFailureOutcome,
  raced,
  type EntryContext,
  type EventRecorder,
} from "../kube/index.js";
import { EGRESS_GROUP_API_VERSION, EGRESS_GROUP_KIND } from "../kinds/index.js";
import { applyEgressTrigger, type EventResult, type GroupResult } from "./apply-event.js";
import { kubeEgressStore } from "./kube-store.js";
import { membersChangedEvent, type MembersChange } from "./plan-events.js";
import { triggerFromEvent } from "./plan-scope.js";
import type { GroupLimits } from "./size.js";

export interface EgressEventOptions {
  /** RFC 3339 time for condition transitions. */
  readonly now: string;
  readonly limits?: GroupLimits;
  /** Whole recomputes tried when a write races. Default 3. */
  readonly maxRaceAttempts?: number;
  /** Where `MembersChanged` Events go (best-effort, bounded); none when absent. */
  readonly events?: EventRecorder;
}

const PAST: Readonly<Record<GroupResult["action"], string>> = {
  create: "created",
  update: "updated",
  delete: "deleted",
  unchanged: "unchanged",
};

function describeGroup(group: GroupResult): string {
  const members = group.memberCount === null ? "" : ` (${group.memberCount} members)`;
  const stalled = group.problem === null ? "" : `, stalled: ${group.problem.reason}`;
  return `EgressGroup ${group.name} ${PAST[group.action]}${members}${stalled}`;
}

function summary(result: EventResult): string {
  const { groups, trigger } = result;
  if (groups.length === 0) {
    const what =
      trigger.kind === "pod" ? `pod ${trigger.namespace}/${trigger.name}` : `${trigger.kind}`;
    return `unchanged: no Egress selects or lists ${what}`;
  }
  const [only] = groups;
  if (groups.length === 1 && only !== undefined) return describeGroup(only);
  const counts = new Map<string, number>();
  for (const g of groups) counts.set(PAST[g.action], (counts.get(PAST[g.action]) ?? 0) + 1);
  const stalled = groups.filter((g) => g.problem !== null).map((g) => g.name);
  const parts = [...counts].map(([action, n]) => `${n} ${action}`).join(", ");
  return `${groups.length} EgressGroups recomputed: ${parts}${stalled.length > 0 ? `; stalled: ${stalled.join(", ")}` : ""}`;
}

function outcomeOf(result: EventResult): Outcome {
  const { trigger, groups } = result;
  const problem = groups[0]?.problem ?? null;
  const failures = groups.flatMap((g) => (g.failure === undefined ? [] : [g.failure]));
  // The Egress's own event answers for its one group; other events for many (batchOutcome).
  if (trigger.kind === "egress" && failures[0] !== undefined) return failures[0];
  if (trigger.kind === "egress" && problem !== null) {
    return permanent(problem.reason, `EgressGroup ${trigger.name}: ${problem.message}`);
  }
  return batchOutcome([...failures, done(summary(result))]);
}

/** The group's `MembersChanged (+a -b)` Event (plan-events.ts), on the cluster-scoped group. */
const recordMembersChanged =
  (events: EventRecorder) =>
  (change: MembersChange, uid: string): Promise<void> =>
    events.record({
      ...membersChangedEvent(change),
      regarding: {
        apiVersion: EGRESS_GROUP_API_VERSION,
        kind: EGRESS_GROUP_KIND,
        namespace: "",
        name: change.group,
        ...(uid === "" ? {} : { uid }),
      },
      action: "Sync",
    });

/** egress-group-sync's context: the API, the log, the clock, and its own settings. */
export type EgressEventContext = EntryContext & Omit<EgressEventOptions, "now" | "events">;

export async function syncEgressEvent(
  event: IntakeEvent,
  ctx: EgressEventContext,
): Promise<Outcome> {
  const { kube, log, now, ...settings } = ctx;
  const options: EgressEventOptions = { ...settings, now: now() };
  const classified = triggerFromEvent(event);
  if (!classified.ok) return malformed(classified.code, classified.reason);
  const store = kubeEgressStore(kube);
  const apply = {
    now: options.now,
    log,
    ...(options.events ? { events: options.events } : {}),
    ...(options.limits ? { limits: options.limits } : {}),
    ...(options.events ? { onMembersChanged: recordMembersChanged(options.events) } : {}),
  };
  try {
    // A Pod event's first attempt lists from the watch cache; a refused write or a stale view
    // makes the next attempt read consistently (shared/kube/freshness.ts).
    const result = await cachedThenConsistent(
      { attempts: options.maxRaceAttempts ?? 3, isRace: raced, jitterMs: 0 },
      (freshness) => applyEgressTrigger(classified.trigger, store, { ...apply, freshness }),
    );
    log.debug({ recomputed: result.recomputed }, "egress groups recomputed");
    return outcomeOf(result);
  } catch (error) {
    return kubeFailureOutcome(error, "recomputing the EgressGroups", {
      notFound: "raced",
      retryAfterSeconds: 5,
    });
  }
}
