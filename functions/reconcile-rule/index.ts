/**
 * reconcile-rule: add/update/delete of an SDEWAN rule CR -> apply, update or delete that rule on
 * every ready pod of its CNF; finalizer; status. The event only names the rule: shared/sync
 * re-reads it with its CNF and does the rest (syncRuleEvent).
 */
import { eventRecorder, functionDeps, type FunctionDeps } from "../../shared/runtime/deps.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import { syncRuleEvent } from "../../shared/sync/index.js";

export function createReconcileRule(given: Partial<FunctionDeps> = {}): EventFunction {
  const deps = functionDeps(given);
  return {
    name: "reconcile-rule",
    kind: "event",
    handle: (event, ctx) =>
      syncRuleEvent(event, {
        ...ctx,
        kube: deps.kube().withCalls(ctx.calls),
        env: deps.env,
        now: () => deps.now().toISOString(),
        events: eventRecorder(deps, "reconcile-rule", ctx.calls),
      }),
  };
}

export const reconcileRule: EventFunction = createReconcileRule();

export default reconcileRule;
