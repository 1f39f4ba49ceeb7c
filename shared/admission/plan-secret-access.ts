/**
 * secret-access: a rule may name only Secrets its author may read. The function that applies the
 * rule reads the Secret with its own rights and copies the value onto the CNF (where the peer can
 * attack it offline), so without this check anyone who may write rules could borrow those rights
 * (docs/adr/0011-secret-references-need-the-authors-read.md). The API server answers "may this
 * user get this Secret" (a SubjectAccessReview for the request's userInfo); what it cannot answer
 * is denied.
 */
import { isDeepStrictEqual } from "node:util";
import type { AdmissionRuleKind } from "./kinds.js";
import { describeObject } from "./objects.js";
import { checkedSpec } from "./plan-rule.js";
import type { AdmissionRequest } from "./review.js";
import type { SecretAccess } from "./snapshot.js";
import { POLICY, allow, deny, type Verdict } from "./verdict.js";

type Ref = ReturnType<AdmissionRuleKind["secretRefs"]>[number];

/**
 * The Secrets whose references this request makes or changes: every one on CREATE; on UPDATE the
 * references that differ from the old object's (same field, Secret and key need no new check).
 */
export function secretsToCheck(request: AdmissionRequest, rule: AdmissionRuleKind): string[] {
  const spec = checkedSpec(request, rule);
  if (spec?.ok !== true) return [];
  const old = request.operation === "UPDATE" ? rule.secretRefs(request.oldObject?.spec) : [];
  const changed = rule
    .secretRefs(spec.spec)
    .filter((ref: Ref) => !old.some((before) => isDeepStrictEqual(before, ref)));
  return [...new Set(changed.map((ref) => ref.name))];
}

export function planSecretAccess(
  request: AdmissionRequest,
  rule: AdmissionRuleKind,
  access: readonly SecretAccess[],
): Verdict {
  const names = secretsToCheck(request, rule);
  if (names.length === 0) return allow();
  const user = request.userInfo.username;
  const byName = new Map(access.map((answer) => [answer.name, answer]));
  const problems = names.flatMap((name) => {
    const answer = byName.get(name);
    if (answer === undefined) return [`whether "${user}" may get Secret "${name}" was not checked`];
    if (answer.allowed === "unknown") {
      return [`whether "${user}" may get Secret "${name}" could not be checked (${answer.why})`];
    }
    return answer.allowed ? [] : [`"${user}" may not get Secret "${name}"`];
  });
  if (problems.length === 0) return allow();
  return deny(
    POLICY.secretAccess,
    403,
    `${describeObject(request)} names Secrets in namespace "${request.namespace}" that its author ` +
      `may not read, and the controller would copy them to the CNF: ${problems.join("; ")}`,
    `name only Secrets you may get (kubectl auth can-i get secret/<name>), or ask someone who ` +
      `may read the Secret to set the reference`,
  );
}
