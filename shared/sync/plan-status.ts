/**
 * Pure planning of what a rule's status, finalizer and outcome become, from the CNF's situation
 * and what happened on each ready pod. One table of cases for reconcile-rule and
 * on-deployment-ready alike; no I/O.
 */
import type { RuleCondition, RuleConditionType, RuleStatus } from "../kinds/index.js";
import { done, permanent, retryLater, type Outcome, type OutcomeCode } from "../core/outcome.js";
import type { KeyMaterial } from "../core/redact.js";
import type { PlannedWrite } from "./plan-writes.js";

type ConditionType = RuleConditionType;
type Condition = RuleCondition;

/** The rule as observed on the API server (only what planning needs). */
export interface ObservedRule {
  readonly key: string;
  readonly generation: number;
  readonly resourceVersion: string;
  readonly deleting: boolean;
  readonly hasFinalizer: boolean;
  readonly status: RuleStatus | undefined;
}

/** The CNF Deployment of the rule's purpose in the rule's namespace, as found. */
export type CnfSituation =
  | { readonly kind: "none"; readonly purpose: string; readonly namespace: string }
  | { readonly kind: "conflict"; readonly deployments: readonly string[] }
  | {
      readonly kind: "found";
      readonly deployment: string;
      readonly readyPods: number;
      readonly expectedPods: number;
    };

/**
 * "restart": the object was written but restarting its service failed afterwards.
 * "deferred": the object was written and its restart deferred to batch a burst (shared/cnf's
 * restart pacer); redelivery pays it.
 */
export type FailureClass = "transient" | "dependency" | "invalid" | "restart" | "deferred";

export interface WriteFailure {
  readonly class: FailureClass;
  readonly pod: string;
  readonly message: string;
  /** "deferred": when the restart is due, so the redelivery comes once (ADR 0020). */
  readonly dueInMs?: number;
}

/**
 * What happened to one rule on one ready pod. `podReadySince`: when that pod last turned Ready
 * (planReseeded tells a pod written again after it came back from drift on a pod that stayed).
 */
export type PodRuleResult =
  | { readonly kind: "held"; readonly changed: boolean; readonly podReadySince?: string }
  | { readonly kind: "failed"; readonly failure: WriteFailure };

/** What one pod sync did: a result per rule key, the writes made, the services restarted. */
export interface PodSyncResult {
  readonly pod: string;
  /** Per rule key. */
  readonly results: ReadonlyMap<string, PodRuleResult>;
  readonly writes: readonly PlannedWrite[];
  readonly restarted: readonly string[];
}

export interface RulePlanInput {
  readonly rule: ObservedRule;
  readonly cnf: CnfSituation;
  /** One entry per ready pod; empty when the CNF has no ready pod. */
  readonly podResults: readonly PodRuleResult[];
  /** A reason the rule can never be applied as written (bad network name, name collision...). */
  readonly unappliable?: { readonly code: OutcomeCode; readonly message: string };
  /** Rules this one references, e.g. ["Mwan3Policy balance1"], named when one is missing. */
  readonly needs?: readonly string[];
  /**
   * For a deletion the CNF refused because something still uses the object: the rule CRs that
   * reference it, e.g. ["Mwan3Rule rule1"]. Empty: no rule declares what uses it. Absent: unknown.
   */
  readonly stillUsedBy?: readonly string[];
  readonly now: string;
  /** Every key of the CNF (key-material.ts): kept out of the status and the outcome. */
  readonly keys?: KeyMaterial;
}

/** Finalizers are added before the first CNF write (needsClaim, ADR 0003), never here. */
export type FinalizerAction = "remove" | "keep";

export interface RuleDecision {
  /** The status to write, or null when the stored one already says the same. */
  readonly status: RuleStatus | null;
  readonly finalizer: FinalizerAction;
  readonly outcome: Outcome;
  /** Sentence fragment for logs: "created", "unchanged", "waiting for CNF"... */
  readonly result: string;
  /** The condition this decision stands for, also when no status is written (a rule leaving). */
  readonly condition: {
    readonly type: ConditionType;
    readonly reason: string;
    readonly message: string;
  };
}

const RETRY_SECONDS = 5;

