/**
 * The index that lets a Pod event find the groups listing a Pod without reading every group: each
 * EgressGroup carries one label per member, `sdewan.akraino.org/m-<hash of namespace/name>`, so
 * `labelSelector=<that key>` lists exactly the groups that list the Pod (a hash collision only adds
 * a group, which the caller checks against its members). The labels are written in the same
 * object as the members, so they can never disagree with them; a group whose labels do not match
 * its members (written by an older version, or edited) is rewritten by the next recompute.
 *
 * Cost: ~40 bytes per member (groups are written without managedFields, group-object.ts); a
 * 5,000-member group stays below the API server's object limit (test/integration/egress-scale).
 */
import type { GroupMember, PodKey } from "./membership.js";

const MEMBER_LABEL_PREFIX = "sdewan.akraino.org/m-";

/**
 * 48 bits of cyrb53 as 12 hex digits: stable (the labels are stored), fast, well spread; not
 * cryptographic, which it need not be (a collision costs one extra group read).
 */
function hash48(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  // Integer-to-hex of 32-bit values: several times faster than a 53-bit number's toString.
  const high = (h2 & 0xffff).toString(16).padStart(4, "0");
  return high + (h1 >>> 0).toString(16).padStart(8, "0");
}

/** The label key that says "this group lists `pod`" (a valid label key: hex digits only). */
export function memberLabelKey(pod: PodKey): string {
  return `${MEMBER_LABEL_PREFIX}${hash48(`${pod.namespace}/${pod.name}`)}`;
}

export const isMemberLabelKey = (key: string): boolean => key.startsWith(MEMBER_LABEL_PREFIX);

/** The index labels of a member list (values are empty: only the key is looked up). */
export function memberIndexLabels(members: readonly GroupMember[]): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const member of members) labels[memberLabelKey(member.pod)] = "";
  return labels;
}

/** Whether `labels` hold exactly the index of `members` (other labels are ignored). */
export function memberIndexMatches(
  labels: Readonly<Record<string, string>>,
  members: readonly GroupMember[],
): boolean {
  const expected = new Set(members.map((m) => memberLabelKey(m.pod)));
  let present = 0;
  for (const key of Object.keys(labels)) {
    if (!isMemberLabelKey(key)) continue;
    if (!expected.has(key)) return false;
    present += 1;
  }
  return present === expected.size;
}
