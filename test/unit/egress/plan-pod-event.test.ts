import type { PodSnapshot } from "../../../shared/egress/membership.js";
import {
  planEgressGroup,
  type EgressSnapshot,
  type ObservedEgressGroup,
} from "../../../shared/egress/plan-group.js";
import {
  newerThanView,
  planMemberChange,
  planPodSelection,
  planPodTouches,
  withMember,
  type PodEventObservation,
} from "../../../shared/egress/plan-pod-event.js";
import { egress, namespaces, pod } from "./fixtures.js";

const T0 = "2030-01-01T00:00:00Z";
const T1 = "2030-01-01T00:05:00Z";

const webEverywhere = egress("web-everywhere", { podSelector: { matchLabels: { app: "web" } } });
const prodAll = egress("prod-all", { namespaceSelector: { matchLabels: { env: "prod" } } });
const allNamespaces = egress("all-namespaces", { namespaceSelector: {} });
const dbOnly = egress("db-only", { podSelector: { matchLabels: { app: "db" } } });
const broken = egress("broken", {
  podSelector: { matchExpressions: [{ key: "app", operator: "Bogus" }] },
});
const egresses = [webEverywhere, prodAll, allNamespaces, dbOnly, broken];
const cluster = namespaces({ prod: { env: "prod" }, dev: { env: "dev" } });

/** The group a full recompute writes for `egress` over `pods`, as read back. */
function group(egressOf: EgressSnapshot, pods: PodSnapshot[]): ObservedEgressGroup {
  const plan = planEgressGroup({
    name: egressOf.name,
    egress: egressOf,
    pods,
    namespaces: cluster,
    existing: null,
    now: T0,
  });
  if (plan.desired === null) throw new Error("expected a group");
  const { content, conditions, ownerReference } = plan.desired;
  return {
    name: plan.name,
    resourceVersion: "1",
    ownerUid: ownerReference.uid,
    content,
    conditions,
    indexed: true,
  };
}

function observation(
  live: PodSnapshot | null,
  key = { namespace: "prod", name: "w" },
): PodEventObservation {
  return { key, pod: live, namespaces: cluster, egresses };
}

/** planPodTouches over what the index selectors returned (`found`). */
const touches = (observed: PodEventObservation, found: ObservedEgressGroup[] = []) =>
  planPodTouches(observed, planPodSelection(observed), found).map((g) => g.name);

describe("planPodSelection / planPodTouches: the groups a Pod event touches", () => {
  const w = pod("prod", "w", { app: "web" });
  it.each<[string, PodEventObservation, ObservedEgressGroup[], string[]]>([
    [
      "new web Pod in prod -> every Egress that now has it as a member",
      observation(w),
      [],
      ["all-namespaces", "prod-all", "web-everywhere"],
    ],
    [
      "web Pod in dev -> not prod-all",
      observation(pod("dev", "w", { app: "web" }), { namespace: "dev", name: "w" }),
      [],
      ["all-namespaces", "web-everywhere"],
    ],
    [
      "relabelled web -> db: the group that lists it and the ones that select it now",
      observation(pod("prod", "w", { app: "db" })),
      [group(webEverywhere, [w])],
      ["all-namespaces", "db-only", "prod-all", "web-everywhere"],
    ],
    [
      "deleted -> only the groups that list it",
      observation(null),
      [group(prodAll, [w, pod("prod", "x")])],
      ["prod-all"],
    ],
    [
      "terminated -> no group selects it, the groups listing it leave it",
      observation(pod("prod", "w", { app: "web" }, { phase: "Succeeded" })),
      [group(webEverywhere, [w])],
      ["web-everywhere"],
    ],
    [
      "a group found by a colliding index key that does not list the Pod -> not touched",
      observation(null),
      [group(dbOnly, [pod("prod", "x", { app: "db" })])],
      [],
    ],
    [
      "unscheduled Pod that nobody lists -> nothing",
      observation(pod("prod", "w", { app: "web" }, { nodeName: "" })),
      [],
      [],
    ],
  ])("%s -> %j", (_title, observed, found, expected) => {
    expect(touches(observed, found)).toEqual(expected);
  });

  it("selection: the selecting Egresses, sorted, and the Pod's entry (none for a Pod nobody selects)", () => {
    expect(planPodSelection(observation(w))).toEqual({
      selecting: ["all-namespaces", "prod-all", "web-everywhere"],
      member: { pod: { namespace: "prod", name: "w" }, nodeName: "node-1", ips: ["10.0.0.1"] },
    });
    expect(planPodSelection(observation(pod("prod", "w", {}, { nodeName: "" })))).toEqual({
      selecting: [],
      member: null,
    });
  });

  it("says why each group is touched", () => {
    const observed = { ...observation(w), egresses: [webEverywhere] };
    expect(
      planPodTouches(observed, planPodSelection(observed), [group(webEverywhere, [w])]),
    ).toEqual([{ name: "web-everywhere", reasons: ["has the pod as a member", "lists the pod"] }]);
  });
});

