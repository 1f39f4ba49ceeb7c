/**
 * The member index of peer sets: labels on each NetworkPolicyPeerSet (its hash, and per listed Pod
 * `m-<hash>` = the Pod's entry) so two label selectors (podEventSelectors) find exactly the peer
 * sets a Pod event changes, without reading every one. Written in the same object as the groups;
 * a mismatch is rewritten by the next full recompute. About 90 bytes per member.
 * The label scheme and the hash choice: docs/code-notes.md (netpol/member-index.ts).
 */
import { cyrb53 } from "../core/cyrb53.js";
import { compareStrings } from "../core/order.js";
import { formatIpv4, parseIpv4 } from "./ipv4.js";

export const NETPOL_LABEL_PREFIX = "netpol.sdewan.akraino.org/";
const MEMBER_LABEL_PREFIX = `${NETPOL_LABEL_PREFIX}m-`;
/** On peer sets: which one it is, for `in`/`notin` selectors (names may outgrow label values). */
export const PEER_SET_LABEL = `${NETPOL_LABEL_PREFIX}peer-set`;

/** On peer sets: the NetworkPolicy metadata.generation their groups were computed from. */
export const POLICY_GENERATION_ANNOTATION = `${NETPOL_LABEL_PREFIX}policy-generation`;

/** A label value holds 63 characters: 5 addresses (44), "_" and a 12-digit digest. */
const MAX_INDEXED_ADDRESSES = 5;
/** The entry of a member with more addresses than a label holds: not known. */
export const UNINDEXED = "unindexed";

/** A Pod's entry in one peer set: group name -> the addresses it put there, sorted. */
export type MemberEntry = ReadonlyMap<string, readonly string[]>;

/** 53 bits of cyrb53 with `seed` as 14 hex digits (two seeds give independent halves). */
function hex53(text: string, seed: number): string {
  const { high, low } = cyrb53(text, seed);
  return (high & 0x1fffff).toString(16).padStart(6, "0") + low.toString(16).padStart(8, "0");
}

/** `digits` (at most 28) hex digits of two independent cyrb53 hashes of `text`. */
const hash = (text: string, digits: number): string =>
  (hex53(text, 0) + hex53(text, 0x9e3779b9)).slice(0, digits);

/** The label key that says "this peer set lists the Pod `<namespace>/<name>`". */
export const memberLabelKey = (podKey: string): string => MEMBER_LABEL_PREFIX + hash(podKey, 24);

export const isMemberLabelKey = (key: string): boolean => key.startsWith(MEMBER_LABEL_PREFIX);

/** The PEER_SET_LABEL value of the peer set `<namespace>/<name>`. */
export const peerSetLabelValue = (peerSetKey: string): string => hash(peerSetKey, 24);

const ENTRY_VALUE = /^([0-9a-f]{8}(?:\.[0-9a-f]{8})*)_[0-9a-f]{12}$/;

/** The label value of a member's entry (non-empty). */
export function memberLabelValue(entry: MemberEntry): string {
  const addresses = [...new Set([...entry.values()].flat())]
    .map((a) => parseIpv4(a) ?? 0)
    .sort((a, b) => a - b);
  if (addresses.length > MAX_INDEXED_ADDRESSES) return UNINDEXED;
  const groups = [...entry].sort(([a], [b]) => compareStrings(a, b));
  const hex = addresses.map((a) => a.toString(16).padStart(8, "0")).join(".");
  return `${hex}_${hash(JSON.stringify(groups), 12)}`;
}

/** The addresses a member label value names; null when unindexed or not ours. */
export function addressesOfMemberLabel(value: string): string[] | null {
  const match = ENTRY_VALUE.exec(value);
  if (match === null) return null;
  return (match[1] ?? "").split(".").map((hex) => formatIpv4(parseInt(hex, 16)));
}

/** The index labels of the peer set `<namespace>/<name>` with these members (Pod key -> entry). */
export function memberIndexLabels(
  peerSetKey: string,
  members: ReadonlyMap<string, MemberEntry>,
): Record<string, string> {
  const labels: Record<string, string> = { [PEER_SET_LABEL]: peerSetLabelValue(peerSetKey) };
  for (const [pod, entry] of members) labels[memberLabelKey(pod)] = memberLabelValue(entry);
  return labels;
}

/** Peer sets per `in (...)` selector: keeps a request's URL short. */
const PER_SELECTOR = 60;

const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) =>
    items.slice(i * size, i * size + size),
  );

/**
 * The label selectors whose union is every peer set whose entry for the Pod must change, given
 * the entries the Pod should have (peer set key -> entry; an absent key: should not list it).
 */
export function podEventSelectors(
  podKey: string,
  wanted: ReadonlyMap<string, MemberEntry>,
): string[] {
  const member = memberLabelKey(podKey);
  const all = [...wanted.keys()].map(peerSetLabelValue).sort(compareStrings);
  const listedElsewhere =
    all.length === 0 ? [member] : [`${member},${PEER_SET_LABEL} notin (${all.join(",")})`];
  const byValue = new Map<string, string[]>();
  for (const [key, entry] of wanted) {
    const value = memberLabelValue(entry);
    byValue.set(value, [...(byValue.get(value) ?? []), peerSetLabelValue(key)]);
  }
  const missingOrStale = [...byValue].flatMap(([value, sets]) =>
    chunks(sets.sort(compareStrings), PER_SELECTOR).map(
      (chunk) => `${PEER_SET_LABEL} in (${chunk.join(",")}),${member}!=${value}`,
    ),
  );
  return [...listedElsewhere, ...missingOrStale];
}
