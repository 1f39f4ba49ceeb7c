/**
 * clusterlink-authz: a decision request in (ingress: an Export and the remote client's
 * attributes; egress: an Import, the local client's IP, the chosen source), allow or deny out,
 * with what decided named. The Peer asking is the one its verified client certificate names
 * (served over HTTPS with TLS_CLIENT_CA_FILE, the fabric CA); CL_AUTHZ_UNVERIFIED=on-behalf-of-peer
 * lets a trusted in-cluster caller name it instead. shared/clusterlink does the work (on-access-request.ts,
 * plan-authz.ts, plan-access.ts).
 */
import {
  clusterLinkNamespace,
  decideAccessRequest,
  unverifiedCallersOf,
} from "../../shared/clusterlink/index.js";
import { eventRecorder, functionDeps, type FunctionDeps } from "../../shared/runtime/deps.js";
import type { JsonFunction } from "../../shared/runtime/function.js";

export function createClusterLinkAuthz(given: Partial<FunctionDeps> = {}): JsonFunction {
  const deps = functionDeps(given);
  const name = "clusterlink-authz";
  return {
    name,
    kind: "json",
    handle: (body, ctx) =>
      decideAccessRequest(body, {
        kube: deps.kube().withCalls(ctx.calls),
        log: ctx.log,
        now: () => deps.now().toISOString(),
        events: eventRecorder(deps, name, ctx.calls),
        clNamespace: clusterLinkNamespace(deps.env),
        unverified: unverifiedCallersOf(deps.env),
        caller: ctx.caller,
      }),
  };
}

export const clusterLinkAuthz: JsonFunction = createClusterLinkAuthz();

export default clusterLinkAuthz;
