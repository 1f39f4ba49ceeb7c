/**
 * The admission decision as a pure function: classify the request, say what must be observed,
 * then run the policies of its class in a fixed order. The first denial wins; warnings of the
 * policies that allowed are kept.
 */
import { CLUSTERLINK_GROUP } from "../core/api-groups.js";
import { ruleKey } from "../rules/index.js";
import { ruleKinds, type AdmissionKinds, type AdmissionRuleKind } from "./kinds.js";
import { PURPOSE_LABEL, describeObject, labelOf } from "./objects.js";
import { needsRbac, planBucketPermission } from "./plan-bucket-permission.js";
import { planCnfUniqueNames, uniqueNamesToCheck } from "./plan-cnf-names.js";
import { CLUSTERLINK_ADMISSION_KINDS, planClusterLinkSpec } from "./plan-clusterlink.js";
import { planImmutablePurpose, planOneCnfPerPurpose } from "./plan-purpose.js";
import {
  needsCnfNetworks,
  planCnfNetworks,
  planRuleDependencies,
  planRuleSpec,
  referencesToCheck,
} from "./plan-rule.js";
import type { AdmissionRequest } from "./review.js";
import type { AdmissionSnapshot } from "./snapshot.js";
import { planSecretAccess, secretsToCheck } from "./plan-secret-access.js";
import { POLICY, allow, deny, type Verdict } from "./verdict.js";

export type AdmissionSubject =
  | { readonly type: "cnf" }
  | { readonly type: "clusterlink" }
  | { readonly type: "rule"; readonly rule: AdmissionRuleKind }
  | { readonly type: "unsupported" };

export function classifyRequest(
  request: AdmissionRequest,
  kinds: AdmissionKinds,
): AdmissionSubject {
  const { group, kind } = request.kind;
  if (group === "apps" && kind === "Deployment") return { type: "cnf" };
  if (group === CLUSTERLINK_GROUP && CLUSTERLINK_ADMISSION_KINDS.includes(kind)) {
    return { type: "clusterlink" };
  }
  const rule = group === kinds.group ? kinds.find(kind) : undefined;
  return rule === undefined ? { type: "unsupported" } : { type: "rule", rule };
}

/** What the shell must read for this request; anything not asked for stays empty in the snapshot. */
export interface ObservationPlan {
  readonly namespace: string;
  /** List Deployments in the namespace labelled sdewanPurpose=<cnfPurpose>. */
  readonly cnfPurpose?: string | undefined;
  /** Get each of these rule objects in the namespace (missing ones are fine). */
  readonly referencedObjects: readonly { readonly kind: string; readonly name: string }[];
  /** Read RoleBindings (namespace), ClusterRoleBindings, then the roles they grant the user. */
  readonly rbac: boolean;
  /** List these kinds in the namespace: rules whose CNF-unique names may clash with the object's. */
  readonly uniqueNameKinds: readonly AdmissionRuleKind[];
  /** Ask the API server whether the requesting user may get each of these Secrets. */
  readonly secretNames: readonly string[];
}

const NOTHING: ObservationPlan = {
  namespace: "",
  referencedObjects: [],
  rbac: false,
  uniqueNameKinds: [],
  secretNames: [],
};

function ruleObservation(
  request: AdmissionRequest,
  rule: AdmissionRuleKind,
  kinds: AdmissionKinds,
): ObservationPlan {
  const checksNetworks = needsCnfNetworks(request, rule);
  const purpose = labelOf(request.object, PURPOSE_LABEL);
  const unique = new Map(
    referencesToCheck(request, rule).map(({ kind, name }) => [
      ruleKey({ kind, name }),
      { kind, name },
    ]),
  );
  const referencedObjects = [...unique.values()];
  return {
    namespace: request.namespace,
    cnfPurpose: checksNetworks ? purpose : undefined,
    referencedObjects,
    rbac: needsRbac(request),
    uniqueNameKinds:
      uniqueNamesToCheck(request, rule).length > 0 ? kinds.uniqueNameKindsOf(rule.kind) : [],
    secretNames: secretsToCheck(request, rule),
  };
}

export function planObservation(
  request: AdmissionRequest,
  kinds: AdmissionKinds = ruleKinds,
): ObservationPlan {
  const subject = classifyRequest(request, kinds);
  if (subject.type === "rule") return ruleObservation(request, subject.rule, kinds);
  if (subject.type === "cnf" && request.operation !== "DELETE") {
    const cnfPurpose = labelOf(request.object, PURPOSE_LABEL);
    return { ...NOTHING, namespace: request.namespace, cnfPurpose };
  }
  return NOTHING;
}

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
