/**
 * How big one EgressGroup may grow: at most 5,000 members and 1 MiB of serialised members, well
 * below etcd's request limit (1.5 MiB). Above either budget the group is not truncated: the plan
 * reports TooManyMembers and keeps the last members that fitted. The measurements behind the
 * budget: docs/code-notes.md (egress/size.ts), test/unit/egress/size.test.ts.
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
