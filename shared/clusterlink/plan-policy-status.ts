/**
 * Pure: what clusterlink-authz says on an (Privileged)AccessPolicy it evaluated. A policy that
 * cannot be evaluated in full gets `PolicyValid False` (FailsClosed for a deny, AllowsNothing for
 * an allow) and a Warning Event; once fixed, `PolicyValid True` and a Normal Event. A policy never
 * found invalid is left without the condition, so a decision writes nothing for it: the writes a
 * decision can cost are bounded by the policies that changed validity, and a repeat writes nothing.
 */
import type { ClusterLinkCondition } from "../kinds/clusterlink.js";
import type { LivePolicy } from "./plan-access.js";
import { planClusterLinkEvents, type PlannedClusterLinkEvent } from "./plan-events.js";
import { planStatus, type StoredStatus, type WantedCondition } from "./plan-status.js";

export const POLICY_VALID = "PolicyValid";

export interface PolicyStatusPlan {
  readonly write: {
    readonly observedGeneration: number;
    readonly conditions: ClusterLinkCondition[];
  } | null;
  readonly events: readonly PlannedClusterLinkEvent[];
}

const NOTHING: PolicyStatusPlan = { write: null, events: [] };

export function wantedPolicyCondition(policy: LivePolicy): WantedCondition {
  if (policy.problems.length === 0)
    return { type: POLICY_VALID, status: "True", reason: "Valid", message: "" };
  const problems = policy.problems.join("; ");
  return policy.action === "deny"
    ? {
        type: POLICY_VALID,
        status: "False",
        reason: "FailsClosed",
        message: `cannot be evaluated, so it denies every connection it could match until fixed: ${problems}`,
      }
    : {
        type: POLICY_VALID,
        status: "False",
        reason: "AllowsNothing",
        message: `cannot be evaluated, so it allows nothing until fixed: ${problems}`,
      };
}

export function planPolicyStatus(
  policy: LivePolicy,
  stored: StoredStatus | undefined,
  generation: number,
  now: string,
): PolicyStatusPlan {
  const wanted = wantedPolicyCondition(policy);
  const known = stored?.conditions?.some((c) => c.type === POLICY_VALID) === true;
  if (wanted.status === "True" && !known) return NOTHING;
  const { write } = planStatus(stored, [wanted], generation, now);
  if (write === null) return NOTHING;
  return { write, events: planClusterLinkEvents(stored, [wanted]) };
}
