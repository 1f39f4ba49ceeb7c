/**
 * clusterlink-peer-health: the heartbeat tick (its resync, every CL_HEARTBEAT_INTERVAL_MS) or a
 * new or changed Peer -> heartbeat the Peers that are due over mutual TLS and keep PeerReachable
 * (with upstream's thresholds, carried in status) and the remote labels up to date. The client
 * identity is read from CL_PEER_TLS_DIR (ca.crt, tls.crt, tls.key; a mounted Secret) on every
 * event. shared/clusterlink does the work (on-peer-event.ts says which outcome each case gets).
 */
import {
  clusterLinkNamespace,
  DEFAULT_HEARTBEAT_CADENCE,
  DEFAULT_PEER_TLS_DIR,
  readPeerTls,
  syncPeerEvent,
} from "../../shared/clusterlink/index.js";
import {
  eventRecorder,
  functionDeps,
  positiveIntFromEnv,
  type FunctionDeps,
} from "../../shared/runtime/deps.js";
import type { EventFunction } from "../../shared/runtime/function.js";

export function createClusterLinkPeerHealth(given: Partial<FunctionDeps> = {}): EventFunction {
  const deps = functionDeps(given);
  const dir = deps.env["CL_PEER_TLS_DIR"] ?? DEFAULT_PEER_TLS_DIR;
  return {
    name: "clusterlink-peer-health",
    kind: "event",
    handle: (event, ctx) =>
      syncPeerEvent(event, {
        kube: deps.kube().withCalls(ctx.calls),
        log: ctx.log,
        now: () => deps.now().toISOString(),
        events: eventRecorder(deps, "clusterlink-peer-health", ctx.calls),
        clNamespace: clusterLinkNamespace(deps.env),
        tls: () => readPeerTls(dir),
        timeoutMs: positiveIntFromEnv(deps.env, "CL_HEARTBEAT_TIMEOUT_MS", 2000),
        cadence: {
          // The tick period must be the resync period of the event source that sends it.
          tickMs: positiveIntFromEnv(
            deps.env,
            "CL_HEARTBEAT_INTERVAL_MS",
            DEFAULT_HEARTBEAT_CADENCE.tickMs,
          ),
          unreachableMs: positiveIntFromEnv(
            deps.env,
            "CL_UNREACHABLE_HEARTBEAT_INTERVAL_MS",
            DEFAULT_HEARTBEAT_CADENCE.unreachableMs,
          ),
        },
        // sdewan_clusterlink_peer_unreachable, which SdewanClusterLinkPeerUnreachable watches.
        onPeersChecked: (peers, complete) => ctx.metrics?.setPeersReachable(peers, complete),
      }),
  };
}

export const clusterLinkPeerHealth: EventFunction = createClusterLinkPeerHealth();

export default clusterLinkPeerHealth;
