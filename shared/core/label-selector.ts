/**
 * metav1.LabelSelector, evaluated exactly as Kubernetes does (LabelSelectorAsSelector):
 * - a null/absent selector selects nothing; an empty selector ({}) selects everything;
 * - matchLabels and matchExpressions are ANDed; absent/null lists add no requirement;
 * - In: key present with a listed value; NotIn: key absent or value not listed;
 *   Exists: key present (any value, "" included); DoesNotExist: key absent;
 * - In/NotIn need at least one value, Exists/DoesNotExist take none, operators are case-sensitive,
 *   keys and values must be valid label syntax.
 * A compiled selector also renders as the `labelSelector` query string the API server parses, so
 * list requests are filtered server-side.
 */
import { compareStrings } from "./order.js";
import { labelKeyProblem, labelValueProblem, type Labels } from "./labels.js";

export interface LabelSelectorRequirement {
  readonly key: string;
  /** Kept as string: the input is not trusted to be one of the four operators. */
  readonly operator: string;
  readonly values?: readonly string[] | null;
}

export interface LabelSelector {
  readonly matchLabels?: Readonly<Record<string, string>> | null;
  readonly matchExpressions?: readonly LabelSelectorRequirement[] | null;
}

export type SelectorErrorCode =
  | "InvalidOperator"
  | "ValuesRequired"
  | "ValuesForbidden"
  | "InvalidLabelKey"
  | "InvalidLabelValue";

export interface SelectorError {
  readonly code: SelectorErrorCode;
  /** Field path of the offending part, e.g. "spec.appliedTo.podSelector.matchExpressions[0].values". */
  readonly path: string;
  readonly message: string;
}

type RequirementOperator = "Equals" | "In" | "NotIn" | "Exists" | "DoesNotExist";

interface Requirement {
  readonly key: string;
  readonly operator: RequirementOperator;
  /** Sorted and de-duplicated; empty for Exists/DoesNotExist. */
  readonly values: readonly string[];
}

/** A validated selector: `nothing` (from null/absent) or the ANDed requirements ([] = everything). */
export type CompiledSelector =
  | { readonly kind: "nothing" }
  | { readonly kind: "requirements"; readonly requirements: readonly Requirement[] };

export type SelectorCompilation =
  | { readonly ok: true; readonly selector: CompiledSelector }
  | { readonly ok: false; readonly errors: readonly SelectorError[] };

export const SELECTS_NOTHING: CompiledSelector = { kind: "nothing" };
export const SELECTS_EVERYTHING: CompiledSelector = { kind: "requirements", requirements: [] };

const EXPRESSION_OPERATORS: ReadonlySet<string> = new Set([
  "In",
  "NotIn",
  "Exists",
  "DoesNotExist",
]);

function valueError(value: string, path: string): SelectorError[] {
  const problem = labelValueProblem(value);
  return problem === null
    ? []
    : [{ code: "InvalidLabelValue", path, message: `"${value}": ${problem}` }];
}

function keyErrors(key: string, path: string): SelectorError[] {
  const problem = labelKeyProblem(key);
  return problem === null
    ? []
    : [{ code: "InvalidLabelKey", path, message: `"${key}": ${problem}` }];
}

function expressionErrors(expression: LabelSelectorRequirement, path: string): SelectorError[] {
  const errors = keyErrors(expression.key, `${path}.key`);
  const values = expression.values ?? [];
  const { operator } = expression;
  if (!EXPRESSION_OPERATORS.has(operator)) {
    errors.push({
      code: "InvalidOperator",
      path: `${path}.operator`,
      message: `"${operator}" is not a valid label selector operator (In, NotIn, Exists, DoesNotExist)`,
    });
  } else if ((operator === "In" || operator === "NotIn") && values.length === 0) {
    errors.push({
      code: "ValuesRequired",
      path: `${path}.values`,
      message: `must be specified when operator is ${operator}`,
    });
  } else if ((operator === "Exists" || operator === "DoesNotExist") && values.length > 0) {
    errors.push({
      code: "ValuesForbidden",
      path: `${path}.values`,
      message: `may not be specified when operator is ${operator}`,
    });
  }
  return errors.concat(values.flatMap((v, i) => valueError(v, `${path}.values[${i}]`)));
}

