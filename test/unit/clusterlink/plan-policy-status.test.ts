// What clusterlink-authz writes on a policy: PolicyValid only when validity changes (a policy
// never found invalid is left alone), and an Event per transition.
import { compilePolicy } from "../../../shared/clusterlink/plan-access.js";
import { planPolicyStatus } from "../../../shared/clusterlink/plan-policy-status.js";
import type { StoredStatus } from "../../../shared/clusterlink/plan-status.js";

const everyone = [{ workloadSelector: {} }];
const bad = [{ workloadSelector: { matchExpressions: [{ key: "k", operator: "In" }] } }];
const policy = (action: string, from: unknown) =>
  compilePolicy({
    name: "app/p",
    privileged: false,
    namespace: "app",
    spec: { action, from, to: everyone },
  });
const NOW = "2026-01-02T00:00:00Z";
const stored = (
  status: "True" | "False",
  reason: string,
  message: string,
  generation = 1,
): StoredStatus => ({
  observedGeneration: generation,
  conditions: [
    {
      type: "PolicyValid",
      status,
      reason,
      message,
      lastTransitionTime: "2026-01-01T00:00:00Z",
      observedGeneration: generation,
    },
  ],
});

describe("planPolicyStatus", () => {
  it("a valid policy never found invalid: nothing written, no Event", () => {
    expect(planPolicyStatus(policy("allow", everyone), undefined, 1, NOW)).toEqual({
      write: null,
      events: [],
    });
  });

  it("an invalid deny: PolicyValid False FailsClosed, with the problem, and a Warning Event", () => {
    const plan = planPolicyStatus(policy("deny", bad), undefined, 1, NOW);
    const condition = plan.write?.conditions[0];
    expect(condition).toMatchObject({
      type: "PolicyValid",
      status: "False",
      reason: "FailsClosed",
    });
    expect(condition?.message).toContain(
      "spec.from[0].workloadSelector.matchExpressions[0].values",
    );
    expect(plan.events).toEqual([
      { type: "Warning", reason: "PolicyInvalid", note: condition?.message },
    ]);
  });

  it("an invalid allow: AllowsNothing", () => {
    expect(
      planPolicyStatus(policy("allow", bad), undefined, 1, NOW).write?.conditions[0],
    ).toMatchObject({
      reason: "AllowsNothing",
      message: expect.stringContaining("allows nothing until fixed") as unknown,
    });
  });

  it("the same finding again: nothing written, no Event", () => {
    const first = planPolicyStatus(policy("deny", bad), undefined, 1, NOW);
    const again = planPolicyStatus(policy("deny", bad), first.write ?? undefined, 1, NOW);
    expect(again).toEqual({ write: null, events: [] });
  });

  it("fixed: PolicyValid True and a Normal Event", () => {
    const plan = planPolicyStatus(
      policy("deny", everyone),
      stored("False", "FailsClosed", "x"),
      2,
      NOW,
    );
    expect(plan.write?.conditions[0]).toMatchObject({
      status: "True",
      reason: "Valid",
      observedGeneration: 2,
    });
    expect(plan.events.map((e) => e.reason)).toEqual(["PolicyValid"]);
  });

  it("still invalid after an edit: the generation moves, no second Event", () => {
    const message =
      planPolicyStatus(policy("deny", bad), undefined, 1, NOW).write?.conditions[0]?.message ?? "";
    const plan = planPolicyStatus(
      policy("deny", bad),
      stored("False", "FailsClosed", message, 1),
      2,
      NOW,
    );
    expect(plan.write?.observedGeneration).toBe(2);
    expect(plan.events).toEqual([]);
  });
});