describe("withMember: one member's entry in a sorted list", () => {
  const m = (namespace: string, name: string, ip = "10.0.0.1") => ({
    pod: { namespace, name },
    nodeName: "node-1",
    ips: [ip],
  });
  const members = [m("a", "1"), m("a", "3"), m("b", "1")];
  it.each<[string, ReturnType<typeof m> | null, { namespace: string; name: string }, string[]]>([
    ["inserted in order", m("a", "2"), { namespace: "a", name: "2" }, ["a/1", "a/2", "a/3", "b/1"]],
    ["inserted last", m("c", "0"), { namespace: "c", name: "0" }, ["a/1", "a/3", "b/1", "c/0"]],
    ["removed", null, { namespace: "a", name: "3" }, ["a/1", "b/1"]],
    [
      "replaced (new IP)",
      m("b", "1", "10.9.9.9"),
      { namespace: "b", name: "1" },
      ["a/1", "a/3", "b/1"],
    ],
  ])("%s", (_title, member, key, expected) => {
    const next = withMember(members, key, member);
    expect(next.map((x) => `${x.pod.namespace}/${x.pod.name}`)).toEqual(expected);
    if (member !== null) expect(next).toContainEqual(member);
  });

  it("returns the same list when nothing changes (removing an absent Pod, an equal entry)", () => {
    expect(withMember(members, { namespace: "a", name: "2" }, null)).toBe(members);
    expect(withMember(members, { namespace: "a", name: "1" }, m("a", "1"))).toBe(members);
  });
});

