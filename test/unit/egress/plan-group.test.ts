import type { PodSnapshot } from "../../../shared/egress/membership.js";
import {
  planEgressGroup,
  type DesiredEgressGroup,
  type EgressGroupPlanInput,
  type EgressSnapshot,
  type ObservedEgressGroup,
} from "../../../shared/egress/plan-group.js";
import { egress, namespaces, pod } from "./fixtures.js";

const T0 = "2030-01-01T00:00:00Z";
const T1 = "2030-01-01T00:05:00Z";

const web = egress("web", { podSelector: { matchLabels: { app: "web" } } }, 3);
const cluster = namespaces({ a: {}, b: {} });
const basePods: PodSnapshot[] = [
  pod("b", "web-2", { app: "web" }, { nodeName: "node-2", ips: ["10.0.0.2"] }),
  pod("a", "web-1", { app: "web" }, { ips: ["10.0.0.1", "fd00::1"] }),
  pod("a", "db-1", { app: "db" }),
];

function input(overrides: Partial<EgressGroupPlanInput> = {}): EgressGroupPlanInput {
  return {
    name: "web",
    egress: web,
    pods: basePods,
    namespaces: cluster,
    existing: null,
    now: T0,
    ...overrides,
  };
}

/** What the API server would hand back after the planned write. */
function observedFrom(desired: DesiredEgressGroup, resourceVersion = "1"): ObservedEgressGroup {
  return {
    name: desired.name,
    resourceVersion,
    ownerUid: desired.ownerReference.uid,
    content: desired.content,
    conditions: desired.conditions,
    indexed: true,
  };
}

function written(overrides: Partial<EgressGroupPlanInput> = {}): ObservedEgressGroup {
  const plan = planEgressGroup(input(overrides));
  if (plan.desired === null) throw new Error("expected a desired group");
  return observedFrom(plan.desired);
}

describe("planEgressGroup: the desired group", () => {
  it("creates a group named after the Egress, owned by it, with sorted members, count and generation", () => {
    const plan = planEgressGroup(input());
    expect(plan.action).toBe("create");
    expect(plan.problem).toBeNull();
    expect(plan.desired).toEqual({
      name: "web",
      ownerReference: {
        apiVersion: "crd.antrea.io/v1beta1",
        kind: "Egress",
        name: "web",
        uid: "uid-web",
        controller: true,
      },
      content: {
        egressGeneration: 3,
        memberCount: 2,
        members: [
          {
            pod: { name: "web-1", namespace: "a" },
            nodeName: "node-1",
            ips: ["10.0.0.1", "fd00::1"],
          },
          { pod: { name: "web-2", namespace: "b" }, nodeName: "node-2", ips: ["10.0.0.2"] },
        ],
      },
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "MembersComputed",
          message: "2 members computed from Egress generation 3",
          observedGeneration: 3,
          lastTransitionTime: T0,
        },
      ],
    });
  });

  it("leaves blockOwnerDeletion out of the owner reference", () => {
    expect(planEgressGroup(input()).desired?.ownerReference).not.toHaveProperty(
      "blockOwnerDeletion",
    );
  });

  it("creates an empty group for an Egress with appliedTo: {}", () => {
    const plan = planEgressGroup(input({ egress: egress("web", {}) }));
    expect([plan.action, plan.desired?.content]).toEqual([
      "create",
      { egressGeneration: 1, memberCount: 0, members: [] },
    ]);
  });
});

describe("planEgressGroup: actions", () => {
  it.each<[string, () => Partial<EgressGroupPlanInput>, string]>([
    ["no group yet -> create", () => ({}), "create"],
    [
      "same content again, later -> unchanged",
      () => ({ existing: written(), now: T1 }),
      "unchanged",
    ],
    [
      "same members but pods listed in another order -> unchanged",
      () => ({ existing: written(), pods: [...basePods].reverse() }),
      "unchanged",
    ],
    [
      "a Pod relabelled out -> update",
      () => ({
        existing: written(),
        pods: basePods.map((p) => (p.name === "web-2" ? { ...p, labels: {} } : p)),
      }),
      "update",
    ],
    [
      "a new matching Pod -> update",
      () => ({ existing: written(), pods: [...basePods, pod("c", "web-3", { app: "web" })] }),
      "update",
    ],
    [
      "a member's IP changed -> update",
      () => ({
        existing: written(),
        pods: basePods.map((p) => (p.name === "web-2" ? { ...p, ips: ["10.0.0.9"] } : p)),
      }),
      "update",
    ],
    [
      "a member moved to another node -> update",
      () => ({
        existing: written(),
        pods: basePods.map((p) => (p.name === "web-1" ? { ...p, nodeName: "node-9" } : p)),
      }),
      "update",
    ],
    [
      "Egress generation bumped with the same members -> update (records the generation)",
      () => ({ existing: written(), egress: { ...web, generation: 4 } }),
      "update",
    ],
    [
      "Egress recreated with the same name (new uid) -> update (owner reference)",
      () => ({ existing: written(), egress: { ...web, uid: "uid-web-2" } }),
      "update",
    ],
    [
      "group without owner reference -> update",
      () => ({ existing: { ...written(), ownerUid: null } }),
      "update",
    ],
    [
      "Egress gone, group exists -> delete",
      () => ({ existing: written(), egress: null }),
      "delete",
    ],
    ["Egress gone, no group -> unchanged", () => ({ egress: null }), "unchanged"],
  ])("%s", (_title, overrides, action) => {
    expect(planEgressGroup(input(overrides())).action).toBe(action);
  });

  it("keeps lastTransitionTime of an unchanged Ready condition on update", () => {
    const existing = written();
    const plan = planEgressGroup(input({ existing, egress: { ...web, generation: 4 }, now: T1 }));
    expect(plan.desired?.conditions[0]?.lastTransitionTime).toBe(T0);
  });

  it("is idempotent: planning over its own result gives unchanged", () => {
    const first = written({ pods: [...basePods, pod("a", "no-ip", { app: "web" }, { ips: [] })] });
    const again = planEgressGroup(
      input({
        existing: first,
        pods: [...basePods, pod("a", "no-ip", { app: "web" }, { ips: [] })],
      }),
    );
    expect(again.action).toBe("unchanged");
  });
});

