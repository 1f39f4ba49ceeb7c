/**
 * The rule's side of sync on the API server: claiming a rule (its finalizer) before anything is
 * written for it on a CNF (ADR 0003), and executing a RuleDecision afterwards (the status through
 * the status subresource, then the finalizer's release). Kubernetes failures become outcomes
 * here: conflicts and outages retry, a rule deleted meanwhile is done.
 */
import { isKubeError, ruleResource, type KubeClient } from "../kube/index.js";
import { requireKind, type RuleStatus } from "../rules/index.js";
import { done, permanent, retryLater, type Outcome } from "../runtime/outcome.js";
import type { RuleDecision } from "./plan-status.js";

export interface RuleIdentity {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
}

/**
 * A JSON merge patch that turns `old` into `next`: fields `next` drops are set to null, so
 * clearing appliedVersion really clears it.
 */
export function statusMergePatch(
  old: RuleStatus | undefined,
  next: RuleStatus,
): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...next };
  for (const key of Object.keys(old ?? {})) {
    if (!(key in next)) patch[key] = null;
  }
  return patch;
}

/** What a failed API call means for the event: conflicts, outages and RBAC gaps retry. */
export function kubeFailureOutcome(error: unknown, what: string): Outcome {
  if (isKubeError(error, "notFound")) return done("gone");
  if (isKubeError(error, "invalid")) {
    return permanent("Rejected", `API server rejected the ${what}: ${error.message}`);
  }
  if (!isKubeError(error)) throw error;
  return retryLater(`${what} failed: ${error.message}`, 2);
}

export type ClaimResult =
  { readonly claimed: true } | { readonly claimed: false; readonly outcome: Outcome };

/**
 * Adds the rule's finalizer, so a rule whose objects reach a CNF can never be deleted without
 * their cleanup, however the writes that follow end.
 */
export async function claimRule(kube: KubeClient, rule: RuleIdentity): Promise<ClaimResult> {
  const entry = requireKind(rule.kind);
  const key = { namespace: rule.namespace, name: rule.name };
  try {
    const result = await kube.addFinalizer(ruleResource(entry), key, entry.finalizer);
    return result === "gone" ? { claimed: false, outcome: done("gone") } : { claimed: true };
  } catch (error) {
    if (!isKubeError(error)) throw error;
    // Nothing was written yet, so every failure just waits for the next delivery. That includes
    // "invalid": the API server refuses new finalizers once a deletion has begun, and the
    // deletion's own event follows.
    return { claimed: false, outcome: retryLater(`finalizer write failed: ${error.message}`, 2) };
  }
}

export async function applyRuleDecision(
  kube: KubeClient,
  rule: RuleIdentity,
  oldStatus: RuleStatus | undefined,
  decision: RuleDecision,
): Promise<Outcome> {
  const entry = requireKind(rule.kind);
  const type = ruleResource(entry);
  const key = { namespace: rule.namespace, name: rule.name };
  try {
    if (decision.status !== null) {
      await kube.patchStatus(type, key, statusMergePatch(oldStatus, decision.status));
    }
    if (decision.finalizer === "remove") await kube.removeFinalizer(type, key, entry.finalizer);
  } catch (error) {
    return kubeFailureOutcome(
      error,
      decision.finalizer === "remove" ? "finalizer write" : "status write",
    );
  }
  return decision.outcome;
}
