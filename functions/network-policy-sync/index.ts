/**
 * network-policy-sync: add/update/delete of a NetworkPolicy, a Pod or a Namespace (or a resync)
 * -> recompute the NetworkPolicyEndpoint and NetworkPolicyPeerSet tables the event can change
 * from live state and write only those that changed. The event is a hint: shared/netpol does the
 * rest (on-event.ts says which outcome each case gets), and records Kubernetes Events on the
 * Pods and NetworkPolicies whose tables change in a way an operator must see (plan-events.ts).
 *
 * Environment: NETPOL_PEER_SET_MAX_BYTES (bytes of JSON one NetworkPolicyPeerSet may take, default
 * 1.25 MiB; above it the peer set is stored failing closed: shared/netpol/peer-set-bound.ts).
 */
import { DEFAULT_MAX_PEER_SET_BYTES, syncNetpolEvent } from "../../shared/netpol/index.js";
import {
  eventRecorder,
  functionDeps,
  positiveIntFromEnv,
  type FunctionDeps,
} from "../../shared/runtime/deps.js";
import type { EventFunction } from "../../shared/runtime/function.js";

export interface NetworkPolicySyncDeps extends FunctionDeps {
  /** Whole recomputes tried when a write races with another writer. Default 3. */
  readonly maxRaceAttempts?: number;
}

export function createNetworkPolicySync(given: Partial<NetworkPolicySyncDeps> = {}): EventFunction {
  const deps = functionDeps(given);
  const maxPeerSetBytes = positiveIntFromEnv(
    deps.env,
    "NETPOL_PEER_SET_MAX_BYTES",
    DEFAULT_MAX_PEER_SET_BYTES,
  );
  return {
    name: "network-policy-sync",
    kind: "event",
    handle: (event, ctx) =>
      syncNetpolEvent(event, {
        kube: deps.kube().withCalls(ctx.calls),
        log: ctx.log,
        now: () => deps.now().toISOString(),
        ...(given.maxRaceAttempts ? { maxRaceAttempts: given.maxRaceAttempts } : {}),
        // Transitions an operator must see, on the Pod or NetworkPolicy (plan-events.ts).
        events: eventRecorder(deps, "network-policy-sync", ctx.calls),
        // sdewan_netpol_endpoints_fail_closed, which SdewanNetpolFailClosed watches.
        onFailingClosed: (count) => ctx.metrics?.setNetpolFailingClosed(count),
        maxPeerSetBytes,
        onPolicyProblems: (report, complete) =>
          ctx.metrics?.setNetpolPolicyProblems(report, complete),
      }),
  };
}

export const networkPolicySync: EventFunction = createNetworkPolicySync();

export default networkPolicySync;
