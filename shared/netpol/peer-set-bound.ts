/**
 * How big one NetworkPolicyPeerSet may be: at most DEFAULT_MAX_PEER_SET_BYTES (1.25 MiB, ~14,000
 * members of one group; NETPOL_PEER_SET_MAX_BYTES overrides), below etcd's request limit. Above
 * it the peer set is stored failing closed (groups emptied, a PeerSetTooLarge problem), never
 * truncated. Pure. The measurements and the reasoning: docs/code-notes.md
 * (netpol/peer-set-bound.ts).
 */
import type { NetpolProblem } from "../kinds/netpol.js";
import type { DesiredPeerSet } from "./plan-tables.js";
import { desiredPeerSetTable, tableBytes, tableFits } from "./table-objects.js";

/** Bytes of JSON one peer set may take: 1.25 MiB of etcd's 1.5 MiB. */
export const DEFAULT_MAX_PEER_SET_BYTES = 1_310_720;

export const PEER_SET_TOO_LARGE = "PeerSetTooLarge";

/** Problems listed on a peer set that does not fit (each endpoint failing closed adds one). */
const LISTED_PROBLEMS = 20;

const isTooLarge = (p: NetpolProblem): boolean => p.reason === PEER_SET_TOO_LARGE;

/** Whether a peer set's problems say it was stored failing closed for its size. */
export const peerSetTooLarge = (problems: readonly NetpolProblem[] | undefined): boolean =>
  (problems ?? []).some(isTooLarge);

function listed(problems: readonly NetpolProblem[]): NetpolProblem[] {
  if (problems.length <= LISTED_PROBLEMS) return [...problems];
  const more = problems.length - LISTED_PROBLEMS;
  return [
    ...problems.slice(0, LISTED_PROBLEMS),
    { reason: "MoreProblems", message: `and ${more} more problems, not listed` },
  ];
}

/** A member-index label as JSON at its longest: a 52-character key, a 63-character value. */
const MEMBER_LABEL_BYTES = 128;
/** Everything else a peer set holds besides groups, labels and problems, at most. */
const OTHER_BYTES = 4_096;

/**
 * At least the bytes of the peer set's object, without rendering it: what settles the common
 * case (far below the bound) cheaply, so the compiler renders a peer set only near its bound.
 */
export function peerSetBytesAtMost(desired: DesiredPeerSet): number {
  let bytes = OTHER_BYTES + Buffer.byteLength(JSON.stringify(desired.problems));
  bytes += desired.members.size * MEMBER_LABEL_BYTES;
  for (const group of desired.spec.groups) {
    bytes += group.name.length + 32;
    for (const address of group.addresses) bytes += address.length + 3;
  }
  return bytes;
}

/** The peer set as compiled when it fits in `maxBytes`, else stored failing closed (above). */
export function boundPeerSet(desired: DesiredPeerSet, maxBytes: number): DesiredPeerSet {
  if (peerSetBytesAtMost(desired) <= maxBytes) return desired;
  const table = desiredPeerSetTable(desired);
  if (tableFits(table, maxBytes)) return desired;
  const bytes = tableBytes(table);
  const tooLarge: NetpolProblem = {
    reason: PEER_SET_TOO_LARGE,
    message:
      `${desired.members.size} Pods selected by labels need ${bytes} bytes in this peer set; at ` +
      `most ${maxBytes} are stored: the policy's label-selected peers are denied until they fit ` +
      "(fewer Pods selected, more policies with narrower peers, or NETPOL_PEER_SET_MAX_BYTES)",
  };
  return {
    ...desired,
    spec: { groups: desired.spec.groups.map((g) => ({ name: g.name, addresses: [] })) },
    problems: [tooLarge, ...listed(desired.problems.filter((p) => !isTooLarge(p)))],
    members: new Map(),
  };
}