/**
 * Drift repairs within REPEATED_DRIFT_WINDOW_MS after which a rule is no longer Ready: a CNF that
 * keeps losing what it accepted (one that answers 200 and stores nothing, or something on it
 * undoing our writes) is not holding the rule, whatever each write answered.
 */
export const REPEATED_DRIFT_REPAIRS = 3;
export const REPEATED_DRIFT_WINDOW_MS = 60 * 60 * 1000;
/** The condition reason, and the done result that counts the rule as not in sync (sync-counts). */
export const REPEATED_DRIFT_REASON = "RepeatedDrift";
export const REPEATED_DRIFT = "repeated drift";

/** Drift repairs counted since `since` (kept in status: the functions keep no memory). */
interface DriftCount {
  readonly repairs: number;
  readonly since: string;
}

/** The count the status carries, while its window lasts. */
function driftOf(status: RuleStatus | undefined, now: string): DriftCount | undefined {
  const since = status?.driftSince;
  const repairs = status?.driftRepairs;
  if (since === undefined || repairs === undefined) return undefined;
  return Date.parse(now) - Date.parse(since) <= REPEATED_DRIFT_WINDOW_MS
    ? { repairs, since }
    : undefined;
}

/** The count after one more repair: within the window it adds up, after it a new one starts. */
function oneMoreRepair(status: RuleStatus | undefined, now: string): DriftCount {
  const counted = driftOf(status, now);
  return counted === undefined
    ? { repairs: 1, since: now }
    : { repairs: counted.repairs + 1, since: counted.since };
}

/**
 * Reason of the extra `Ready=False` condition that marks a service restart still owed on some
 * pod. It outlives other verdicts (CNF not ready, other failures) until the rule is Ready again.
 */
export const RESTART_PENDING_REASON = "RestartPending";

/** Reconciling reason of a rule whose restart was deferred to batch a burst. */
export const RESTART_DEFERRED_REASON = "RestartDeferred";

/** A deferred restart is due within the pacer's interval: come back when it is, at least 1 s. */
const DEFERRED_RETRY_SECONDS = 1;

function deferredRetrySeconds(failure: WriteFailure): number {
  return Math.max(DEFERRED_RETRY_SECONDS, Math.ceil((failure.dueInMs ?? 0) / 1000));
}

function pendingMarker(status: RuleStatus | undefined): Condition | undefined {
  return status?.conditions?.find(
    (c) => c.type === "Ready" && c.status === "False" && c.reason === RESTART_PENDING_REASON,
  );
}

/**
 * Whether a pod that already holds this rule must still restart its service: a restart failed
 * (the marker), or no status was ever written for this generation, so the last delivery may have
 * stopped between its CNF write and the restart. A Ready rule re-delivered never restarts.
 */
export function restartPendingOf(rule: ObservedRule): boolean {
  return (
    pendingMarker(rule.status) !== undefined || rule.status?.observedGeneration !== rule.generation
  );
}

interface Verdict {
  readonly condition: { type: ConditionType; reason: string; message: string };
  readonly inSync: boolean;
  readonly applied: boolean;
  readonly finalizer: FinalizerAction;
  readonly outcome: Outcome;
  readonly result: string;
  /** Set when this sync repaired drift: the count with this repair. */
  readonly drift?: DriftCount;
}

/**
 * The done result of a rule whose CNF is missing ready pods. Waiting is recorded on the rule's
 * status and answered done, never retry: the CNF's comeback is a Pod or Deployment event that
 * on-deployment-ready answers for every rule of the CNF, and the resync backs it up. A retry
 * would only spend delivery budgets (Knative's adapter gives up after 5 quick retries, a
 * Trigger's retries end in the dead-letter sink) on an outage no redelivery can shorten.
 */
export const WAITING_FOR_CNF = "waiting for CNF";

function waiting(reason: string, message: string): Verdict {
  const outcome = done(WAITING_FOR_CNF);
  return {
    condition: { type: "Reconciling", reason, message },
    inSync: false,
    applied: false,
    finalizer: "keep",
    outcome,
    result: WAITING_FOR_CNF,
  };
}

function stalled(code: OutcomeCode, message: string): Verdict {
  return {
    condition: { type: "Stalled", reason: code, message },
    inSync: false,
    applied: false,
    finalizer: "keep",
    outcome: permanent(code, message),
    result: "stalled",
  };
}

