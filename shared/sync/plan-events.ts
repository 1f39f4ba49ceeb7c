/**
 * Which Kubernetes Event a rule decision is worth: one per transition of the rule's condition
 * (Applied once, not on every unchanged redelivery), and every repeat of a failure, so a storm of
 * identical failures is one Event whose series counts them. Pure: sync.ts records it.
 */
import type { RuleStatus } from "../rules/index.js";
import {
  REPEATED_DRIFT_REASON,
  RESTART_DEFERRED_REASON,
  type RuleDecision,
} from "./plan-status.js";

/** The closed catalogue of Event reasons on rules; docs/events.md lists them. */
export const RULE_EVENT_REASONS = {
  Applied: { type: "Normal", means: "the rule is on every pod of its CNF" },
  DriftRepaired: { type: "Normal", means: "a pod's copy had changed and was written back" },
  DeletedFromCNF: { type: "Normal", means: "the rule was removed from every pod; it goes now" },
  NotReady: { type: "Warning", means: "no CNF, or not all its pods are ready: applied later" },
  Retrying: { type: "Warning", means: "a CNF or dependency failure; delivery retries" },
  Rejected: { type: "Warning", means: "the CNF refused the rule as it is: fix the spec" },
  Stalled: { type: "Warning", means: "the rule cannot be applied until someone acts" },
  RepeatedDrift: {
    type: "Warning",
    means: "the CNF keeps losing the rule after it is written back",
  },
} as const;

export type RuleEventReason = keyof typeof RULE_EVENT_REASONS;

export interface PlannedEvent {
  readonly type: "Normal" | "Warning";
  readonly reason: RuleEventReason;
  readonly note: string;
}

/** Condition reasons (shared/sync/plan-status.ts) by the Event reason they are reported as. */
function eventReason(condition: RuleDecision["condition"]): RuleEventReason {
  const { type, reason } = condition;
  if (type === "Ready") return reason === "DriftRepaired" ? "DriftRepaired" : "Applied";
  if (type === "Stalled") return reason === "CNFRejected" ? "Rejected" : "Stalled";
  if (reason === "Deleted") return "DeletedFromCNF";
  if (reason === REPEATED_DRIFT_REASON) return "RepeatedDrift";
  if (reason === "NoCNF" || reason === "CNFNotReady" || reason === "PodsNotReady") {
    return "NotReady";
  }
  return "Retrying";
}

/** Whether the decision changes what the rule's first condition says, or applies a new generation. */
function isTransition(old: RuleStatus | undefined, decision: RuleDecision): boolean {
  const { condition } = decision;
  const previous = old?.conditions?.[0];
  // A new generation applied is news too, though the condition reads as before.
  const appliedGeneration = decision.status?.appliedGeneration;
  return (
    previous === undefined ||
    previous.type !== condition.type ||
    previous.reason !== condition.reason ||
    previous.message !== condition.message ||
    (appliedGeneration !== undefined && appliedGeneration !== old?.appliedGeneration)
  );
}

export function planRuleEvent(
  old: RuleStatus | undefined,
  decision: RuleDecision,
): PlannedEvent | null {
  const { condition } = decision;
  // Batching restarts is routine, not news: the Applied Event follows once the restart is paid.
  if (condition.reason === RESTART_DEFERRED_REASON) return null;
  const reason = eventReason(condition);
  const { type } = RULE_EVENT_REASONS[reason];
  // A failure seen again is counted in its Event's series; a success seen again says nothing.
  const repeatedFailure = type === "Warning" && decision.outcome.kind !== "done";
  if (!isTransition(old, decision) && !repeatedFailure) return null;
  return { type, reason, note: condition.message };
}
