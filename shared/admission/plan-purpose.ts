/**
 * The `sdewanPurpose` label ties rules to their CNF, so it must not change under them, and each
 * purpose names at most one CNF Deployment per namespace.
 */
import { PURPOSE_LABEL, describeObject, labelOf, quoteValue } from "./objects.js";
import type { AdmissionRequest } from "./review.js";
import type { ObservedCnf } from "./snapshot.js";
import { POLICY, allow, deny, type Verdict } from "./verdict.js";

/** UPDATE may not set, change or remove sdewanPurpose (the reconcile could not find the old CNF's rules). */
export function planImmutablePurpose(request: AdmissionRequest, isCnf: boolean): Verdict {
  if (request.operation !== "UPDATE") return allow();
  const before = labelOf(request.oldObject, PURPOSE_LABEL);
  const after = labelOf(request.object, PURPOSE_LABEL);
  if (before === after) return allow();
  const recreate = isCnf
    ? "to give a CNF another purpose, delete this Deployment and create a new one with the new label"
    : "to move a rule to another CNF, delete it and create it again with the new label";
  return deny(
    POLICY.immutablePurpose,
    422,
    `label ${PURPOSE_LABEL} of ${describeObject(request)} is immutable (was ${quoteValue(before)}, ` +
      `the update makes it ${quoteValue(after)})`,
    `keep ${PURPOSE_LABEL}=${quoteValue(before)} in the update; ${recreate}`,
  );
}

/**
 * CREATE of a second Deployment with the same purpose in the namespace is denied. A duplicate that
 * predates the webhook only warns on UPDATE (purpose cannot change there), so rollouts and scaling
 * of either copy keep working while the user deletes one. Terminating Deployments do not count.
 */
export function planOneCnfPerPurpose(
  request: AdmissionRequest,
  sameNamespacePurpose: readonly ObservedCnf[],
): Verdict {
  const purpose = labelOf(request.object, PURPOSE_LABEL);
  if (request.operation === "DELETE" || purpose === undefined) return allow();
  const self = request.name || request.object?.metadata.name;
  const others = sameNamespacePurpose.filter((cnf) => cnf.name !== self);
  const live = others.filter((cnf) => !cnf.deleting);
  const warnings = others
    .filter((cnf) => cnf.deleting)
    .map(
      (cnf) => `Deployment "${cnf.name}" with ${PURPOSE_LABEL}="${purpose}" is still terminating`,
    );
  const first = live[0];
  if (first === undefined) return allow(warnings);
  const names = live.map((cnf) => `"${cnf.name}"`).join(", ");
  if (request.operation === "UPDATE") {
    return allow([
      ...warnings,
      `namespace "${request.namespace}" has more than one CNF Deployment with ${PURPOSE_LABEL}=` +
        `"${purpose}" (also ${names}); rules are not applied until only one remains`,
    ]);
  }
  return deny(
    POLICY.oneCnfPerPurpose,
    409,
    `${describeObject(request)} would be a second CNF with ${PURPOSE_LABEL}="${purpose}" in namespace ` +
      `"${request.namespace}" (Deployment ${names} already has it)`,
    `choose another ${PURPOSE_LABEL} value, or delete Deployment ${names} first`,
  );
}
