// Upstream's heartbeat thresholds, kept in status across events: the first result decides, then
// 5 failures to become unreachable and 3 successes to become reachable again.
import {
  DEFAULT_HEARTBEAT_CADENCE,
  heartbeatDue,
  planPeerHealth,
  type Heartbeat,
  type HeartbeatMemory,
} from "../../../shared/clusterlink/plan-peer-health.js";

const FRESH: HeartbeatMemory = {
  reachable: undefined,
  consecutiveSuccesses: 0,
  consecutiveFailures: 0,
  labels: undefined,
};
const ok: Heartbeat = { ok: true, labels: { region: "east" } };
const fail: Heartbeat = { ok: false, error: "connect ECONNREFUSED 127.0.0.1:9443" };

/** Feeds heartbeats through status, as successive events would, and returns each verdict. */
function run(beats: readonly Heartbeat[], start: HeartbeatMemory = FRESH): boolean[] {
  let memory = start;
  return beats.map((beat) => {
    const plan = planPeerHealth(memory, beat);
    memory = plan.memory;
    return plan.reachable;
  });
}

describe("planPeerHealth", () => {
  it("a Peer that never answered is unreachable at once (upstream left no condition)", () => {
    const plan = planPeerHealth(FRESH, fail);
    expect(plan.condition).toEqual({
      type: "PeerReachable",
      status: "False",
      reason: "Heartbeat",
      message: fail.ok ? "" : fail.error,
    });
    expect(plan.memory.labels).toBeUndefined();
  });

  it("the first success decides: reachable, labels recorded", () => {
    const plan = planPeerHealth(FRESH, ok);
    expect(plan.condition).toMatchObject({ status: "True", reason: "Heartbeat", message: "" });
    expect(plan.memory).toMatchObject({ labels: { region: "east" } });
  });

  it("reachable stays reachable through 4 failures and flips on the 5th", () => {
    expect(run([ok, fail, fail, fail, fail, fail])).toEqual([true, true, true, true, true, false]);
  });

  it("unreachable needs 3 successes in a row; a failure in between starts the count again", () => {
    expect(run([fail, ok, ok, fail, ok, ok, ok])).toEqual([
      false,
      false,
      false,
      false,
      false,
      false,
      true,
    ]);
  });

  it("a flapping gateway does not flap the condition", () => {
    expect(run([ok, fail, ok, fail, ok, fail, ok])).toEqual([
      true,
      true,
      true,
      true,
      true,
      true,
      true,
    ]);
  });

  it("labels keep the last success while failures pile up", () => {
    let memory = planPeerHealth(FRESH, ok).memory;
    memory = planPeerHealth(memory, fail).memory;
    expect(memory).toMatchObject({ labels: { region: "east" }, consecutiveFailures: 1 });
  });

  it("a steady Peer plans the status it already has: nothing to write, beat after beat", () => {
    for (const beat of [ok, fail]) {
      let memory = FRESH;
      for (let i = 0; i < 8; i += 1) memory = planPeerHealth(memory, beat).memory;
      expect(planPeerHealth(memory, beat).memory).toEqual(memory);
    }
  });
});

describe("heartbeatDue: upstream's cadence from the tick's clock", () => {
  const cadence = DEFAULT_HEARTBEAT_CADENCE;
  /** The ticks of one minute, one a second, each 37 ms late (a tick is never exactly on time). */
  const ticks = Array.from({ length: 60 }, (_, i) => Date.UTC(2026, 0, 1) + i * 1_000 + 37);

  it("a reachable or never heartbeaten Peer is probed on every tick (upstream: every 1 s)", () => {
    for (const reachable of [true, undefined]) {
      expect(ticks.filter((t) => heartbeatDue(reachable, t, cadence))).toHaveLength(60);
    }
  });

  it("an unreachable Peer is probed on one tick in ten (upstream: every 10 s)", () => {
    const due = ticks.filter((t) => heartbeatDue(false, t, cadence));
    expect(due).toHaveLength(6);
    expect(due.slice(1).map((t, i) => t - (due[i] ?? 0))).toEqual([
      10_000, 10_000, 10_000, 10_000, 10_000,
    ]);
  });

  it("a tick period as long as the unreachable one probes every Peer on every tick", () => {
    const slow = { tickMs: 10_000, unreachableMs: 10_000 };
    expect(heartbeatDue(false, ticks[3] ?? 0, slow)).toBe(true);
  });
});
