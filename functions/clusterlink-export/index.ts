/**
 * clusterlink-export: add/update/delete of a ClusterLink Export or a Service (or a resync) ->
 * verify each Export it concerns against its Service (exists, has the port) and write
 * ExportValid plus Ready/Reconciling/Stalled only when they changed. shared/clusterlink does
 * the work (on-export-event.ts says which outcome each case gets).
 */
import { syncExportEvent } from "../../shared/clusterlink/index.js";
import { eventRecorder, functionDeps, type FunctionDeps } from "../../shared/runtime/deps.js";
import type { EventFunction } from "../../shared/runtime/function.js";

export function createClusterLinkExport(given: Partial<FunctionDeps> = {}): EventFunction {
  const deps = functionDeps(given);
  return {
    name: "clusterlink-export",
    kind: "event",
    handle: (event, ctx) =>
      syncExportEvent(event, {
        kube: deps.kube().withCalls(ctx.calls),
        log: ctx.log,
        now: () => deps.now().toISOString(),
        events: eventRecorder(deps, "clusterlink-export", ctx.calls),
      }),
  };
}

export const clusterLinkExport: EventFunction = createClusterLinkExport();

export default clusterLinkExport;
