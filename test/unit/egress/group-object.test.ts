import {
  groupObjectFromDesired,
  observedGroupFromObject,
} from "../../../shared/egress/group-object.js";
import {
  GROUP_LABEL,
  groupLabelValue,
  memberEntryDigest,
  memberLabelKey,
} from "../../../shared/egress/member-index.js";
import { planEgressGroup, type EgressGroupPlanInput } from "../../../shared/egress/plan-group.js";
import { egressGroupSchema } from "../../../shared/kinds/index.js";
import { egress, pod } from "./fixtures.js";

const input: EgressGroupPlanInput = {
  name: "web",
  egress: egress("web", { podSelector: { matchLabels: { app: "web" } } }, 2),
  pods: [
    pod("a", "w1", { app: "web" }, { ips: ["10.0.0.1", "fd00::1"] }),
    pod("a", "no-ip", { app: "web" }, { ips: [] }),
  ],
  namespaces: new Map(),
  existing: null,
  now: "2030-01-01T00:00:00Z",
};

function desired(overrides: Partial<EgressGroupPlanInput> = {}) {
  const plan = planEgressGroup({ ...input, ...overrides });
  if (plan.desired === null) throw new Error("expected a desired group");
  return plan.desired;
}

/** What the API server returns for a written object: our fields plus server metadata. */
const stored = (object: object, resourceVersion = "42") => {
  const o = object as { metadata: Record<string, unknown> };
  return {
    ...o,
    metadata: {
      ...o.metadata,
      uid: "g-uid",
      resourceVersion,
      generation: 1,
      creationTimestamp: "2030-01-01T00:00:00Z",
    },
  };
};

describe("EgressGroup objects", () => {
  it("writes a valid EgressGroup: owner reference, members, count and generation under status", () => {
    const object = groupObjectFromDesired(desired());
    expect(egressGroupSchema.safeParse(object).success).toBe(true);
    expect(object.metadata.ownerReferences).toEqual([
      {
        apiVersion: "crd.antrea.io/v1beta1",
        kind: "Egress",
        name: "web",
        uid: "uid-web",
        controller: true,
      },
    ]);
    expect(object.status).toMatchObject({ memberCount: 2, observedEgressGeneration: 2 });
    expect(object.status?.members.map((m) => m.pod.name)).toEqual(["no-ip", "w1"]);
    expect(object.metadata).not.toHaveProperty("resourceVersion");
    // Stored without managedFields, which would repeat every member index label.
    expect(object.metadata["managedFields"]).toEqual([{}]);
  });

  it("carries the resourceVersion of the group it replaces on update", () => {
    expect(groupObjectFromDesired(desired(), "17").metadata.resourceVersion).toBe("17");
  });

  it.each<[string, Partial<EgressGroupPlanInput>]>([
    ["a normal group", {}],
    [
      "a Stalled group",
      {
        egress: egress("web", {
          podSelector: { matchExpressions: [{ key: "a", operator: "In", values: [] }] },
        }),
      },
    ],
  ])("round-trips %s: re-planning over what was stored plans no write", (_title, overrides) => {
    const observed = observedGroupFromObject(stored(groupObjectFromDesired(desired(overrides))));
    expect(observed.resourceVersion).toBe("42");
    expect(
      planEgressGroup({ ...input, ...overrides, existing: observed, now: "2031-01-01T00:00:00Z" })
        .action,
    ).toBe("unchanged");
  });

  it("labels the group with its name and one key per member, so a Pod's groups can be listed", () => {
    const group = desired();
    const [noIp, w1] = group.content.members;
    if (noIp === undefined || w1 === undefined) throw new Error("expected two members");
    expect(groupObjectFromDesired(group).metadata["labels"]).toEqual({
      [GROUP_LABEL]: groupLabelValue("web"),
      [memberLabelKey(noIp.pod)]: memberEntryDigest(noIp),
      [memberLabelKey(w1.pod)]: memberEntryDigest(w1),
    });
  });

  it.each<[string, (labels: Record<string, string>) => Record<string, string>]>([
    ["written before the index existed (no labels)", () => ({})],
    ["missing one member's key", (labels) => Object.fromEntries(Object.entries(labels).slice(1))],
    [
      "holding the key of a Pod it does not list",
      (labels) => ({ ...labels, [memberLabelKey({ namespace: "a", name: "gone" })]: "" }),
    ],
  ])("a group whose index is %s is rewritten with the same members", (_title, edit) => {
    const object = groupObjectFromDesired(desired());
    const labels = edit(object.metadata["labels"] as Record<string, string>);
    const observed = observedGroupFromObject(
      stored({ ...object, metadata: { ...object.metadata, labels: { team: "x", ...labels } } }),
    );
    expect(observed.indexed).toBe(false);
    expect(planEgressGroup({ ...input, existing: observed }).action).toBe("update");
  });

  it("ignores labels that are not the member index", () => {
    const object = groupObjectFromDesired(desired());
    const labels = { ...(object.metadata["labels"] as object), team: "x" };
    const observed = observedGroupFromObject(
      stored({ ...object, metadata: { ...object.metadata, labels } }),
    );
    expect(observed.indexed).toBe(true);
  });

  it.each<[string, unknown]>([
    [
      "members is not a list",
      { metadata: { name: "web", resourceVersion: "5" }, status: { members: "x", memberCount: 1 } },
    ],
    [
      "the kind is wrong",
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "web", resourceVersion: "5" } },
    ],
  ])(
    "reads a hand-edited group where %s as unowned and empty, so it is rewritten",
    (_title, object) => {
      const observed = observedGroupFromObject(object);
      expect(observed).toMatchObject({
        name: "web",
        resourceVersion: "5",
        ownerUid: null,
        content: { memberCount: 0 },
        indexed: false,
      });
      expect(planEgressGroup({ ...input, existing: observed }).action).toBe("update");
    },
  );
});
