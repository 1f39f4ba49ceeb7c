/**
 * Which objects an admission request concerns (the webhook's scope planner, pure): its class (a
 * CNF Deployment, a ClusterLink object, a rule, or none of ours) and what the reader must observe
 * for its policies; anything not asked for stays empty in the snapshot.
 */
import { CLUSTERLINK_GROUP } from "../core/api-groups.js";
import { ruleKey } from "../kinds/index.js";
import { ruleKinds, type AdmissionKinds, type AdmissionRuleKind } from "./kinds.js";
import { PURPOSE_LABEL, labelOf } from "./objects.js";
import { needsRbac } from "./plan-bucket-permission.js";
import { uniqueNamesToCheck } from "./plan-cnf-names.js";
import { CLUSTERLINK_ADMISSION_KINDS } from "./plan-clusterlink.js";
import { needsCnfNetworks, referencesToCheck } from "./plan-rule.js";
import type { AdmissionRequest } from "./review.js";
import { secretsToCheck } from "./plan-secret-access.js";

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
