import type { GroupMember } from "../../../shared/egress/membership.js";
import {
  API_SERVER_OBJECT_LIMIT_BYTES,
  DEFAULT_GROUP_LIMITS,
  estimatedMembersBytes,
  groupSizeProblem,
  serializedMembersBytes,
} from "../../../shared/egress/size.js";

/** A typical Deployment Pod on a cloud node, dual-stack. */
const realistic = (i: number): GroupMember => ({
  pod: {
    name: `frontend-7c9d8f6b5d-${i.toString(36).padStart(5, "x")}`,
    namespace: "team-payments-prod",
  },
  nodeName: "ip-10-0-123-45.eu-west-1.compute.internal",
  ips: ["10.244.123.45", "fd00:10:244:7b::2d"],
});

/** Every name at its maximum length, two maximal IPv6 texts. */
const worstCase = (i: number): GroupMember => ({
  pod: { name: `${i}`.padStart(253, "p"), namespace: "n".repeat(63) },
  nodeName: "x".repeat(253),
  ips: ["ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255", "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"],
});

/** Bytes one more member adds to the JSON array (its text plus a comma). */
const bytesPerMember = (make: (i: number) => GroupMember): number =>
  serializedMembersBytes([make(0), make(1)]) - serializedMembersBytes([make(0)]);

describe("EgressGroup size budget (measured)", () => {
  it.each<[string, (i: number) => GroupMember, number]>([
    ["a realistic dual-stack member costs 178 bytes", realistic, 178],
    ["a worst-case member costs 716 bytes", worstCase, 716],
  ])("%s", (_title, make, bytes) => {
    expect(bytesPerMember(make)).toBe(bytes);
  });

  it("the largest supported group of realistic members stays under 60% of the API server limit", () => {
    const members = Array.from({ length: DEFAULT_GROUP_LIMITS.maxMembers }, (_, i) => realistic(i));
    const bytes = serializedMembersBytes(members);
    expect(groupSizeProblem(members, DEFAULT_GROUP_LIMITS)).toBeNull();
    expect(bytes).toBeLessThan(0.6 * API_SERVER_OBJECT_LIMIT_BYTES);
    expect(DEFAULT_GROUP_LIMITS.maxMemberBytes).toBeLessThan(API_SERVER_OBJECT_LIMIT_BYTES * 0.7);
  });

  it.each<[string, number, (i: number) => GroupMember, RegExp | null]>([
    ["5,000 realistic members -> fits", 5_000, realistic, null],
    [
      "5,001 realistic members -> too many members",
      5_001,
      realistic,
      /5001 Pods; an EgressGroup holds at most 5000 members/,
    ],
    ["1,400 worst-case members -> fits the byte budget", 1_400, worstCase, null],
    [
      "1,500 worst-case members -> over the byte budget",
      1_500,
      worstCase,
      /needs \d+ bytes; an EgressGroup holds at most 1048576 bytes/,
    ],
  ])("%s", (_title, count, make, problem) => {
    const members = Array.from({ length: count }, (_, i) => make(i));
    const found = groupSizeProblem(members, DEFAULT_GROUP_LIMITS);
    if (problem === null) expect(found).toBeNull();
    else expect(found).toMatch(problem);
  });
});

describe("the size estimate that spares serialising every group", () => {
  const noIp: GroupMember = { pod: { name: "p", namespace: "n" }, nodeName: "node", ips: [] };
  it.each<[string, GroupMember[]]>([
    ["no members", []],
    ["one member without IPs", [noIp]],
    ["one realistic member", [realistic(1)]],
    ["100 realistic members", Array.from({ length: 100 }, (_, i) => realistic(i))],
    ["worst-case and no-IP members mixed", [worstCase(1), noIp, worstCase(2)]],
  ])("equals the JSON length for %s", (_title, members) => {
    expect(estimatedMembersBytes(members)).toBe(serializedMembersBytes(members));
  });
});
