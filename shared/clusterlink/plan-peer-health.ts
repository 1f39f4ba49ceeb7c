/**
 * Pure: a Peer's reachability from one heartbeat, with upstream's thresholds (reference B.5)
 * kept in status because the function remembers nothing: the first result decides; afterwards
 * 5 failures in a row make a reachable Peer unreachable and 3 successes in a row make an
 * unreachable one reachable. Beyond upstream, a Peer that never answered is
 * `PeerReachable=False` at once (upstream left it without a condition). And when a Peer is due:
 * upstream's cadence (1 s while reachable, 10 s while not) from the heartbeat tick's clock.
 * Nothing here changes while a Peer stays as it is, so a steady Peer's status is never written.
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

export function planPeerHealth(before: HeartbeatMemory, beat: Heartbeat): PeerHealthPlan {
  const successes = beat.ok ? before.consecutiveSuccesses + 1 : 0;
  const failures = beat.ok ? 0 : before.consecutiveFailures + 1;
  const reachable = nextReachable(before.reachable, successes, failures);
  // Only the run that can flip the state is kept (failures while reachable, successes while
  // not): the other count decides nothing, and a steady Peer's status stays put beat after beat.
  const memory: HeartbeatMemory = {
    reachable,
    consecutiveSuccesses: reachable ? 0 : Math.min(successes, HEALTHY_THRESHOLD),
    consecutiveFailures: reachable ? Math.min(failures, UNHEALTHY_THRESHOLD) : 0,
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

/** Upstream's heartbeat periods (reference B.5), and the tick that drives them. */
export interface HeartbeatCadence {
  /** How often the heartbeat tick comes (clusterlink-peer-health's resync); a reachable or
   * never heartbeaten Peer is probed on every tick: upstream's 1 s. */
  readonly tickMs: number;
  /** An unreachable Peer is probed once per this period: upstream's 10 s. */
  readonly unreachableMs: number;
}

export const DEFAULT_HEARTBEAT_CADENCE: HeartbeatCadence = { tickMs: 1_000, unreachableMs: 10_000 };

/**
 * Whether a tick at `nowMs` probes a Peer: always while it is reachable or unknown; while it is
 * unreachable, on the one tick that falls first into each `unreachableMs` window of the clock.
 * Computed from the clock, not a stored "last probed", so waiting costs no write; a late or
 * early tick may probe an unreachable Peer twice or skip a window, which the thresholds absorb.
 */
export function heartbeatDue(
  reachable: boolean | undefined,
  nowMs: number,
  cadence: HeartbeatCadence,
): boolean {
  if (reachable !== false) return true;
  if (cadence.unreachableMs <= cadence.tickMs) return true;
  return nowMs % cadence.unreachableMs < cadence.tickMs;
}
