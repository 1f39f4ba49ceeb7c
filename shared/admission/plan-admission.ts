/**
 * The admission decision as a pure function: run the policies of the request's class (plan-scope.ts
 * classifies it and says what must be observed) in a fixed order. The first denial wins; warnings of the
 * policies that allowed are kept.
 */
import { CLUSTERLINK_GROUP } from "../core/api-groups.js";
import { ruleKinds, type AdmissionKinds } from "./kinds.js";
import { PURPOSE_LABEL, describeObject, labelOf } from "./objects.js";
import { planBucketPermission } from "./plan-bucket-permission.js";
import { planCnfUniqueNames } from "./plan-cnf-names.js";
import { planClusterLinkSpec } from "./plan-clusterlink.js";
import { planImmutablePurpose, planOneCnfPerPurpose } from "./plan-purpose.js";
import { planCnfNetworks, planRuleDependencies, planRuleSpec } from "./plan-rule.js";
import type { AdmissionRequest } from "./review.js";
import type { AdmissionSnapshot } from "./snapshot.js";
import { planSecretAccess } from "./plan-secret-access.js";
import { POLICY, allow, deny, type Verdict } from "./verdict.js";
import { classifyRequest } from "./plan-scope.js";

export {
  classifyRequest,
  planObservation,
  type AdmissionSubject,
  type ObservationPlan,
} from "./plan-scope.js";

/** Runs policies in order; stops at the first denial and carries earlier warnings and notes along. */
function firstDenial(steps: readonly (() => Verdict)[]): Verdict {
  const warnings: string[] = [];
  const notes: string[] = [];
  for (const step of steps) {
    const verdict = step();
    notes.push(...(verdict.notes ?? []));
    if (!verdict.allowed)
      return { ...verdict, warnings: [...warnings, ...verdict.warnings], notes };
    warnings.push(...verdict.warnings);
  }
  return { ...allow(warnings), notes };
}

function purposeWarning(request: AdmissionRequest): Verdict {
  if (request.operation !== "CREATE" || labelOf(request.object, PURPOSE_LABEL) !== undefined) {
    return allow();
  }
  return allow([
    `${describeObject(request)} has no ${PURPOSE_LABEL} label, so no CNF will apply it`,
  ]);
}

export function planAdmission(
  request: AdmissionRequest,
  snapshot: AdmissionSnapshot,
  kinds: AdmissionKinds = ruleKinds,
): Verdict {
  const subject = classifyRequest(request, kinds);
  if (subject.type === "unsupported") {
    const { group, version, kind } = request.kind;
    return deny(
      POLICY.supportedKinds,
      400,
      `validate-admission does not handle ${kind}.${version}.${group || "core"}`,
      `send only apps/v1 Deployments, ${kinds.group} rule kinds and ${CLUSTERLINK_GROUP} kinds to this webhook (fix the webhook configuration)`,
    );
  }
  if (subject.type === "clusterlink") return planClusterLinkSpec(request);
  if (subject.type === "cnf") {
    return firstDenial([
      () => planImmutablePurpose(request, true),
      () => planOneCnfPerPurpose(request, snapshot.cnfDeployments),
    ]);
  }
  const { rule } = subject;
  return firstDenial([
    () => planBucketPermission(request, snapshot.rbac),
    () => planImmutablePurpose(request, false),
    () => planRuleSpec(request, rule),
    () => purposeWarning(request),
    () => planRuleDependencies(request, rule, snapshot.referencedObjects),
    () => planSecretAccess(request, rule, snapshot.secretAccess),
    () => planCnfNetworks(request, rule, kinds, snapshot.cnfDeployments),
    () => planCnfUniqueNames(request, rule, kinds, snapshot.cnfPeers),
  ]);
}
