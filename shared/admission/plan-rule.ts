/**
 * Policies on rule objects, kind-agnostic: everything kind-specific comes from the registry view.
 * - rule-spec: the spec passes the kind's schema and the name suits the CNF (its own rules).
 * - rule-dependencies: referenced objects exist, share the purpose, and are not being deleted.
 * - cnf-networks: named networks are attached to the CNF (checked only when that CNF exists).
 * What a deleted object's referrers still need is not admission's: its finalizer holds it on the
 * CNF until they are gone (ADR 0010).
 */
import { isDeepStrictEqual } from "node:util";
import { ruleKey } from "../kinds/index.js";
import type { AdmissionKinds, AdmissionRuleKind, ParsedSpec, RuleReference } from "./kinds.js";
import {
  NFN_NETWORK_ANNOTATION,
  PURPOSE_LABEL,
  describeObject,
  labelOf,
  quoteValue,
} from "./objects.js";
import type { AdmissionRequest } from "./review.js";
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

/** The admitted spec, parsed, when spec checks apply to this request. */
export function checkedSpec(request: AdmissionRequest, rule: AdmissionRuleKind): ParsedSpec | null {
  return specChecksApply(request) ? rule.parseSpec(request.object?.spec) : null;
}

function problemsOf(request: AdmissionRequest, rule: AdmissionRuleKind): string[] {
  const spec = checkedSpec(request, rule);
  const problems = spec?.ok === false ? spec.issues.map((i) => `${i.path}: ${i.message}`) : [];
  // Names cannot change after CREATE, so the CNF's name rule is checked then only.
  const name = request.operation === "CREATE" ? request.object?.metadata.name : undefined;
  const nameProblem = name === undefined ? null : rule.checkName(name);
  return nameProblem === null ? problems : [`metadata.name: ${nameProblem}`, ...problems];
}

/** Plain key material is accepted (upstream's fields) but deprecated: say what to use instead. */
function plainSecretWarnings(request: AdmissionRequest, rule: AdmissionRuleKind): string[] {
  if (!specChecksApply(request)) return [];
  return rule
    .plainSecretFields(request.object?.spec)
    .map(
      ({ field, refField }) =>
        `spec.${field} is deprecated: every account that reads ${rule.plural} can read it; ` +
        `put it in a Secret and use spec.${refField}: {name, key}`,
    );
}

export function planRuleSpec(request: AdmissionRequest, rule: AdmissionRuleKind): Verdict {
  const problems = problemsOf(request, rule);
  if (problems.length === 0) return allow(plainSecretWarnings(request, rule));
  return deny(
    POLICY.ruleSpec,
    422,
    `${describeObject(request)} is invalid (the CNF would reject it): ${problems.join("; ")}`,
    `correct the listed fields (see \`kubectl explain ${rule.plural}.spec\`)`,
  );
}

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

/** The references of the admitted rule; empty when spec checks do not apply or the spec is invalid. */
export function referencesToCheck(
  request: AdmissionRequest,
  rule: AdmissionRuleKind,
): RuleReference[] {
  const spec = checkedSpec(request, rule);
  return spec?.ok ? [...rule.references(spec.spec)] : [];
}

export function planRuleDependencies(
  request: AdmissionRequest,
  rule: AdmissionRuleKind,
  referenced: readonly ObservedRule[],
): Verdict {
  const purpose = labelOf(request.object, PURPOSE_LABEL);
  const byKey = new Map(referenced.map((object) => [ruleKey(object), object]));
  const problems = referencesToCheck(request, rule)
    .map((ref) => referenceProblem(ref, byKey.get(ruleKey(ref)), purpose))
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

/** Whether the network policy needs the CNF Deployment: the checked spec names networks. */
export function needsCnfNetworks(request: AdmissionRequest, rule: AdmissionRuleKind): boolean {
  const spec = checkedSpec(request, rule);
  return spec?.ok === true && rule.networks(spec.spec).length > 0;
}

export function planCnfNetworks(
  request: AdmissionRequest,
  rule: AdmissionRuleKind,
  kinds: AdmissionKinds,
  cnfs: readonly ObservedCnf[],
): Verdict {
  const spec = checkedSpec(request, rule);
  const wanted = spec?.ok === true ? rule.networks(spec.spec) : [];
  if (wanted.length === 0) return allow();
  const purpose = labelOf(request.object, PURPOSE_LABEL);
  const live = cnfs.filter((cnf) => !cnf.deleting);
  const cnf = live.length === 1 ? live[0] : undefined;
  if (cnf === undefined) {
    return allow([
      `networks not checked: no single CNF Deployment with ${PURPOSE_LABEL}=${quoteValue(purpose)} ` +
        `in namespace "${request.namespace}" yet`,
    ]);
  }
  const attached = kinds.parseNfnNetworks(cnf.nfnNetworkAnnotation);
  if (!attached.ok) {
    return allow([`networks not checked: CNF Deployment "${cnf.name}": ${attached.problem}`]);
  }
  const missing = wanted.filter((use) => !attached.networks.has(use.network));
  if (missing.length === 0) return allow();
  const known = [...attached.networks.keys()].map((name) => `"${name}"`).join(", ") || "none";
  const listed = missing.map((use) => `"${use.network}" (${use.field})`).join(", ");
  return deny(
    POLICY.cnfNetworks,
    422,
    `${describeObject(request)} names networks that CNF Deployment "${cnf.name}" does not attach: ` +
      `${listed}; attached: ${known}`,
    `use a network listed in the CNF's pod template annotation ${NFN_NETWORK_ANNOTATION}, ` +
      `or attach the network to the CNF first`,
  );
}
