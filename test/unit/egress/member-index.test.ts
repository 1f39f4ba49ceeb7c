import {
  GROUP_LABEL,
  groupLabelValue,
  isMemberLabelKey,
  memberEntryDigest,
  podEventSelectors,
  memberIndexLabels,
  memberIndexMatches,
  memberLabelKey,
} from "../../../shared/egress/member-index.js";
import type { GroupMember } from "../../../shared/egress/membership.js";

const member = (namespace: string, name: string): GroupMember => ({
  pod: { namespace, name },
  nodeName: "node-1",
  ips: [],
});

// A label key: DNS prefix, "/", then a name of at most 63 alphanumerics, '-', '_', '.'.
const LABEL_KEY = /^[a-z0-9.-]{1,253}\/[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

describe("member index labels", () => {
  it("gives every Pod a stable, valid label key under our prefix", () => {
    const key = memberLabelKey({ namespace: "team-a", name: "web-1" });
    expect(key).toMatch(LABEL_KEY);
    expect(isMemberLabelKey(key)).toBe(true);
    // Stored in the API server: the hash must never change between versions.
    expect(key).toBe("sdewan.akraino.org/m-251f3f9222dc");
  });

  it.each([
    ["the same name in another Namespace", { namespace: "team-b", name: "web-1" }],
    ["names that concatenate alike", { namespace: "team-aw", name: "eb-1" }],
    ["a longest name", { namespace: "n".repeat(63), name: "p".repeat(253) }],
  ])("keys %s apart", (_title, pod) => {
    expect(memberLabelKey(pod)).toMatch(LABEL_KEY);
    expect(memberLabelKey(pod)).not.toBe(memberLabelKey({ namespace: "team-a", name: "web-1" }));
  });

  it("has no collision among 100,000 Pods", () => {
    const keys = new Set<string>();
    for (let i = 0; i < 100_000; i += 1)
      keys.add(memberLabelKey({ namespace: `ns-${i % 500}`, name: `p-${i}` }));
    expect(keys.size).toBe(100_000);
  });

  it("matches labels holding exactly the group's index, whatever else is there", () => {
    const members = [member("a", "1"), member("b", "2")];
    const labels: Record<string, string> = { ...memberIndexLabels("g", members), team: "x" };
    expect(labels[GROUP_LABEL]).toBe(groupLabelValue("g"));
    expect(memberIndexMatches(labels, "g", members)).toBe(true);
    expect(memberIndexMatches(labels, "g", members.slice(1))).toBe(false);
    expect(memberIndexMatches(labels, "other", members)).toBe(false);
    expect(memberIndexMatches({ team: "x" }, "g", members)).toBe(false);
    const moved = [{ ...member("a", "1"), nodeName: "node-2" }, member("b", "2")];
    expect(memberIndexMatches(labels, "g", moved)).toBe(false);
  });

  it("gives a member's label a value that changes with its node or IPs", () => {
    const m = member("a", "1");
    expect(memberEntryDigest(m)).toMatch(/^[0-9a-f]{12}$/);
    expect(memberEntryDigest({ ...m, ips: ["10.0.0.9"] })).not.toBe(memberEntryDigest(m));
    expect(memberEntryDigest({ ...m, nodeName: "node-2" })).not.toBe(memberEntryDigest(m));
  });
});

describe("podEventSelectors: the two lists a Pod event reads", () => {
  const pod = { namespace: "a", name: "1" };
  const key = memberLabelKey(pod);

  it("a Pod no Egress selects: only the groups that list it", () => {
    expect(podEventSelectors(pod, null, [])).toEqual({
      listedElsewhere: key,
      missingOrStale: null,
    });
  });

  it("a selected Pod: groups listing it outside the selecting ones, and selecting ones without its entry", () => {
    const m = member("a", "1");
    const [g1, g2] = [groupLabelValue("g1"), groupLabelValue("g2")];
    expect(podEventSelectors(pod, m, ["g1", "g2"])).toEqual({
      listedElsewhere: `${key},${GROUP_LABEL} notin (${g1},${g2})`,
      missingOrStale: `${GROUP_LABEL} in (${g1},${g2}),${key}!=${memberEntryDigest(m)}`,
    });
  });
});
