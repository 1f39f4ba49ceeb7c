// Status is written only when something changed; unchanged conditions keep their transition time.
import { planStatus, reconcileConditions } from "../../../shared/clusterlink/plan-status.js";

const T0 = "2026-01-01T00:00:00Z";
const T1 = "2026-01-01T00:01:00Z";
const ready = reconcileConditions({ kind: "ready", reason: "Verified", message: "ok" });

describe("planStatus", () => {
  it("a first plan writes observedGeneration and every condition at `now`", () => {
    const { write } = planStatus(undefined, ready, 1, T0);
    expect(write?.observedGeneration).toBe(1);
    expect(write?.conditions.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([
      ["Ready", "True", T0],
      ["Reconciling", "False", T0],
      ["Stalled", "False", T0],
    ]);
  });

  it("the same plan again writes nothing", () => {
    const first = planStatus(undefined, ready, 1, T0).write ?? undefined;
    expect(planStatus(first, ready, 1, T1).write).toBeNull();
  });

  it("a new generation is written, and conditions whose status stayed keep their time", () => {
    const first = planStatus(undefined, ready, 1, T0).write ?? undefined;
    const next = planStatus(first, ready, 2, T1).write;
    expect(next?.observedGeneration).toBe(2);
    expect(next?.conditions.every((c) => c.lastTransitionTime === T0)).toBe(true);
  });

  it("a flipped status moves its transition time; other writers' conditions stay", () => {
    const foreign = {
      type: "PeerReachable",
      status: "True" as const,
      reason: "Heartbeat",
      message: "",
      lastTransitionTime: T0,
    };
    const first = planStatus({ conditions: [foreign] }, ready, 1, T0).write ?? undefined;
    const stalled = reconcileConditions({
      kind: "stalled",
      reason: "ServiceNotFound",
      message: "gone",
    });
    const next = planStatus(first, stalled, 1, T1).write;
    const ready2 = next?.conditions.find((c) => c.type === "Ready");
    expect(ready2).toMatchObject({
      status: "False",
      reason: "ServiceNotFound",
      lastTransitionTime: T1,
    });
    expect(next?.conditions.find((c) => c.type === "PeerReachable")).toEqual(foreign);
  });
});
