/**
 * Planning one sync of a CNF's rules, before any write: what each observed rule CR wants on the
 * pods (its target) or why it cannot be applied, and which of two rules mapping to one CNF object
 * loses. Pure: sync.ts executes the plan.
 */
import type { OutcomeCode } from "../core/outcome.js";
import type { KnownFinalizers } from "../kube/plan-finalizers.js";
import type { KubeObject } from "../core/objects.js";
import {
  PURPOSE_LABEL,
  requireKind,
  ruleKey,
  ruleStatusSchema,
  type RuleStatus,
} from "../kinds/index.js";
import type { CnfObservation, ObservedRuleCr } from "./observed.js";
import { echoBasisOf } from "./own-writes.js";
import type { ObservedRule, PodSyncResult } from "./plan-status.js";
import { isDeleting, planDeletionTarget, planRuleTarget } from "./plan-targets.js";
import { findObjectCollisions, type RuleTarget } from "./plan-writes.js";

/** What a rule identifies as: kind, namespace and name. */
export interface RuleIdentity {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

export interface PlannedRule {
  readonly identity: RuleIdentity;
  /** The uid observed, to tell the rule from a new one of the same name later. */
  readonly uid: string | undefined;
  /** Its sdewanPurpose label: which CNF's other rules may reference it. */
  readonly purpose: string | undefined;
  /** What its finalizer writes start from, so they need no read of their own. */
  readonly meta: KnownFinalizers;
  /** The rule as read, to tell our own writes' echoes (own-writes.ts echoBasisOf). */
  readonly echoBasis: string;
  readonly observed: ObservedRule;
  readonly oldStatus: RuleStatus | undefined;
  readonly target: RuleTarget | undefined;
  readonly unappliable: { readonly code: OutcomeCode; readonly message: string } | undefined;
  /** Rules it references, "Kind name", for a status that says which one is missing. */
  readonly needs: readonly string[];
}

function needsOf(rule: ObservedRuleCr): string[] {
  if (!rule.ok) return [];
  try {
    return requireKind(rule.cr.kind)
      .references(rule.cr.spec)
      .map((r) => `${r.kind} ${r.name}`);
  } catch {
    return [];
  }
}

function statusOf(raw: unknown): RuleStatus | undefined {
  const parsed = ruleStatusSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/** The rule as planning sees it, from its metadata and status as read. */
export function observedRule(
  meta: KubeObject["metadata"],
  kind: string,
  status: unknown,
): ObservedRule {
  return {
    key: ruleKey({ kind, name: meta.name }),
    generation: meta.generation ?? 0,
    resourceVersion: meta.resourceVersion ?? "",
    deleting: meta.deletionTimestamp !== undefined,
    hasFinalizer: (meta.finalizers ?? []).includes(requireKind(kind).finalizer),
    status: statusOf(status),
  };
}

export function planRule(rule: ObservedRuleCr, observation: CnfObservation): PlannedRule {
  const obj = rule.ok ? rule.cr : rule.raw;
  const meta = obj.metadata;
  const identity = { kind: obj.kind, namespace: meta.namespace ?? "", name: meta.name };
  const observed = observedRule(meta, obj.kind, obj.status);
  const base = {
    identity,
    uid: meta.uid,
    purpose: meta.labels?.[PURPOSE_LABEL],
    meta: { resourceVersion: meta.resourceVersion ?? "", finalizers: meta.finalizers ?? [] },
    echoBasis: echoBasisOf(meta),
    observed,
    oldStatus: observed.status,
    needs: needsOf(rule),
  };
  if (!rule.ok) {
    // A rule whose spec never parsed can still be removed from the CNF by kind and name.
    if (isDeleting(rule.raw)) {
      return { ...base, target: planDeletionTarget(obj.kind, meta.name), unappliable: undefined };
    }
    const unappliable = { code: rule.code, message: rule.message };
    return { ...base, target: undefined, unappliable };
  }
  // Without a CNF there is no network map to convert with, and nothing to write to.
  if (observation.situation.kind !== "found") {
    return { ...base, target: undefined, unappliable: undefined };
  }
  const result = planRuleTarget(rule.cr, observation.networks);
  if (result.ok) return { ...base, target: result.target, unappliable: undefined };
  return {
    ...base,
    target: undefined,
    unappliable: { code: result.code, message: result.message },
  };
}

/** A rule's kind, name and spec, as far as its references go. */
export interface ReferringRule {
  readonly kind: string;
  readonly name: string;
  readonly spec: unknown;
}

/**
 * Of `rules`, those that reference `target` ("Kind name" each, in the order given): the rules a
 * change of it affects, and the users that keep the CNF from deleting its object.
 */
export function referrersOf(
  rules: readonly ReferringRule[],
  target: { readonly kind: string; readonly name: string },
): string[] {
  return rules
    .filter((rule) =>
      referencesOf(rule).some((ref) => ref.kind === target.kind && ref.name === target.name),
    )
    .map((rule) => `${rule.kind} ${rule.name}`);
}

function referencesOf(rule: ReferringRule): { kind: string; name: string }[] {
  try {
    return requireKind(rule.kind).references(rule.spec);
  } catch {
    // A spec that does not parse references nothing we could name.
    return [];
  }
}

/** Two rules that map to one CNF object: all but one are unappliable. */
export function withoutCollisions(planned: readonly PlannedRule[]): PlannedRule[] {
  const targets = planned.flatMap((p) => (p.target ? [p.target] : []));
  const collisions = findObjectCollisions(targets);
  return planned.map((p) => {
    const winner = p.target ? collisions.get(p.target.key) : undefined;
    if (winner === undefined || p.observed.deleting) return p;
    const message = `maps to the same CNF object as ${winner}; rename one of them`;
    return { ...p, target: undefined, unappliable: { code: "NameCollision", message } };
  });
}

/**
 * Deletions a pod refused as still in use, though no rule declares a user of them. The user may
 * be a rule whose own deletion finished between the refusal and the lookup of users (two rules
 * deleted at once): such a deletion is tried again before it can be called blocked for good.
 */
export function undeclaredBlocks(
  planned: readonly PlannedRule[],
  pods: readonly PodSyncResult[],
  usedBy: ReadonlyMap<string, readonly string[]>,
): RuleTarget[] {
  return planned.flatMap((rule) => {
    const refused = pods.some((p) => {
      const result = p.results.get(rule.observed.key);
      return result?.kind === "failed" && result.failure.class === "dependency";
    });
    const undeclared = usedBy.get(rule.observed.key)?.length === 0;
    return rule.observed.deleting && rule.target && refused && undeclared ? [rule.target] : [];
  });
}

/** `first` with each pod's results for the objects synced `again` replaced by the later ones. */
export function withLaterResults(
  first: readonly PodSyncResult[],
  again: readonly PodSyncResult[],
): PodSyncResult[] {
  const later = new Map(again.map((p) => [p.pod, p]));
  return first.map((p) => {
    const next = later.get(p.pod);
    if (next === undefined) return p;
    return {
      pod: p.pod,
      results: new Map([...p.results, ...next.results]),
      writes: [...p.writes, ...next.writes],
      restarted: [...p.restarted, ...next.restarted],
    };
  });
}
