/**
 * Policies on rule objects, kind-agnostic: everything kind-specific comes from the registry view.
 * - rule-spec: the spec passes the kind's zod schema (the CNF's own validation rules).
 * - rule-dependencies: referenced objects exist, share the purpose, and are not being deleted.
 * - cnf-networks: named networks are attached to the CNF (checked only when that CNF exists).
 * - referenced-by-rules: an object still referenced by a live rule cannot be deleted.
 */
import { isDeepStrictEqual } from "node:util";
import type { AdmissionKinds, AdmissionRuleKind, RuleReference } from "./kinds.js";
import { PURPOSE_LABEL, describeObject, labelOf, quoteValue, subjectObject } from "./objects.js";
import { describeIssues, type AdmissionRequest } from "./review.js";
import type { ObservedCnf, ObservedRule } from "./snapshot.js";
import { POLICY, allow, deny, type Verdict } from "./verdict.js";

/**
 * Spec checks run on CREATE, and on UPDATE only when the spec changes and the object is not being
 * deleted: metadata-only updates (labels, the controller removing its finalizer) must never be
 * blocked by a dependency that broke later.
 */
export function specChecksApply(request: AdmissionRequest): boolean {
  if (request.operation === "CREATE") return true;
  if (request.operation !== "UPDATE" || request.object?.metadata.deletionTimestamp) return false;
  return !isDeepStrictEqual(request.object?.spec, request.oldObject?.spec);
}

export function planRuleSpec(request: AdmissionRequest, rule: AdmissionRuleKind): Verdict {
  if (!specChecksApply(request)) return allow();
  const parsed = rule.specSchema.safeParse(request.object?.spec);
  if (parsed.success) return allow();
  return deny(
    POLICY.ruleSpec,
    422,
    `${describeObject(request)} has an invalid spec (the CNF would reject it): ` +
      describeIssues(parsed.error.issues, "spec"),
    `correct the listed fields (see \`kubectl explain ${rule.plural}.spec\`)`,
  );
}

/** The spec as the registry's schema parses it; references and networks are read from this only. */
export function parsedSpec(
  rule: AdmissionRuleKind,
  spec: unknown,
): { ok: true; spec: unknown } | { ok: false } {
  const parsed = rule.specSchema.safeParse(spec);
  return parsed.success ? { ok: true, spec: parsed.data } : { ok: false };
}

const refKey = (kind: string, name: string): string => `${kind}/${name}`;

function describeRef(ref: RuleReference): string {
  return `${ref.kind} "${ref.name}" (${ref.field})`;
}

function referenceProblem(
  ref: RuleReference,
  found: ObservedRule | undefined,
  purpose: string | undefined,
): string | undefined {
  if (found === undefined) return `${describeRef(ref)} does not exist`;
  if (found.deleting) return `${describeRef(ref)} is being deleted`;
  if (found.purpose !== purpose) {
    return `${describeRef(ref)} has ${PURPOSE_LABEL}=${quoteValue(found.purpose)}, not ${quoteValue(purpose)}`;
  }
  return undefined;
}

/** The references of the admitted rule; empty when spec checks do not apply or the spec is unusable. */
export function referencesToCheck(
  request: AdmissionRequest,
  rule: AdmissionRuleKind,
): RuleReference[] {
  if (!specChecksApply(request)) return [];
  const spec = parsedSpec(rule, request.object?.spec);
  return spec.ok ? [...rule.references(spec.spec)] : [];
}

export function planRuleDependencies(
  request: AdmissionRequest,
  rule: AdmissionRuleKind,
  referenced: readonly ObservedRule[],
): Verdict {
  const purpose = labelOf(request.object, PURPOSE_LABEL);
  const byKey = new Map(referenced.map((object) => [refKey(object.kind, object.name), object]));
  const problems = referencesToCheck(request, rule)
    .map((ref) => referenceProblem(ref, byKey.get(refKey(ref.kind, ref.name)), purpose))
    .filter((problem): problem is string => problem !== undefined);
  if (problems.length === 0) return allow();
  return deny(
    POLICY.ruleDependencies,
    422,
    `${describeObject(request)} references objects that are not usable in namespace ` +
      `"${request.namespace}": ${problems.join("; ")}`,
    `create the referenced objects first (same namespace, label ${PURPOSE_LABEL}=${quoteValue(purpose)}), ` +
      `or correct the references`,
  );
}