function podsMessage(deployment: string, ready: number, expected: number): string {
  return `CNF ${deployment} has ${ready}/${expected} pods ready`;
}

/**
 * The first failure by severity: invalid, then restart (its marker must not be lost to a
 * lesser failure on another pod), then dependency, then transient.
 */
function worstFailure(results: readonly PodRuleResult[]): WriteFailure | undefined {
  const order: FailureClass[] = ["invalid", "restart", "dependency", "transient", "deferred"];
  const failures = results.flatMap((r) => (r.kind === "failed" ? [r.failure] : []));
  for (const cls of order) {
    const found = failures.find((f) => f.class === cls);
    if (found) return found;
  }
  return undefined;
}

function failureVerdict(input: RulePlanInput, failure: WriteFailure): Verdict {
  const where = `on pod ${failure.pod}`;
  if (failure.class === "invalid" && !input.rule.deleting) {
    return stalled("CNFRejected", `CNF rejected the rule ${where}: ${failure.message}`);
  }
  if (failure.class === "dependency" && input.rule.deleting && input.stillUsedBy?.length === 0) {
    // Retrying cannot help until someone removes that object; the resync retries meanwhile.
    return stalled(
      "InUseByUndeclaredObject",
      `an object on the CNF that no rule declares still uses it (${failure.message}, ${where}); ` +
        "remove that object from the CNF (or opt the CNF in to pruning) and the next resync " +
        "finishes the deletion",
    );
  }
  const reason = {
    dependency: input.rule.deleting ? "StillInUse" : "DependencyMissing",
    restart: "RestartFailed",
    deferred: RESTART_DEFERRED_REASON,
    transient: "CNFError",
    invalid: "CNFError",
  }[failure.class];
  const message = `${failureSummary(input, failure)}${failure.message} (${where}); will retry`;
  const deferred = failure.class === "deferred";
  return {
    condition: { type: "Reconciling", reason, message },
    inSync: false,
    applied: false,
    finalizer: "keep",
    outcome: retryLater(message, deferred ? deferredRetrySeconds(failure) : RETRY_SECONDS),
    result: deferred ? "restart deferred" : "failed",
  };
}

/** What an operator should know first about a failure, before the CNF's own words. */
function failureSummary(input: RulePlanInput, failure: WriteFailure): string {
  if (failure.class !== "dependency") return "";
  if (input.rule.deleting) {
    const users = input.stillUsedBy ?? [];
    if (users.length === 0) return `still used by another rule on the CNF, delete that first: `;
    const which =
      users.length === 1 ? `${users[0]}, delete it` : `${users.join(", ")}, delete them`;
    return `still used by ${which} first: `;
  }
  const needs = input.needs ?? [];
  if (needs.length === 0) return "a rule it needs is missing on the CNF: ";
  const which = needs.length === 1 ? `${needs[0]} is` : `one of ${needs.join(", ")} is`;
  return `${which} missing on the CNF, apply it first: `;
}

/**
 * How long after a pod turned Ready a rule it lacks is put down to its restart (re-seeded, no
 * status write) rather than to drift (counted on the rule's status). Longer than the first syncs
 * a returning pod gets (its Pod event, then the resync), short enough that a pod which keeps
 * losing rules after it came back is counted as drifting again soon (ADR 0016).
 */
export const RESEED_WINDOW_MS = 30 * 60 * 1000;

/** The done result of a rule written again only to pods that came back ready (ADR 0016). */
export const RE_APPLIED = "re-applied";

/**
 * Whether a write to a pod re-seeded a pod that came back: the rule was in sync for this
 * generation on every ready pod before, the pod turned Ready after the rule was applied, and
 * recently. Such a write changes nothing the rule's status says: it held on every ready pod before
 * and does now. A pod that lost the rule while it stayed Ready is drift, counted as before.
 */
export function planReseeded(rule: ObservedRule, result: PodRuleResult, now: string): boolean {
  if (result.kind !== "held" || !result.changed || result.podReadySince === undefined) return false;
  const { status } = rule;
  if (status?.inSync !== true || status.appliedGeneration !== rule.generation) return false;
  if (status.appliedTime === undefined || rule.deleting) return false;
  const since = Date.parse(result.podReadySince);
  // Pod conditions keep whole seconds: a pod Ready in the second the rule was applied is not
  // known to have come back after it, and counts as drift (the status says more, not less).
  return since > Date.parse(status.appliedTime) && Date.parse(now) - since <= RESEED_WINDOW_MS;
}

