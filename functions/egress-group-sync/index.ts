/**
 * egress-group-sync: add/update/delete of an Antrea Egress, a Pod or a Namespace (or a resync) ->
 * recompute the EgressGroup of every affected Egress from live state and write it only if it
 * changed, with a `MembersChanged (+a -b)` Kubernetes Event on the group when its Pods changed.
 * The event is a hint: it only says which groups to look at; shared/egress does the
 * rest (on-event.ts says which outcome each case gets).
 */
import { syncEgressEvent, type GroupLimits } from "../../shared/egress/index.js";
import { eventRecorder, functionDeps, type FunctionDeps } from "../../shared/runtime/deps.js";
import type { EventFunction } from "../../shared/runtime/function.js";

export interface EgressGroupSyncDeps extends FunctionDeps {
  readonly limits?: GroupLimits;
  /** Whole recomputes tried when a write races with another writer. Default 3. */
  readonly maxRaceAttempts?: number;
}

export function createEgressGroupSync(given: Partial<EgressGroupSyncDeps> = {}): EventFunction {
  const deps = functionDeps(given);
  return {
    name: "egress-group-sync",
    kind: "event",
    handle: (event, ctx) =>
      syncEgressEvent(event, {
        kube: deps.kube().withCalls(ctx.calls),
        log: ctx.log,
        now: () => deps.now().toISOString(),
        events: eventRecorder(deps, "egress-group-sync", ctx.calls),
        ...(given.limits ? { limits: given.limits } : {}),
        ...(given.maxRaceAttempts ? { maxRaceAttempts: given.maxRaceAttempts } : {}),
      }),
  };
}

export const egressGroupSync: EventFunction = createEgressGroupSync();

export default egressGroupSync;