/** The one live CNF Deployment for the rule's purpose, if there is exactly one. */
function theCnf(cnfs: readonly ObservedCnf[]): ObservedCnf | undefined {
  const live = cnfs.filter((cnf) => !cnf.deleting);
  return live.length === 1 ? live[0] : undefined;
}

export function planCnfNetworks(
  request: AdmissionRequest,
  rule: AdmissionRuleKind,
  kinds: AdmissionKinds,
  cnfs: readonly ObservedCnf[],
): Verdict {
  const spec = parsedSpec(rule, request.object?.spec);
  if (!specChecksApply(request) || !spec.ok) return allow();
  const wanted = rule.networks(spec.spec);
  const purpose = labelOf(request.object, PURPOSE_LABEL);
  const cnf = theCnf(cnfs);
  if (wanted.length === 0) return allow();
  if (cnf === undefined) {
    return allow([
      `no single CNF Deployment with ${PURPOSE_LABEL}=${quoteValue(purpose)} in namespace ` +
        `"${request.namespace}" yet; its networks are checked when it exists`,
    ]);
  }
  const attached = kinds.parseNfnNetworks(cnf.nfnNetworkAnnotation ?? "");
  if (!attached.ok) {
    return allow([`CNF Deployment "${cnf.name}": networks not checked (${attached.problem})`]);
  }
  const missing = wanted.filter((ref) => !attached.networks.includes(ref.network));
  if (missing.length === 0) return allow();
  return deny(
    POLICY.cnfNetworks,
    422,
    `${describeObject(request)} names networks that CNF Deployment "${cnf.name}" does not attach: ` +
      `${missing.map((ref) => `"${ref.network}" (${ref.field})`).join(", ")}; attached: ` +
      `${attached.networks.map((name) => `"${name}"`).join(", ") || "none"}`,
    `use networks listed in the CNF's pod template annotation k8s.plugin.opnfv.org/nfn-network, ` +
      `or attach the network to the CNF first`,
  );
}

/** Live rules with the same purpose whose spec references the object being deleted. */
export function findReferrers(
  request: AdmissionRequest,
  kinds: AdmissionKinds,
  candidates: readonly ObservedRule[],
): { rule: ObservedRule; ref: RuleReference }[] {
  const deleted = subjectObject(request);
  const purpose = labelOf(deleted, PURPOSE_LABEL);
  const found: { rule: ObservedRule; ref: RuleReference }[] = [];
  for (const rule of candidates) {
    const kind = kinds.find(rule.kind);
    if (kind === undefined || rule.deleting || rule.purpose !== purpose) continue;
    // A referrer whose spec no longer parses (written before this webhook) cannot be read; skip it.
    const spec = parsedSpec(kind, rule.spec);
    const ref = (spec.ok ? kind.references(spec.spec) : []).find(
      (candidate) => candidate.kind === request.kind.kind && candidate.name === request.name,
    );
    if (ref !== undefined) found.push({ rule, ref });
  }
  return found;
}

export function planReferencedBy(
  request: AdmissionRequest,
  kinds: AdmissionKinds,
  candidates: readonly ObservedRule[],
): Verdict {
  if (request.operation !== "DELETE") return allow();
  const referrers = findReferrers(request, kinds, candidates);
  if (referrers.length === 0) return allow();
  const listed = referrers
    .map(({ rule, ref }) => `${rule.kind} "${rule.name}" (${ref.field})`)
    .join(", ");
  return deny(
    POLICY.referencedByRules,
    409,
    `${describeObject(request)} is still referenced by live rules: ${listed}`,
    `delete those rules or change their references first, then delete this object`,
  );
}
