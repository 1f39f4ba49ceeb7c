/**
 * How a rule is named inside one namespace: "Kind/name". A CNF's scope and an admission request
 * each cover one namespace, so sync keys targets, pod results and decisions by it, and admission
 * keys the references it checks by it. Build keys with `ruleKey`, never by hand.
 */
export type RuleKey = `${string}/${string}`;

export const ruleKey = (rule: { readonly kind: string; readonly name: string }): RuleKey =>
  `${rule.kind}/${rule.name}`;
