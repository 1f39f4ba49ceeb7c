import { readFileSync } from "node:fs";
import type { PodSnapshot } from "../../../shared/egress/membership.js";
import {
  EGRESS_GROUP_EVENT_REASONS,
  NOTE_MEMBERS_LISTED,
  membersChangedEvent,
  planMembersChange,
} from "../../../shared/egress/plan-events.js";
import {
  planEgressGroup,
  type EgressGroupPlan,
  type ObservedEgressGroup,
} from "../../../shared/egress/plan-group.js";
import { egress, namespaces, pod } from "./fixtures.js";

const T0 = "2030-01-01T00:00:00Z";
const web = egress("web", { podSelector: { matchLabels: { app: "web" } } });
const cluster = namespaces({ a: {}, b: {} });

const plan = (pods: PodSnapshot[], existing: ObservedEgressGroup | null): EgressGroupPlan =>
  planEgressGroup({
    name: "web",
    egress: web,
    pods,
    namespaces: cluster,
    existing,
    now: T0,
  });

/** The group as the API server holds it after `p` was written. */
function written(p: EgressGroupPlan): ObservedEgressGroup {
  if (p.desired === null) throw new Error("nothing written");
  return {
    name: p.name,
    resourceVersion: "1",
    ownerUid: p.desired.ownerReference.uid,
    content: p.desired.content,
    conditions: p.desired.conditions,
    indexed: true,
  };
}

const web1 = pod("a", "web-1", { app: "web" });
const web2 = pod("b", "web-2", { app: "web" });
const web3 = pod("a", "web-3", { app: "web" });

describe("planMembersChange: which group writes are worth a MembersChanged Event", () => {
  it("a new group: every member joined", () => {
    expect(planMembersChange(null, plan([web2, web1], null))).toEqual({
      group: "web",
      joined: ["a/web-1", "b/web-2"],
      left: [],
    });
  });

  it("a Pod joins and another leaves in one write: +1 -1", () => {
    const before = written(plan([web1, web2], null));
    expect(planMembersChange(before, plan([web1, web3], before))).toEqual({
      group: "web",
      joined: ["a/web-3"],
      left: ["b/web-2"],
    });
  });

  it("nothing when the write does not change who is in the group (a redelivery; new IPs; a move)", () => {
    const before = written(plan([web1, web2], null));
    const same = plan([web1, web2], before);
    expect(same.action).toBe("unchanged");
    expect(planMembersChange(before, same)).toBeNull();
    const moved = plan([{ ...web1, ips: ["10.9.9.9"], nodeName: "node-7" }, web2], before);
    expect(moved.action).toBe("update");
    expect(planMembersChange(before, moved)).toBeNull();
  });

  it("nothing for a new group without members, nor for a deleted group", () => {
    expect(planMembersChange(null, plan([], null))).toBeNull();
    const before = written(plan([web1], null));
    const gone = planEgressGroup({
      name: "web",
      egress: null,
      pods: [],
      namespaces: cluster,
      existing: before,
      now: T0,
    });
    expect(gone.action).toBe("delete");
    expect(planMembersChange(before, gone)).toBeNull();
  });
});

describe("membersChangedEvent: the Event's reason and note", () => {
  it("says +joined -left and names the Pods", () => {
    expect(membersChangedEvent({ group: "web", joined: ["a/web-3"], left: ["b/web-2"] })).toEqual({
      type: "Normal",
      reason: "MembersChanged",
      note: "+1 -1: joined a/web-3; left b/web-2",
    });
    expect(membersChangedEvent({ group: "web", joined: [], left: ["b/web-2"] }).note).toBe(
      "+0 -1: left b/web-2",
    );
  });

  it("the same change gives the same note (so its Event's series counts the repeat)", () => {
    const change = { group: "web", joined: ["a/web-3"], left: [] };
    expect(membersChangedEvent(change)).toEqual(membersChangedEvent({ ...change }));
  });

  it(`names at most ${NOTE_MEMBERS_LISTED} Pods per side, with whole counts`, () => {
    const joined = Array.from({ length: 25 }, (_, i) => `a/p-${String(i).padStart(2, "0")}`);
    const { note } = membersChangedEvent({ group: "web", joined, left: [] });
    expect(note.startsWith("+25 -0: joined a/p-00, ")).toBe(true);
    expect(note).toContain("a/p-09 and 15 more");
    expect(note).not.toContain("a/p-10");
  });

  it("docs/events.md lists every EgressGroup reason with its type", () => {
    const doc = readFileSync("docs/events.md", "utf8");
    for (const [reason, { type }] of Object.entries(EGRESS_GROUP_EVENT_REASONS)) {
      expect(doc).toMatch(new RegExp(`\\| \`${reason}\` \\| ${type} \\|`));
    }
  });
});
