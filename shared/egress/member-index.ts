/**
 * The index that lets a Pod event find the groups listing a Pod without reading every group: each
 * EgressGroup carries one label per member, `sdewan.akraino.org/m-<hash of namespace/name>`, so
 * `labelSelector=<that key>` lists exactly the groups that list the Pod (a hash collision only adds
 * a group, which the caller checks against its members). The labels are written in the same
 * object as the members, so they can never disagree with them; a group whose labels do not match
 * its members (written by an older version, or edited) is rewritten by the next recompute.
 *
 * Cost: ~80 bytes per member (the label and its managedFields entry); a 5,000-member group stays
 * below the API server's object limit (test/integration/egress-scale.test.ts).
 */
import type { GroupMember, PodKey } from "./membership.js";

const MEMBER_LABEL_PREFIX = "sdewan.akraino.org/m-";

/**
 * cyrb53, a 53-bit string hash: stable (the labels are stored), fast, and well spread; not
 * cryptographic, which it need not be (a collision costs one extra group read).
 */
function hash53(text: string): number {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ code, 2654435761);
    h2 = Math.imul(h2 ^ code, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return 4294967296 * (2097151 & h2) + (h1 >>> 0);
}

/** The label key that says "this group lists `pod`" (a valid label key: base-36 digits only). */
export function memberLabelKey(pod: PodKey): string {
  return `${MEMBER_LABEL_PREFIX}${hash53(`${pod.namespace}/${pod.name}`).toString(36)}`;
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
