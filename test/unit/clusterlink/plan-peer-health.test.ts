// Upstream's heartbeat thresholds, kept in status across events: the first result decides, then
// 5 failures to become unreachable and 3 successes to become reachable again.
import {
  planPeerHealth,
  type Heartbeat,
  type HeartbeatMemory,
} from "../../../shared/clusterlink/plan-peer-health.js";

const FRESH: HeartbeatMemory = {
  reachable: undefined,
  consecutiveSuccesses: 0,
  consecutiveFailures: 0,
  lastSeen: undefined,
  labels: undefined,
};
const ok: Heartbeat = { ok: true, labels: { region: "east" } };
const fail: Heartbeat = { ok: false, error: "connect ECONNREFUSED 127.0.0.1:9443" };

/** Feeds heartbeats through status, as successive events would, and returns each verdict. */
function run(beats: readonly Heartbeat[], start: HeartbeatMemory = FRESH): boolean[] {
  let memory = start;
  return beats.map((beat, i) => {
    const plan = planPeerHealth(memory, beat, `2026-01-01T00:00:${String(i).padStart(2, "0")}Z`);
    memory = plan.memory;
    return plan.reachable;
  });
}

describe("planPeerHealth", () => {
  it("a Peer that never answered is unreachable at once (upstream left no condition)", () => {
    const plan = planPeerHealth(FRESH, fail, "2026-01-01T00:00:00Z");
    expect(plan.condition).toEqual({
      type: "PeerReachable",
      status: "False",
      reason: "Heartbeat",
      message: fail.ok ? "" : fail.error,
    });
    expect(plan.memory.lastSeen).toBeUndefined();
  });

  it("the first success decides: reachable, labels and lastSeen recorded", () => {
    const plan = planPeerHealth(FRESH, ok, "2026-01-01T00:00:00Z");
    expect(plan.condition).toMatchObject({ status: "True", reason: "Heartbeat", message: "" });
    expect(plan.memory).toMatchObject({
      lastSeen: "2026-01-01T00:00:00Z",
      labels: { region: "east" },
    });
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

  it("lastSeen and labels keep the last success while failures pile up", () => {
    let memory = planPeerHealth(FRESH, ok, "2026-01-01T00:00:00Z").memory;
    memory = planPeerHealth(memory, fail, "2026-01-01T00:00:10Z").memory;
    expect(memory).toMatchObject({ lastSeen: "2026-01-01T00:00:00Z", consecutiveFailures: 1 });
  });
});
