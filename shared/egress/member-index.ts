/**
 * The index that lets a Pod event read only the groups it must change: labels on each EgressGroup
 * (its name's hash, and per member `m-<hash>` = a digest of its entry) that two label selectors
 * query. Written in the same object as the members; a mismatch is rewritten by the next
 * recompute. ~45 bytes per member. The selectors: docs/code-notes.md (egress/member-index.ts).
 */
import { cyrb53 } from "../core/cyrb53.js";
import type { GroupMember, PodKey } from "./membership.js";

const MEMBER_LABEL_PREFIX = "sdewan.akraino.org/m-";
/** The label naming the group (by hash: names may be longer than a label value may be). */
export const GROUP_LABEL = "sdewan.akraino.org/group";

/**
 * 48 bits of cyrb53 as 12 hex digits: stable (the labels are stored), fast, well spread; not
 * cryptographic, which it need not be (a collision costs one extra group read).
 */
function hash48(text: string): string {
  const { high, low } = cyrb53(text);
  // Integer-to-hex of 32-bit values: several times faster than a 53-bit number's toString.
  return (high & 0xffff).toString(16).padStart(4, "0") + low.toString(16).padStart(8, "0");
}

/** The label key that says "this group lists `pod`" (a valid label key: hex digits only). */
export function memberLabelKey(pod: PodKey): string {
  return `${MEMBER_LABEL_PREFIX}${hash48(`${pod.namespace}/${pod.name}`)}`;
}

export const isMemberLabelKey = (key: string): boolean => key.startsWith(MEMBER_LABEL_PREFIX);

/** The value of GROUP_LABEL for a group. */
export const groupLabelValue = (name: string): string => hash48(name);

/** The value of a member's label: changes when its node or IPs do. */
export const memberEntryDigest = (member: GroupMember): string =>
  hash48(`${member.nodeName}/${member.ips.join(",")}`);

/** The index labels of a group with these members. */
export function memberIndexLabels(
  name: string,
  members: readonly GroupMember[],
): Record<string, string> {
  const labels: Record<string, string> = { [GROUP_LABEL]: groupLabelValue(name) };
  for (const member of members) labels[memberLabelKey(member.pod)] = memberEntryDigest(member);
  return labels;
}

/** Whether `labels` hold exactly the index of the group (labels of others are ignored). */
export function memberIndexMatches(
  labels: Readonly<Record<string, string>>,
  name: string,
  members: readonly GroupMember[],
): boolean {
  const expected = memberIndexLabels(name, members);
  let present = 0;
  for (const [key, value] of Object.entries(labels)) {
    if (!isMemberLabelKey(key) && key !== GROUP_LABEL) continue;
    if (expected[key] !== value) return false;
    present += 1;
  }
  return present === Object.keys(expected).length;
}

export interface PodEventSelectors {
  /** Groups that list the Pod but whose Egress does not select it (now). */
  readonly listedElsewhere: string;
  /** Selecting groups that do not list the Pod, or list an old entry; null when none selects it. */
  readonly missingOrStale: string | null;
}

/** The two label selectors that find the groups a Pod event must change (see the header). */
export function podEventSelectors(
  pod: PodKey,
  member: GroupMember | null,
  selecting: readonly string[],
): PodEventSelectors {
  const key = memberLabelKey(pod);
  if (member === null || selecting.length === 0) {
    return { listedElsewhere: key, missingOrStale: null };
  }
  const groups = [...new Set(selecting.map(groupLabelValue))].join(",");
  return {
    listedElsewhere: `${key},${GROUP_LABEL} notin (${groups})`,
    missingOrStale: `${GROUP_LABEL} in (${groups}),${key}!=${memberEntryDigest(member)}`,
  };
}