function changedResult(input: RulePlanInput): string {
  const changes = input.podResults.filter((r) => r.kind === "held" && r.changed);
  if (changes.length === 0) return "unchanged";
  if (changes.every((r) => planReseeded(input.rule, r, input.now))) return RE_APPLIED;
  if (input.rule.deleting) return "deleted";
  return input.rule.status?.appliedGeneration === undefined ? "created" : "updated";
}

/** A rule repaired again and again: the CNF does not keep it, whatever each write answered. */
function repeatedDrift(counted: DriftCount, where: string): Verdict {
  const message =
    `the CNF lost this rule after it was applied and it was repaired ${counted.repairs} times ` +
    `since ${counted.since} (written again ${where}): the CNF accepts writes it does not ` +
    "keep, something on it undoes them, or it keeps restarting; check the CNF";
  return {
    condition: { type: "Reconciling", reason: REPEATED_DRIFT_REASON, message },
    inSync: false,
    // Written to every pod: the applied fields stay, so the next repair is counted as drift.
    applied: true,
    finalizer: "keep",
    outcome: done(REPEATED_DRIFT),
    result: REPEATED_DRIFT,
    drift: counted,
  };
}

function readyVerdict(input: RulePlanInput, deployment: string, allPods: boolean): Verdict {
  const { rule } = input;
  const result = changedResult(input);
  const ready = input.podResults.length;
  if (!allPods && rule.deleting) {
    // Removed where we could; the next readiness change (or resync) finishes the job.
    const message = `${podsMessage(deployment, ready, expectedOf(input))}; deleted on the ready pods`;
    return { ...waiting("PodsNotReady", message), result };
  }
  // A live rule on every ready pod is in sync whatever the other pods do (inSync is about ready
  // pods): a pod's readiness is the CNF's fact, told on its Deployment, not on each rule.
  if (rule.deleting) {
    const message = `removed from all ${ready} pods of CNF ${deployment}`;
    const condition = { type: "Reconciling" as const, reason: "Deleted", message };
    return {
      condition,
      inSync: false,
      applied: false,
      finalizer: "remove",
      outcome: done(result),
      result,
    };
  }
  return appliedVerdict(input, deployment, result);
}

/** "DriftRepaired" stays until something else happens: flipping it back costs a write per rule. */
function readyReason(rule: ObservedRule, result: string, drift: boolean): string {
  const previous = rule.status?.conditions?.find((c) => c.type === "Ready" && c.status === "True");
  const quiet = result === "unchanged" || result === RE_APPLIED;
  const keep = quiet && previous?.reason === "DriftRepaired";
  return drift || keep ? "DriftRepaired" : "Applied";
}

/** Applied on every pod: Ready (Applied, DriftRepaired), or RepeatedDrift. */
function appliedVerdict(input: RulePlanInput, deployment: string, result: string): Verdict {
  const { rule } = input;
  const drift = result === "updated" && rule.status?.appliedGeneration === rule.generation;
  // No pod count: the message must not change (a write per rule) when a pod comes and goes.
  const where = `on every ready pod of CNF ${deployment}`;
  const message = `applied ${where}`;
  const counted = drift ? oneMoreRepair(rule.status, input.now) : undefined;
  if (counted !== undefined && counted.repairs >= REPEATED_DRIFT_REPAIRS) {
    return repeatedDrift(counted, where);
  }
  return {
    condition: { type: "Ready", reason: readyReason(rule, result, drift), message },
    inSync: true,
    applied: true,
    finalizer: "keep",
    outcome: done(result),
    result,
    ...(counted === undefined ? {} : { drift: counted }),
  };
}

function expectedOf(input: RulePlanInput): number {
  return input.cnf.kind === "found" ? input.cnf.expectedPods : 0;
}

