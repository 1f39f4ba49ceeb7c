/**
 * Sets of example rules built from each kind's registry example (RuleKindEntry.example), for
 * load in the bench, the soak and the scale tests: `count` rules spread evenly over every kind,
 * every reference resolvable within the set. Nothing here names a kind.
 */
import { RULE_KIND_NAMES, type RuleKindName } from "./entry.js";
import { ALL_RULE_KINDS, requireKind } from "./registry.js";

export interface ExampleRule {
  readonly kind: RuleKindName;
  readonly name: string;
  readonly spec: Record<string, unknown>;
}

/** How many rules of each kind `count` rules make when spread evenly over every kind. */
export function exampleCounts(count: number): Record<RuleKindName, number> {
  const base = Math.floor(count / RULE_KIND_NAMES.length);
  const extra = count % RULE_KIND_NAMES.length;
  return Object.fromEntries(
    RULE_KIND_NAMES.map((kind, k) => [kind, base + (k < extra ? 1 : 0)]),
  ) as Record<RuleKindName, number>;
}

/** The name of the i-th example rule of `kind`, with `prefix` (e.g. per CNF purpose). */
export function exampleName(kind: RuleKindName, i: number, prefix = ""): string {
  return `${prefix}${requireKind(kind).example.namePrefix}${i}`;
}

/**
 * The i-th rule of `kind` in a set with `counts` rules per kind: its references name rules of
 * the set (wrapped by their kind's count). Names and references carry `prefix`.
 */
export function exampleRule(
  kind: RuleKindName,
  i: number,
  counts: Readonly<Record<RuleKindName, number>>,
  prefix = "",
): ExampleRule {
  const ref = (target: RuleKindName, j: number): string =>
    exampleName(target, counts[target] === 0 ? 0 : j % counts[target], prefix);
  return {
    kind,
    name: exampleName(kind, i, prefix),
    spec: { ...requireKind(kind).example.spec(i, ref) },
  };
}

/** `count` rules over every kind, in apply order (referenced kinds first). */
export function exampleRules(count: number, prefix = ""): ExampleRule[] {
  const counts = exampleCounts(count);
  return ALL_RULE_KINDS.flatMap(({ kind }) =>
    Array.from({ length: counts[kind] }, (_, i) => exampleRule(kind, i, counts, prefix)),
  );
}
