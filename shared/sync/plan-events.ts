/**
 * Which Kubernetes Event a rule decision is worth: one per transition of the rule's condition
 * (Applied once, not on every unchanged redelivery), and every repeat of a failure, so a storm of
 * identical failures is one Event whose series counts them. And where it goes: what a sync of a
 * whole CNF did to many rules at once, the CNF's doing, is one Event on the CNF's Deployment
 * (planSyncEvents; docs/adr/0013). Pure: sync.ts records them.
 */
import { compareStrings } from "../core/order.js";
import type { RuleStatus } from "../kinds/index.js";
import {
  REPEATED_DRIFT_REASON,
  RESTART_DEFERRED_REASON,
  type ObservedRule,
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

/**
 * The Event reasons on a CNF Deployment: a reason rules share in one sync of the whole CNF, told
 * once for all of them (planSyncEvents). docs/events.md lists them.
 */
export const CNF_EVENT_REASONS = {
  RulesApplied: {
    type: "Normal",
    means: "rules are on every pod again, and which pod got how many",
  },
  RulesDriftRepaired: { type: "Normal", means: "pods had lost or changed rules: written back" },
  RulesNotReady: {
    type: "Warning",
    means: "not all the CNF's pods are ready: the others keep its rules, it gets them when ready",
  },
  RulesRetrying: { type: "Warning", means: "a CNF or dependency failure rules share; retried" },
  RulesRejected: { type: "Warning", means: "the CNF refused rules it took before" },
  RulesStalled: { type: "Warning", means: "rules cannot be applied until someone acts" },
  RulesRepeatedDrift: {
    type: "Warning",
    means: "the CNF keeps losing rules after they are written back",
  },
} as const satisfies Partial<
  Record<`Rules${RuleEventReason}`, { type: "Normal" | "Warning"; means: string }>
>;

export type CnfEventReason = keyof typeof CNF_EVENT_REASONS;

/** Rules of one sync that share a reason this many times or more are told on the Deployment. */
export const SHARED_BY = 2;

/** Rule names a Deployment Event lists before "and N more". */
const NAMED = 3;

/** A rule's planned Event in one sync. */
export interface NotedRuleEvent {
  readonly rule: { readonly kind: string; readonly name: string; readonly key: string };
  readonly event: PlannedEvent;
  /** News about the rule itself (isOwnChange): it stays the rule's, whatever others do. */
  readonly own: boolean;
}

/**
 * Whether what happens to a rule is its own doing: it is being deleted, or acted on for a
 * generation no status of it has observed yet (new, or its spec changed). Otherwise its
 * transition is the CNF's doing (pods restarted, went not ready, lost what they held).
 */
export function isOwnChange(rule: ObservedRule): boolean {
  return rule.deleting || rule.status?.observedGeneration !== rule.generation;
}

export interface CnfPlannedEvent {
  readonly type: "Normal" | "Warning";
  readonly reason: CnfEventReason;
  readonly note: string;
}

export interface SyncEventsInput<T extends NotedRuleEvent> {
  readonly noted: readonly T[];
  /** The CNF's Deployment when the sync covered every rule of the CNF; else undefined. */
  readonly cnf: { readonly name: string } | undefined;
  /** What each ready pod was written in this sync (PodSyncResult). */
  readonly pods: readonly {
    readonly pod: string;
    readonly writes: readonly { readonly ruleKey: string }[];
  }[];
  /**
   * The CNF's pods when some, not all, are ready, and how many rules the sync covered: told once
   * on the Deployment, as the rules' statuses do not change for it (ADR 0016).
   */
  readonly readiness?: {
    readonly ready: number;
    readonly expected: number;
    readonly rules: number;
  };
}

/**
 * Where the Events of one sync go. A sync of some rules (a rule event): each on its rule. A sync
 * of a whole CNF: a reason that SHARED_BY or more rules share for the CNF's doing is one Event on
 * the Deployment (how many rules, a few names, what they met, what each pod was written), and
 * none on those rules; the rest, and every rule's own news, on the rules.
 */
export function planSyncEvents<T extends NotedRuleEvent>(
  input: SyncEventsInput<T>,
): { onRules: T[]; onCnf: CnfPlannedEvent[] } {
  if (input.cnf === undefined) return { onRules: [...input.noted], onCnf: [] };
  const onRules: T[] = [];
  const shared = new Map<CnfEventReason, T[]>();
  for (const noted of input.noted) {
    const reason = `Rules${noted.event.reason}`;
    if (noted.own || !(reason in CNF_EVENT_REASONS)) onRules.push(noted);
    else {
      const group = shared.get(reason as CnfEventReason) ?? [];
      shared.set(reason as CnfEventReason, [...group, noted]);
    }
  }
  const onCnf: CnfPlannedEvent[] = [];
  for (const [reason, group] of shared) {
    if (group.length < SHARED_BY) onRules.push(...group);
    else {
      const { type } = CNF_EVENT_REASONS[reason];
      onCnf.push({ type, reason, note: cnfNote(group, input.pods) });
    }
  }
  const partly = partlyReady(input.cnf.name, input.readiness);
  if (partly !== undefined && !shared.has("RulesNotReady")) onCnf.push(partly);
  onCnf.sort((a, b) => compareStrings(a.reason, b.reason));
  return { onRules, onCnf };
}

/** The CNF's readiness when some, not all, of its pods are ready (ADR 0016); else undefined. */
function partlyReady(
  cnf: string,
  readiness: SyncEventsInput<NotedRuleEvent>["readiness"],
): CnfPlannedEvent | undefined {
  if (readiness === undefined || readiness.rules === 0) return undefined;
  const { ready, expected, rules } = readiness;
  if (ready === 0 || ready >= expected) return undefined;
  return {
    type: "Warning",
    reason: "RulesNotReady",
    note:
      `CNF ${cnf} has ${ready}/${expected} pods ready: its ${rules} rules stay applied on the ` +
      "ready pods, and are written to the others when they are ready",
  };
}

type Pods = SyncEventsInput<NotedRuleEvent>["pods"];

/** "12 rules (Kind a, Kind b, Kind c and 9 more): <what they met>; written to pod p: 12". */
function cnfNote(group: readonly NotedRuleEvent[], pods: Pods): string {
  const names = group.map((n) => `${n.rule.kind} ${n.rule.name}`).sort();
  const more = names.length > NAMED ? ` and ${names.length - NAMED} more` : "";
  const { note, sharedBy } = commonNote(group);
  const others =
    sharedBy < group.length ? ` (${sharedBy} of them; each rule's status says its own)` : "";
  return `${group.length} rules (${names.slice(0, NAMED).join(", ")}${more}): ${note}${others}${writtenTo(group, pods)}`;
}

/** The note most of the group met (the first in order on a tie), and how many met it. */
function commonNote(group: readonly NotedRuleEvent[]): { note: string; sharedBy: number } {
  const counts = new Map<string, number>();
  for (const { event } of group) counts.set(event.note, (counts.get(event.note) ?? 0) + 1);
  let best = { note: "", sharedBy: 0 };
  for (const [note, n] of [...counts].sort(([a], [b]) => compareStrings(a, b))) {
    if (n > best.sharedBy) best = { note, sharedBy: n };
  }
  return best;
}

/** "; written to pod a: 12, pod b: 3": the group's rules each pod was written, by pod name. */
function writtenTo(group: readonly NotedRuleEvent[], pods: Pods): string {
  const keys = new Set(group.map((n) => n.rule.key));
  const written = pods
    .map((p) => ({
      pod: p.pod,
      rules: new Set(p.writes.filter((w) => keys.has(w.ruleKey)).map((w) => w.ruleKey)).size,
    }))
    .filter((p) => p.rules > 0)
    .sort((a, b) => compareStrings(a.pod, b.pod));
  if (written.length === 0) return "";
  return `; written to ${written.map((p) => `pod ${p.pod}: ${p.rules}`).join(", ")}`;
}