function verdictFor(input: RulePlanInput): Verdict {
  const { rule, cnf } = input;
  // A spec that can never be applied is the first thing an operator must fix, CNF or not.
  if (input.unappliable && !rule.deleting) {
    return stalled(input.unappliable.code, input.unappliable.message);
  }
  if (cnf.kind === "none") {
    const message = `no CNF Deployment with sdewanPurpose=${cnf.purpose} in namespace ${cnf.namespace}`;
    return {
      condition: { type: "Reconciling", reason: "NoCNF", message },
      inSync: false,
      applied: false,
      finalizer: rule.deleting ? "remove" : "keep",
      outcome: done(rule.deleting ? "released (no CNF)" : "no CNF"),
      result: "no CNF",
    };
  }
  if (cnf.kind === "conflict") {
    return stalled(
      "MultipleCNFs",
      `more than one CNF Deployment for this purpose in the namespace (${cnf.deployments.join(", ")}); keep one`,
    );
  }
  if (cnf.readyPods === 0 || input.podResults.length === 0) {
    return waiting("CNFNotReady", podsMessage(cnf.deployment, cnf.readyPods, cnf.expectedPods));
  }
  const failure = worstFailure(input.podResults);
  if (failure) return failureVerdict(input, failure);
  return readyVerdict(input, cnf.deployment, cnf.readyPods >= cnf.expectedPods);
}

function sameCondition(
  a: Condition | undefined,
  type: ConditionType,
  reason: string,
  message: string,
): boolean {
  return (
    a !== undefined &&
    a.type === type &&
    a.status === "True" &&
    a.reason === reason &&
    a.message === message
  );
}

function nextStatus(input: RulePlanInput, verdict: Verdict): RuleStatus {
  const { rule, now } = input;
  const old = rule.status ?? {};
  const { type, reason, message } = verdict.condition;
  const previous = old.conditions?.find((c) => c.type === type);
  const condition: Condition = {
    type,
    status: "True",
    reason,
    message,
    // Unchanged conditions keep their transition time, so a repeat event writes nothing.
    lastTransitionTime: sameCondition(previous, type, reason, message)
      ? (previous as Condition).lastTransitionTime
      : now,
    observedGeneration: rule.generation,
  };
  const drift = verdict.drift ?? driftOf(old, now);
  const status: RuleStatus = {
    inSync: verdict.inSync,
    observedGeneration: rule.generation,
    conditions: [condition, ...restartMarker(input, verdict)],
    message,
    ...(drift === undefined ? {} : { driftRepairs: drift.repairs, driftSince: drift.since }),
  };
  if (!verdict.applied) return status;
  const sameApply = old.inSync === true && old.appliedGeneration === rule.generation;
  return {
    ...status,
    appliedVersion: sameApply && old.appliedVersion ? old.appliedVersion : rule.resourceVersion,
    appliedGeneration: rule.generation,
    appliedTime: sameApply && old.appliedTime ? old.appliedTime : now,
  };
}

/** The RestartPending marker: set by a failed restart, kept until the rule is Ready again. */
function restartMarker(input: RulePlanInput, verdict: Verdict): Condition[] {
  if (verdict.condition.type === "Ready") return [];
  const failed = input.podResults.find(
    (r) => r.kind === "failed" && (r.failure.class === "restart" || r.failure.class === "deferred"),
  );
  const old = pendingMarker(input.rule.status);
  if (failed === undefined || failed.kind !== "failed") return old ? [old] : [];
  const message = `a service restart is owed on pod ${failed.failure.pod}; the next delivery restarts it`;
  if (old?.message === message) return [old];
  const { now, rule } = input;
  return [
    {
      type: "Ready",
      status: "False",
      reason: RESTART_PENDING_REASON,
      message,
      lastTransitionTime: now,
      observedGeneration: rule.generation,
    },
  ];
}

/** Deep equality of two plain JSON values (status objects). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a).filter((k) => (a as Record<string, unknown>)[k] !== undefined);
  const kb = Object.keys(b).filter((k) => (b as Record<string, unknown>)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  return ka.every((k) =>
    jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]),
  );
}

/**
 * Whether the rule must get its finalizer before anything is written for it (ADR 0003): it is
 * live, about to be written to a ready pod, and not yet guarded. Claiming first means no CNF
 * object ever exists for a rule that could vanish without cleanup.
 */
export function needsClaim(rule: ObservedRule, willWrite: boolean): boolean {
  return willWrite && !rule.deleting && !rule.hasFinalizer;
}

/** A rule as read back after sync wrote for it: "gone", or its identity and deletion state. */
export type RuleAfterWrite =
  "gone" | { readonly uid: string | undefined; readonly deleting: boolean };

