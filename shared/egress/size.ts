/**
 * How big one EgressGroup may grow. The API server refuses objects above etcd's request limit
 * (--max-request-bytes, 1.5 MiB by default); a group is one object, so its members must stay well
 * below that, leaving room for metadata and conditions.
 *
 * Measured (test/unit/egress/size.test.ts): a realistic dual-stack member
 *   {"pod":{"name":"frontend-7c9d8f6b5d-x2k4p","namespace":"team-payments-prod"},
 *    "nodeName":"ip-10-0-123-45.eu-west-1.compute.internal","ips":["10.244.123.45","fd00:10:244:7b::2d"]}
 * serialises to 178 bytes with its separating comma; a member with every name at its maximum
 * length and two IPv6 addresses to 716 bytes.
 *
 * Budget: at most 5,000 members AND at most 1 MiB of serialised members per group. 5,000 realistic
 * members are ~0.87 MiB (~57% of the limit; ~86% stored with their member index labels and
 * managedFields, member-index.ts). The byte budget catches groups of unusually long names
 * (worst case ~1,460 members). Above either budget the group is not truncated: the plan reports
 * TooManyMembers and keeps the last members that fitted.
 */
import type { GroupMember } from "./membership.js";

/** etcd's default --max-request-bytes, which bounds every object the API server stores. */
export const API_SERVER_OBJECT_LIMIT_BYTES = 1_572_864;

export interface GroupLimits {
  readonly maxMembers: number;
  readonly maxMemberBytes: number;
}

export const DEFAULT_GROUP_LIMITS: GroupLimits = { maxMembers: 5_000, maxMemberBytes: 1_048_576 };

/** Bytes of the members array as JSON, as it is sent to and stored by the API server. */
export function serializedMembersBytes(members: readonly GroupMember[]): number {
  return Buffer.byteLength(JSON.stringify(members), "utf8");
}

/**
 * The length of a member as JSON when no character needs escaping, as in valid Kubernetes names
 * and IP texts: {"pod":{"name":"","namespace":""},"nodeName":"","ips":[]} is 57 characters, each
 * IP adds itself, its quotes and a separating comma.
 */
function unescapedMemberLength(member: GroupMember): number {
  const ips = member.ips.reduce((sum, ip) => sum + ip.length + 3, member.ips.length > 0 ? -1 : 0);
  return 57 + member.pod.name.length + member.pod.namespace.length + member.nodeName.length + ips;
}

/** serializedMembersBytes without serialising: exact when no character needs escaping. */
export function estimatedMembersBytes(members: readonly GroupMember[]): number {
  // "[" + members joined by "," + "]"
  return (
    members.reduce((sum, m) => sum + unescapedMemberLength(m) + 1, 1) +
    (members.length === 0 ? 1 : 0)
  );
}

/** Why a member list exceeds the limits (a sentence with the count and the limit), or null. */
export function groupSizeProblem(
  members: readonly GroupMember[],
  limits: GroupLimits,
): string | null {
  if (members.length > limits.maxMembers) {
    return `the Egress selects ${members.length} Pods; an EgressGroup holds at most ${limits.maxMembers} members`;
  }
  // Serialising every group is the costliest step of a full recompute: the estimate settles the
  // common case, far below the budget; the exact byte count decides near it.
  if (estimatedMembersBytes(members) < limits.maxMemberBytes / 2) return null;
  const bytes = serializedMembersBytes(members);
  if (bytes > limits.maxMemberBytes) {
    return `the Egress selects ${members.length} Pods whose member list needs ${bytes} bytes; an EgressGroup holds at most ${limits.maxMemberBytes} bytes of members`;
  }
  return null;
}