describe("planMemberChange: one group changed by one Pod, exactly as a full recompute would", () => {
  const others = [pod("dev", "a", { app: "web" }), pod("prod", "z", { app: "web" })];
  const change = (
    live: PodSnapshot | null,
    existing: ObservedEgressGroup | null,
    egressOf: EgressSnapshot | null = webEverywhere,
  ) =>
    planMemberChange({
      name: "web-everywhere",
      egress: egressOf,
      existing,
      observed: observation(live),
      now: T1,
    });

  it.each<[string, PodSnapshot | null, PodSnapshot[]]>([
    ["a new member", pod("prod", "w", { app: "web" }), others],
    [
      "a relabelled-away member",
      pod("prod", "w", { app: "db" }),
      [...others, pod("prod", "w", { app: "web" })],
    ],
    ["a deleted member", null, [...others, pod("prod", "w", { app: "web" })]],
    [
      "a member with a new IP",
      pod("prod", "w", { app: "web" }, { ips: ["10.7.7.7"] }),
      [...others, pod("prod", "w", { app: "web" })],
    ],
  ])("%s: the same desired group as a recompute over the live Pods", (_title, live, before) => {
    const existing = group(webEverywhere, before);
    const after = [...others, ...(live === null ? [] : [live])];
    const recompute = planEgressGroup({
      name: "web-everywhere",
      egress: webEverywhere,
      pods: after,
      namespaces: cluster,
      existing,
      now: T1,
    });
    expect(recompute.action).toBe("update");
    expect(change(live, existing)).toEqual({ kind: "plan", plan: recompute });
  });

  it("an unchanged member plans no write", () => {
    const live = pod("prod", "w", { app: "web" });
    expect(change(live, group(webEverywhere, [...others, live]))).toMatchObject({
      kind: "plan",
      plan: { action: "unchanged" },
    });
  });

  it("the Egress is gone -> the group is deleted", () => {
    const existing = group(webEverywhere, others);
    expect(change(null, existing, null)).toMatchObject({
      kind: "plan",
      plan: { action: "delete" },
    });
  });

  const stalled = (): ObservedEgressGroup => ({
    ...group(webEverywhere, others),
    conditions: [
      {
        type: "Ready",
        status: "False",
        reason: "TooManyMembers",
        message: "m",
        observedGeneration: 1,
        lastTransitionTime: T0,
      },
      {
        type: "Stalled",
        status: "True",
        reason: "TooManyMembers",
        message: "m",
        observedGeneration: 1,
        lastTransitionTime: T0,
      },
    ],
  });
  it.each<[string, () => ObservedEgressGroup | null, EgressSnapshot, string]>([
    ["no group yet", () => null, webEverywhere, "no group yet"],
    ["a Stalled group", stalled, webEverywhere, "group not current"],
    [
      "an Egress edited since (new generation)",
      () => group(webEverywhere, others),
      { ...webEverywhere, generation: 2 },
      "group not current",
    ],
    [
      "a group owned by an earlier Egress of that name",
      () => group(webEverywhere, others),
      { ...webEverywhere, uid: "uid-new" },
      "group not current",
    ],
    [
      "a group without its member index",
      () => ({ ...group(webEverywhere, others), indexed: false }),
      webEverywhere,
      "group not current",
    ],
  ])("%s -> full recompute", (_title, existing, egressOf, reason) => {
    expect(change(pod("prod", "w", { app: "web" }), existing(), egressOf)).toEqual({
      kind: "recompute",
      reason,
    });
  });

  it("a new member that would pass the size budget -> full recompute (which stalls, never truncates)", () => {
    const existing = group(webEverywhere, others);
    const plan = planMemberChange({
      name: "web-everywhere",
      egress: webEverywhere,
      existing,
      observed: observation(pod("prod", "w", { app: "web" })),
      now: T1,
      limits: { maxMembers: 2, maxMemberBytes: 1_000_000 },
    });
    expect(plan).toEqual({ kind: "recompute", reason: "over the size budget" });
  });
});

describe("newerThanView: a group computed from a newer Egress than the one read is never acted on", () => {
  const written = group(egress("web-everywhere", webEverywhere.appliedTo, 2), []);

  it.each([
    ["the same generation", webEverywhere, 1, true, null],
    [
      "an older generation than ours",
      egress("web-everywhere", webEverywhere.appliedTo, 3),
      2,
      true,
      null,
    ],
    ["a newer generation than ours", webEverywhere, 2, false, /generation 2, newer than 1/],
    [
      "another owner, from the watch cache",
      { ...webEverywhere, uid: "uid-new" },
      1,
      true,
      /another Egress/,
    ],
    [
      "another owner, read consistently (the group is older)",
      { ...webEverywhere, uid: "uid-new" },
      1,
      false,
      null,
    ],
  ])("%s", (_title, ours, groupGeneration, cachedView, expected) => {
    const read = groupGeneration === 2 ? written : group(webEverywhere, []);
    const stale = newerThanView(read, ours, cachedView);
    if (expected === null) expect(stale).toBeNull();
    else expect(stale).toMatch(expected);
  });

  it("an Egress missing from the watch cache is re-read consistently; missing from a consistent read, the group goes", () => {
    const read = group(webEverywhere, []);
    expect(newerThanView(read, null, true)).toMatch(/not in the cached view/);
    expect(newerThanView(read, null, false)).toBeNull();
  });
});
