/**
 * clusterlink-import: add/update/delete of a ClusterLink Import, a Service or an EndpointSlice (or
 * a resync) -> lease each Import a dataplane port derived from every Import's spec.targetPort,
 * keep its system Service (ClusterLink namespace) and user ExternalName Service, and remove what
 * an Import that is gone or invalid left. shared/clusterlink does the work (on-import-event.ts says
 * which outcome each case gets); CL_NAMESPACE (default clusterlink-system) names the namespace.
 */
import { clusterLinkNamespace, syncImportEvent } from "../../shared/clusterlink/index.js";
import { eventRecorder, functionDeps, type FunctionDeps } from "../../shared/runtime/deps.js";
import type { EventFunction } from "../../shared/runtime/function.js";

export function createClusterLinkImport(given: Partial<FunctionDeps> = {}): EventFunction {
  const deps = functionDeps(given);
  return {
    name: "clusterlink-import",
    kind: "event",
    handle: (event, ctx) =>
      syncImportEvent(event, {
        kube: deps.kube().withCalls(ctx.calls),
        log: ctx.log,
        now: () => deps.now().toISOString(),
        events: eventRecorder(deps, "clusterlink-import", ctx.calls),
        clNamespace: clusterLinkNamespace(deps.env),
      }),
  };
}

export const clusterLinkImport: EventFunction = createClusterLinkImport();

export default clusterLinkImport;
