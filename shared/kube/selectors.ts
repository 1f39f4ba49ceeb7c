/** Label selectors in the three shapes callers have them, as the query string the API takes. */

export interface LabelSelectorRequirement {
  readonly key: string;
  /** In, NotIn, Exists or DoesNotExist (a string, as the API's own type has it). */
  readonly operator: string;
  readonly values?: readonly string[];
}

export interface LabelSelectorObject {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
}

/** "app=x,tier in (a,b)", `{app: "x"}` (matchLabels), or a metav1.LabelSelector. */
export type LabelSelectorInput = string | Readonly<Record<string, string>> | LabelSelectorObject;

const isSelectorObject = (input: object): input is LabelSelectorObject =>
  "matchLabels" in input || "matchExpressions" in input;

export function formatLabelSelector(input: LabelSelectorInput): string {
  if (typeof input === "string") return input;
  if (!isSelectorObject(input)) return formatMatchLabels(input);
  const parts = [formatMatchLabels(input.matchLabels ?? {})];
  for (const requirement of input.matchExpressions ?? [])
    parts.push(formatRequirement(requirement));
  return parts.filter(Boolean).join(",");
}

const formatMatchLabels = (labels: Readonly<Record<string, string>>): string =>
  Object.entries(labels)
    .map(([key, value]) => `${key}=${value}`)
    .join(",");

function formatRequirement({ key, operator, values = [] }: LabelSelectorRequirement): string {
  switch (operator) {
    case "In":
      return `${key} in (${values.join(",")})`;
    case "NotIn":
      return `${key} notin (${values.join(",")})`;
    case "Exists":
      return key;
    case "DoesNotExist":
      return `!${key}`;
    default:
      throw new Error(
        `label selector operator "${operator}" is not one of In, NotIn, Exists, DoesNotExist`,
      );
  }
}