/**
 * What writes made for a rule observed live mean once the rule is read back. "deleted": a
 * deletion began (or ended) while the writes were in flight, and the deleting event may already
 * have found the pods empty, so whatever was written must be removed by this event. "replaced":
 * a new rule of the same name exists, and the next delivery writes its spec.
 */
export function planAfterWrite(
  observedUid: string | undefined,
  after: RuleAfterWrite,
): "current" | "deleted" | "replaced" {
  if (after === "gone") return "deleted";
  if (observedUid !== undefined && after.uid !== undefined && after.uid !== observedUid) {
    return "replaced";
  }
  return after.deleting ? "deleted" : "current";
}

/** Whether sync may have written to a pod for this rule: a change held, or a write that failed. */
export function mayHaveWritten(rule: ObservedRule, podResults: readonly PodRuleResult[]): boolean {
  return !rule.deleting && podResults.some((r) => (r.kind === "held" ? r.changed : true));
}

/**
 * A status that stops claiming inSync for an earlier generation: inSync false and a Reconciling
 * condition, the applied* fields kept (facts about what was applied). observedGeneration stays
 * where it was: the newer generation has not been acted on to its end, and restartPendingOf
 * reads "no status written for this generation" as "a restart may still be owed", so a delivery
 * that stops between its CNF write and the restart is finished by the next one. Null when the
 * status does not claim inSync, or claims it for `generation` itself.
 */
function notInSyncFor(
  status: RuleStatus | undefined,
  generation: number,
  reason: string,
  message: string,
  now: string,
): RuleStatus | null {
  if (status?.inSync !== true || (status.observedGeneration ?? -1) >= generation) return null;
  const marker = pendingMarker(status);
  const condition: Condition = {
    type: "Reconciling",
    status: "True",
    reason,
    message,
    lastTransitionTime: now,
    ...(status.observedGeneration === undefined
      ? {}
      : { observedGeneration: status.observedGeneration }),
  };
  return {
    ...status,
    inSync: false,
    conditions: marker ? [condition, marker] : [condition],
    message,
  };
}

/**
 * Written before a new generation goes to the CNF (issue 17): a status that still says inSync
 * for an earlier generation would be read as "the CNF holds this spec" for as long as the writes
 * take (seconds in a CNF-wide resync). One status write per spec change; null otherwise.
 */
export function planApplying(rule: ObservedRule, now: string): RuleStatus | null {
  if (rule.deleting) return null;
  const from = rule.status?.observedGeneration;
  const message = `applying generation ${rule.generation} (generation ${from ?? "?"} was in sync)`;
  return notInSyncFor(rule.status, rule.generation, "Applying", message, now);
}

/**
 * After a status write that said inSync for `written.observedGeneration`, when the API server's
 * answer shows a newer generation (the spec changed while this event wrote the older one): the
 * correction, so inSync=true never stands beside an observedGeneration behind generation. The
 * newer generation's own event applies it.
 */
export function planSuperseded(
  written: RuleStatus,
  currentGeneration: number | undefined,
  now: string,
): RuleStatus | null {
  if (currentGeneration === undefined) return null;
  const message = `generation ${currentGeneration} arrived while generation ${written.observedGeneration ?? "?"} was applied; it is applied next`;
  return notInSyncFor(written, currentGeneration, "Superseded", message, now);
}

/**
 * A status write refused with 409 (the rule changed since it was read): "replan" when the rule
 * re-read is the one the pod results are about (same generation, same deletion state), so the
 * decision is planned again from its current status; "stale" when they are about an older spec
 * or another state of the rule, and writing them would take the status backwards.
 */
export function planRewrite(planned: ObservedRule, fresh: ObservedRule): "replan" | "stale" {
  return fresh.generation === planned.generation && fresh.deleting === planned.deleting
    ? "replan"
    : "stale";
}

/**
 * A delivery whose CNF writes were for generation `written` found generation `fresh.generation`
 * already applied and in sync: its writes may have reached the CNF after the newer ones, so the
 * status stops claiming inSync until the newer generation is applied again. Null when the status
 * claims nothing.
 */
