/**
 * Pure: a Peer's reachability from one heartbeat, with upstream's thresholds (reference B.5)
 * kept in status because the function remembers nothing: the first result decides; afterwards
 * 5 failures in a row make a reachable Peer unreachable and 3 successes in a row make an
 * unreachable one reachable. Beyond upstream, a Peer that never answered is
 * `PeerReachable=False` at once (upstream left it without a condition).
 */
import type { WantedCondition } from "./plan-status.js";

export const UNHEALTHY_THRESHOLD = 5;
export const HEALTHY_THRESHOLD = 3;

/** What the status holds about past heartbeats. */
export interface HeartbeatMemory {
  /** PeerReachable as stored; undefined before the first heartbeat. */
  readonly reachable: boolean | undefined;
  readonly consecutiveSuccesses: number;
  readonly consecutiveFailures: number;
  readonly lastSeen: string | undefined;
  readonly labels: Readonly<Record<string, string>> | undefined;
}

export type Heartbeat =
  | { readonly ok: true; readonly labels: Readonly<Record<string, string>> }
  | { readonly ok: false; readonly error: string };

export interface PeerHealthPlan {
  readonly reachable: boolean;
  readonly memory: HeartbeatMemory;
  readonly condition: WantedCondition;
}

/** Whether the stored state flips, given the run of results that now includes this one. */
function nextReachable(before: boolean | undefined, successes: number, failures: number): boolean {
  if (before === undefined) return successes > 0;
  if (before) return failures < UNHEALTHY_THRESHOLD;
  return successes >= HEALTHY_THRESHOLD;
}

export function planPeerHealth(
  before: HeartbeatMemory,
  beat: Heartbeat,
  now: string,
): PeerHealthPlan {
  const successes = beat.ok ? before.consecutiveSuccesses + 1 : 0;
  const failures = beat.ok ? 0 : before.consecutiveFailures + 1;
  const reachable = nextReachable(before.reachable, successes, failures);
  // Capped at the thresholds: larger counts decide nothing, and a steady Peer's status stays put.
  const memory: HeartbeatMemory = {
    reachable,
    consecutiveSuccesses: Math.min(successes, HEALTHY_THRESHOLD),
    consecutiveFailures: Math.min(failures, UNHEALTHY_THRESHOLD),
    lastSeen: beat.ok ? now : before.lastSeen,
    labels: beat.ok ? beat.labels : before.labels,
  };
  // Upstream's condition has reason Heartbeat and no message; ours says why when unreachable.
  const message = reachable || beat.ok ? "" : beat.error;
  return {
    reachable,
    memory,
    condition: {
      type: "PeerReachable",
      status: reachable ? "True" : "False",
      reason: "Heartbeat",
      message,
    },
  };
}
