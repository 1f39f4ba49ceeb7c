import {
  RULE_CONDITION_TYPES,
  requireKind,
  ruleStatusSchema,
} from "../../../shared/kinds/index.js";

const now = "2026-03-01T10:00:00Z";

describe("the rule status shared by every kind (DESIGN.md §3)", () => {
  it("accepts a full status: applied version/generation/time, inSync, conditions, message", () => {
    const status = {
      appliedVersion: "4711",
      appliedGeneration: 3,
      appliedTime: now,
      inSync: true,
      observedGeneration: 3,
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "Applied",
          message: "applied to 2/2 pods of CNF cnf-1",
          lastTransitionTime: now,
          observedGeneration: 3,
        },
        {
          type: "Reconciling",
          status: "False",
          reason: "Applied",
          message: "",
          lastTransitionTime: now,
        },
        {
          type: "Stalled",
          status: "False",
          reason: "Applied",
          message: "",
          lastTransitionTime: "2026-03-01T11:00:00+01:00",
        },
      ],
      message: "",
    };
    expect(ruleStatusSchema.parse(status)).toEqual(status);
  });

  it("accepts the status of a CNF gone not-ready: inSync false, appliedVersion cleared", () => {
    expect(
      ruleStatusSchema.safeParse({ inSync: false, message: "CNF cnf-1 has 1/2 pods ready" })
        .success,
    ).toBe(true);
  });

  it.each([
    [
      "an unknown condition type",
      {
        conditions: [
          { type: "Available", status: "True", reason: "R", message: "", lastTransitionTime: now },
        ],
      },
      "conditions[0].type",
    ],
    [
      "a condition without reason",
      { conditions: [{ type: "Ready", status: "True", message: "", lastTransitionTime: now }] },
      "conditions[0].reason",
    ],
    ["a non-RFC 3339 appliedTime", { appliedTime: "yesterday" }, "appliedTime"],
    ["inSync as a string", { inSync: "true" }, "inSync"],
  ])("rejects %s", (_what, status, path) => {
    const parsed = requireKind("Mwan3Rule").parseCr({
      apiVersion: "batch.sdewan.akraino.org/v1alpha1",
      kind: "Mwan3Rule",
      metadata: { name: "r1" },
      spec: { policy: "p" },
      status,
    });
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.map((i) => i.path)).toContain(`status.${path}`);
  });

  it("names the three condition types", () => {
    expect(RULE_CONDITION_TYPES).toEqual(["Ready", "Reconciling", "Stalled"]);
  });

  it("keeps metadata the API server sends (managedFields, ownerReferences) when parsing a CR", () => {
    const parsed = requireKind("Mwan3Rule").parseCr({
      apiVersion: "batch.sdewan.akraino.org/v1alpha1",
      kind: "Mwan3Rule",
      metadata: {
        name: "r1",
        namespace: "ns",
        resourceVersion: "9",
        generation: 2,
        labels: { sdewanPurpose: "cnf-1", team: "a" },
        managedFields: [{ manager: "kubectl" }],
        finalizers: ["rule.finalizers.sdewan.akraino.org"],
        deletionTimestamp: now,
      },
      spec: { policy: "p" },
    });
    expect(parsed.ok && parsed.value.metadata).toMatchObject({
      managedFields: [{ manager: "kubectl" }],
      labels: { sdewanPurpose: "cnf-1", team: "a" },
      deletionTimestamp: now,
    });
  });

  it("rejects a CR of another kind or group", () => {
    const base = {
      apiVersion: "batch.sdewan.akraino.org/v1alpha1",
      kind: "Mwan3Policy",
      metadata: { name: "r1" },
      spec: { policy: "p" },
    };
    const parsed = requireKind("Mwan3Rule").parseCr(base);
    expect(parsed).toMatchObject({ ok: false, issues: [{ path: "kind" }] });
  });
});