export function planOverwritten(
  fresh: ObservedRule,
  written: number,
  now: string,
): RuleStatus | null {
  const { status } = fresh;
  if (status?.inSync !== true) return null;
  const message = `a write of generation ${written} may have reached the CNF after generation ${fresh.generation} was applied; applying generation ${fresh.generation} again`;
  const condition: Condition = {
    type: "Reconciling",
    status: "True",
    reason: "Reapplying",
    message,
    lastTransitionTime: now,
    ...(status.observedGeneration === undefined
      ? {}
      : { observedGeneration: status.observedGeneration }),
  };
  return { ...status, inSync: false, conditions: [condition], message };
}

/** Why the API server did not take the rule's finalizer: "refused" is an answer, not an outage. */
export interface ClaimFailure {
  readonly kind: "refused" | "unavailable";
  /** Adding the finalizer (the claim, default) or removing it (the release after a deletion). */
  readonly change?: "add" | "remove";
  readonly finalizer: string;
  readonly message: string;
}

/**
 * The status of a rule whose finalizer could not be added (so nothing was written for it on any
 * CNF): a refusal (invalid, forbidden, an admission policy, the object's size) is Stalled with the
 * API server's words, an outage is Reconciling and retried. Either way the rule says why, instead
 * of showing no status while the claim is retried forever.
 */
export function planClaimFailure(
  rule: ObservedRule,
  failure: ClaimFailure,
  now: string,
): RuleDecision {
  const removing = failure.change === "remove";
  const verb = removing ? "remove" : "add";
  const held = removing
    ? `so the rule cannot finish deleting: ${failure.message}`
    : `so nothing is applied yet: ${failure.message}`;
  const retryMessage = `${removing ? "removing" : "adding"} finalizer ${failure.finalizer} failed, ${held}; will retry`;
  const verdict: Verdict =
    failure.kind === "refused"
      ? stalled(
          "FinalizerRefused",
          `the API server refused to ${verb} finalizer ${failure.finalizer}, ${held}; fix what it names (an admission policy, RBAC, the object's size) and the next resync retries`,
        )
      : {
          condition: { type: "Reconciling", reason: "FinalizerWriteFailed", message: retryMessage },
          inSync: false,
          applied: false,
          finalizer: "keep",
          outcome: retryLater(retryMessage, RETRY_SECONDS),
          result: "not claimed",
        };
  const input: RulePlanInput = {
    rule,
    cnf: { kind: "none", purpose: "", namespace: "" },
    podResults: [],
    now,
  };
  const status = nextStatus(input, verdict);
  return {
    status: jsonEqual(status, rule.status ?? {}) ? null : status,
    finalizer: "keep",
    outcome: verdict.outcome,
    result: verdict.result,
    condition: verdict.condition,
  };
}

/** Decides status, finalizer and outcome for one rule. */
/** The verdict with every key of the CNF taken out of every text it will be shown in. */
function withoutSecrets(verdict: Verdict, keys: KeyMaterial | undefined): Verdict {
  if (keys === undefined) return verdict;
  const message = keys.redact(verdict.condition.message);
  const { outcome } = verdict;
  const clean: Outcome =
    outcome.kind === "done" ? outcome : { ...outcome, reason: keys.redact(outcome.reason) };
  return { ...verdict, condition: { ...verdict.condition, message }, outcome: clean };
}

/**
 * A deferred restart needs no status write when the status already shows the restart as owed (no
 * status for this generation yet, or the marker): a burst then costs no extra API writes.
 */
function quietDeferral(input: RulePlanInput, verdict: Verdict): boolean {
  return verdict.condition.reason === RESTART_DEFERRED_REASON && restartPendingOf(input.rule);
}

export function planRuleDecision(input: RulePlanInput): RuleDecision {
  const verdict = withoutSecrets(verdictFor(input), input.keys);
  const finalizer =
    verdict.finalizer === "remove" && !input.rule.hasFinalizer ? "keep" : verdict.finalizer;
  // A rule on its way out needs no status: it disappears once the finalizer goes.
  const leaving = finalizer === "remove" || (input.rule.deleting && !input.rule.hasFinalizer);
  const status = leaving || quietDeferral(input, verdict) ? null : nextStatus(input, verdict);
  const unchanged = status === null || jsonEqual(status, input.rule.status ?? {});
  return {
    status: unchanged ? null : status,
    finalizer,
    outcome: verdict.outcome,
    result: verdict.result,
    condition: verdict.condition,
  };
}
