/**
 * reconcile-rule: add/update/delete of an SDEWAN rule CR -> apply, update or delete that rule on
 * every pod of its CNF; finalizer; status. Stub until the rule-sync issue lands: answers 501.
 */
import type { EventFunction } from "../../shared/runtime/function.js";
import { notImplementedEventFunction } from "../../shared/runtime/not-implemented.js";

export const reconcileRule: EventFunction = notImplementedEventFunction(
  "reconcile-rule",
  "not implemented yet: applying rule CRs to CNF pods lands with the rule-sync issue",
);

export default reconcileRule;
