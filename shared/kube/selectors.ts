/**
 * Label selectors in the three shapes callers hold them, as the `labelSelector` query string the
 * API takes. A metav1.LabelSelector goes through shared/core's one selector module, so what is
 * sent is exactly what the selector means (and an invalid one is refused here, not widened).
 */
import {
  compileLabelSelector,
  labelSelectorQuery,
  type LabelSelector,
} from "../core/label-selector.js";
import type { Labels } from "../core/labels.js";

/** "app=x,tier in (a,b)", `{app: "x"}` (matchLabels), or a metav1.LabelSelector. */
export type LabelSelectorInput = string | Labels | LabelSelector;

const isSelectorObject = (input: object): input is LabelSelector =>
  "matchLabels" in input || "matchExpressions" in input;

export function formatLabelSelector(input: LabelSelectorInput): string {
  if (typeof input === "string") return input;
  const selector: LabelSelector = isSelectorObject(input) ? input : { matchLabels: input };
  const compiled = compileLabelSelector(selector, "labelSelector");
  if (!compiled.ok)
    throw new Error(compiled.errors.map((e) => `${e.path}: ${e.message}`).join("; "));
  // A compiled object selector never selects nothing; "" lists everything.
  return labelSelectorQuery(compiled.selector) ?? "";
}
