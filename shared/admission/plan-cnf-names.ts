/**
 * cnf-unique-names: names the CNF holds once (an ipsec connection name is a UCI section name) may
 * be used by one rule only among the rules applied to the same CNF (same namespace and purpose).
 * Admitting a second one made the CNF answer 409 on every apply, for good.
 */
import type { AdmissionKinds, AdmissionRuleKind, CnfUniqueName } from "./kinds.js";
import { PURPOSE_LABEL, describeObject, labelOf, quoteValue } from "./objects.js";
import { checkedSpec } from "./plan-rule.js";
import type { AdmissionRequest } from "./review.js";
import type { ObservedRule } from "./snapshot.js";
import { POLICY, allow, deny, type Verdict } from "./verdict.js";

/** The names of the admitted spec to check; [] when spec checks do not apply or it has no purpose. */
export function uniqueNamesToCheck(
  request: AdmissionRequest,
  rule: AdmissionRuleKind,
): readonly CnfUniqueName[] {
  if (labelOf(request.object, PURPOSE_LABEL) === undefined) return [];
  const spec = checkedSpec(request, rule);
  return spec?.ok === true ? rule.cnfUniqueNames(spec.spec) : [];
}

/** Who already holds each name on the CNF: "<what>\0<name>" -> `Kind "name" (field)`. */
function namesHeld(
  request: AdmissionRequest,
  rule: AdmissionRuleKind,
  kinds: AdmissionKinds,
  peers: readonly ObservedRule[],
): Map<string, string> {
  const purpose = labelOf(request.object, PURPOSE_LABEL);
  const self = request.object?.metadata.name ?? request.name;
  const held = new Map<string, string>();
  const others = peers.filter(
    (peer) =>
      !peer.deleting &&
      peer.purpose === purpose &&
      !(peer.kind === rule.kind && peer.name === self),
  );
  for (const peer of others) {
    for (const used of kinds.find(peer.kind)?.cnfUniqueNames(peer.spec) ?? []) {
      held.set(`${used.what}\0${used.name}`, `${peer.kind} "${peer.name}" (${used.field})`);
    }
  }
  return held;
}

export function planCnfUniqueNames(
  request: AdmissionRequest,
  rule: AdmissionRuleKind,
  kinds: AdmissionKinds,
  peers: readonly ObservedRule[],
): Verdict {
  const wanted = uniqueNamesToCheck(request, rule);
  if (wanted.length === 0) return allow();
  const held = namesHeld(request, rule, kinds, peers);
  const clashes = wanted.flatMap((name) => {
    const holder = held.get(`${name.what}\0${name.name}`);
    return holder === undefined
      ? []
      : [`${name.what} "${name.name}" (${name.field}) is already used by ${holder}`];
  });
  if (clashes.length === 0) return allow();
  const purpose = labelOf(request.object, PURPOSE_LABEL);
  return deny(
    POLICY.cnfUniqueNames,
    409,
    `${describeObject(request)} would clash on the CNF with ${PURPOSE_LABEL}=${quoteValue(purpose)}: ` +
      clashes.join("; "),
    `choose names no other rule of this CNF uses`,
  );
}
