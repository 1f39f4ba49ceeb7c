/**
 * Executes a RuleDecision on the API server: finalizer first (so a rule we applied can never be
 * deleted without cleanup), then the status through the status subresource. Kubernetes failures
 * become outcomes here: conflicts and outages retry, a rule deleted meanwhile is done.
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
    if (decision.finalizer === "add") {
      if ((await kube.addFinalizer(type, key, entry.finalizer)) === "gone") return done("gone");
    }
    if (decision.status !== null) {
      await kube.patchStatus(type, key, statusMergePatch(oldStatus, decision.status));
    }
    if (decision.finalizer === "remove") await kube.removeFinalizer(type, key, entry.finalizer);
  } catch (error) {
    return kubeFailureOutcome(
      error,
      decision.finalizer === "keep" ? "status write" : "finalizer write",
    );
  }
  return decision.outcome;
}