describe("planEgressGroup: problems are Stalled conditions, never partial groups", () => {
  const invalid: EgressSnapshot = {
    ...web,
    generation: 5,
    appliedTo: { podSelector: { matchExpressions: [{ key: "app", operator: "In", values: [] }] } },
  };

  it("an invalid selector on a new Egress -> create an empty group with Stalled InvalidSelector", () => {
    const plan = planEgressGroup(input({ egress: invalid }));
    expect(plan.action).toBe("create");
    expect(plan.problem).toEqual({
      reason: "InvalidSelector",
      message:
        "spec.appliedTo.podSelector.matchExpressions[0].values: must be specified when operator is In",
    });
    expect(plan.desired?.content).toEqual({ egressGeneration: 0, memberCount: 0, members: [] });
    expect(
      plan.desired?.conditions.map((c) => [c.type, c.status, c.reason, c.observedGeneration]),
    ).toEqual([
      ["Ready", "False", "InvalidSelector", 5],
      ["Stalled", "True", "InvalidSelector", 5],
    ]);
  });

  it("an Egress edited into an invalid selector keeps its last members and generation, and goes Stalled", () => {
    const existing = written();
    const plan = planEgressGroup(input({ egress: invalid, existing, now: T1 }));
    expect(plan.action).toBe("update");
    expect(plan.desired?.content).toEqual(existing.content);
    expect(plan.desired?.conditions.map((c) => [c.type, c.status, c.lastTransitionTime])).toEqual([
      ["Ready", "False", T1],
      ["Stalled", "True", T1],
    ]);
  });

  it("a Stalled group recomputed with nothing new -> unchanged", () => {
    const stalled = written({ egress: invalid });
    expect(planEgressGroup(input({ egress: invalid, existing: stalled, now: T1 })).action).toBe(
      "unchanged",
    );
  });

  it("a fixed selector clears Stalled and computes members", () => {
    const stalled = written({ egress: invalid });
    const plan = planEgressGroup(
      input({ egress: { ...web, generation: 6 }, existing: stalled, now: T1 }),
    );
    expect(plan.action).toBe("update");
    expect(plan.problem).toBeNull();
    expect(plan.desired?.content.memberCount).toBe(2);
    expect(plan.desired?.conditions.map((c) => c.type)).toEqual(["Ready"]);
  });

  it.each<[string, { maxMembers: number; maxMemberBytes: number }, RegExp]>([
    [
      "3 members over a 2-member limit -> TooManyMembers with count and limit",
      { maxMembers: 2, maxMemberBytes: 1e6 },
      /selects 3 Pods; an EgressGroup holds at most 2 members/,
    ],
    [
      "members over the byte budget -> TooManyMembers with bytes and limit",
      { maxMembers: 100, maxMemberBytes: 200 },
      /selects 3 Pods whose member list needs \d+ bytes; an EgressGroup holds at most 200 bytes/,
    ],
  ])("%s", (_title, limits, message) => {
    const existing = written();
    const pods = [...basePods, pod("c", "web-3", { app: "web" })];
    const plan = planEgressGroup(input({ existing, pods, limits, now: T1 }));
    expect(plan.problem?.reason).toBe("TooManyMembers");
    expect(plan.problem?.message).toMatch(message);
    expect(plan.problem?.message).toMatch(/members are kept as computed from Egress generation 3/);
    // Not truncated: the last members that fitted stay as they were.
    expect(plan.desired?.content).toEqual(existing.content);
    expect(plan.desired?.conditions.find((c) => c.type === "Stalled")?.reason).toBe(
      "TooManyMembers",
    );
  });

  it("exactly at the member limit is fine", () => {
    const plan = planEgressGroup(input({ limits: { maxMembers: 2, maxMemberBytes: 1e6 } }));
    expect(plan.problem).toBeNull();
  });
});