function matchLabelErrors(
  matchLabels: Readonly<Record<string, string>>,
  path: string,
): SelectorError[] {
  return Object.entries(matchLabels).flatMap(([key, value]) => {
    const labelPath = `${path}.matchLabels.${key}`;
    return [...keyErrors(key, labelPath), ...valueError(value, labelPath)];
  });
}

function compareRequirements(a: Requirement, b: Requirement): number {
  return (
    compareStrings(a.key, b.key) ||
    compareStrings(a.operator, b.operator) ||
    compareStrings(a.values.join(","), b.values.join(","))
  );
}

function toRequirements(selector: LabelSelector): Requirement[] {
  const fromLabels = Object.entries(selector.matchLabels ?? {}).map(
    ([key, value]): Requirement => ({ key, operator: "Equals", values: [value] }),
  );
  const fromExpressions = (selector.matchExpressions ?? []).map((e): Requirement => ({
    key: e.key,
    operator: e.operator as RequirementOperator,
    values: [...new Set(e.values ?? [])].sort(compareStrings),
  }));
  return [...fromLabels, ...fromExpressions].sort(compareRequirements);
}

/** Validates a selector and compiles it; `path` prefixes the field paths of any errors. */
export function compileLabelSelector(
  selector: LabelSelector | null | undefined,
  path: string,
): SelectorCompilation {
  if (selector === null || selector === undefined) return { ok: true, selector: SELECTS_NOTHING };
  const errors = [
    ...matchLabelErrors(selector.matchLabels ?? {}, path),
    ...(selector.matchExpressions ?? []).flatMap((e, i) =>
      expressionErrors(e, `${path}.matchExpressions[${i}]`),
    ),
  ];
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, selector: { kind: "requirements", requirements: toRequirements(selector) } };
}

function requirementMatches(requirement: Requirement, labels: Labels): boolean {
  const present = Object.hasOwn(labels, requirement.key);
  switch (requirement.operator) {
    case "Equals":
    case "In":
      return present && requirement.values.includes(labels[requirement.key] ?? "");
    case "NotIn":
      return !present || !requirement.values.includes(labels[requirement.key] ?? "");
    case "Exists":
      return present;
    case "DoesNotExist":
      return !present;
  }
}

/** Whether a label set (absent = no labels) satisfies a compiled selector. */
export function selectorMatches(
  selector: CompiledSelector,
  labels: Labels | null | undefined,
): boolean {
  if (selector.kind === "nothing") return false;
  const set = labels ?? {};
  return selector.requirements.every((r) => requirementMatches(r, set));
}

/** True for the empty selector, which matches every label set. */
export function selectsEverything(selector: CompiledSelector): boolean {
  return selector.kind === "requirements" && selector.requirements.length === 0;
}

function requirementQuery(requirement: Requirement): string {
  const { key, values } = requirement;
  switch (requirement.operator) {
    case "Equals":
      return `${key}=${values[0] ?? ""}`;
    case "In":
      return `${key} in (${values.join(",")})`;
    case "NotIn":
      return `${key} notin (${values.join(",")})`;
    case "Exists":
      return key;
    case "DoesNotExist":
      return `!${key}`;
  }
}

/**
 * The `labelSelector` query parameter equivalent to the selector: "" lists everything, null means
 * the selector selects nothing and no list request is needed at all.
 */
export function labelSelectorQuery(selector: CompiledSelector): string | null {
  if (selector.kind === "nothing") return null;
  return selector.requirements.map(requirementQuery).join(",");
}
