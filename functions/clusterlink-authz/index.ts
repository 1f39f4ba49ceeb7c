/**
 * clusterlink-authz: a decision request (source attributes, destination export) in, allow or
 * deny out, from the live PrivilegedAccessPolicies and the export namespace's AccessPolicies,
 * with the deciding policy named. shared/clusterlink does the work (authz.ts, plan-access.ts).
 */
import { decideAccessRequest } from "../../shared/clusterlink/index.js";
import { functionDeps, type FunctionDeps } from "../../shared/runtime/deps.js";
import type { JsonFunction } from "../../shared/runtime/function.js";

export function createClusterLinkAuthz(given: Partial<FunctionDeps> = {}): JsonFunction {
  const deps = functionDeps(given);
  return {
    name: "clusterlink-authz",
    kind: "json",
    handle: (body, ctx) => decideAccessRequest(body, deps.kube().withCalls(ctx.calls), ctx.log),
  };
}

export const clusterLinkAuthz: JsonFunction = createClusterLinkAuthz();

export default clusterLinkAuthz;
