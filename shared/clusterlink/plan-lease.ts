/**
 * Pure: target-port leases derived from every Import's spec.targetPort, with no memory between
 * events (docs/adr/0006). Ports live in [1024, 49152) as upstream leases them (reference B.3).
 *
 * Older Imports (creationTimestamp, then uid) take their port first, so every function instance
 * that reads the same Imports decides the same way: of two Imports that hold one port, the older
 * keeps it. The younger moves when the port was one we leased for it; when the user asked for
 * that port, it is a conflict, as a NodePort clash is. A new lease starts at a point derived from
 * the Import's uid, so two instances leasing for one Import pick the same port.
 */
export const PORT_MIN = 1024;
/** Exclusive. */
export const PORT_END = 49152;

export interface LeaseClaim {
  /** "namespace/name". */
  readonly key: string;
  readonly uid: string;
  readonly creationTimestamp: string;
  /** spec.targetPort; 0 when unset. */
  readonly targetPort: number;
  /** Whether targetPort is the port we leased (our annotation says so), not one the user asked for. */
  readonly leasedByUs: boolean;
}

export type LeaseDecision =
  /** The Import holds its targetPort. */
  | { readonly kind: "held"; readonly port: number }
  /** Write this port to spec.targetPort (first lease, or a re-lease after losing a race). */
  | { readonly kind: "lease"; readonly port: number; readonly previous: number }
  /** The port the user asked for is held by an older Import. */
  | { readonly kind: "conflict"; readonly port: number; readonly holder: string }
  | { readonly kind: "outOfRange"; readonly port: number }
  | { readonly kind: "exhausted" };

/** Older first; ties (same second) broken by uid, so every reader orders them alike. */
export function byAge(a: LeaseClaim, b: LeaseClaim): number {
  const t = Date.parse(a.creationTimestamp) - Date.parse(b.creationTimestamp);
  if (t !== 0 && !Number.isNaN(t)) return t;
  return a.uid < b.uid ? -1 : a.uid > b.uid ? 1 : a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/** FNV-1a of the uid: where this Import's search for a free port starts. */
export function leaseStart(uid: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < uid.length; i += 1) {
    hash ^= uid.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return PORT_MIN + (hash % (PORT_END - PORT_MIN));
}

function freePort(start: number, taken: ReadonlyMap<number, string>): number | undefined {
  const size = PORT_END - PORT_MIN;
  for (let i = 0; i < size; i += 1) {
    const port = PORT_MIN + ((start - PORT_MIN + i) % size);
    if (!taken.has(port)) return port;
  }
  return undefined;
}

const inRange = (port: number): boolean => port >= PORT_MIN && port < PORT_END;

/** One decision per claim key. */
export function planLeases(claims: readonly LeaseClaim[]): Map<string, LeaseDecision> {
  const sorted = [...claims].sort(byAge);
  const taken = new Map<number, string>();
  const decisions = new Map<string, LeaseDecision>();
  const toLease: LeaseClaim[] = [];
  for (const claim of sorted) {
    const port = claim.targetPort;
    if (port === 0) toLease.push(claim);
    else if (!inRange(port)) {
      if (claim.leasedByUs) toLease.push(claim);
      else decisions.set(claim.key, { kind: "outOfRange", port });
    } else if (!taken.has(port)) {
      taken.set(port, claim.key);
      decisions.set(claim.key, { kind: "held", port });
    } else if (claim.leasedByUs) toLease.push(claim);
    else decisions.set(claim.key, { kind: "conflict", port, holder: taken.get(port) ?? "" });
  }
  for (const claim of toLease) {
    const port = freePort(leaseStart(claim.uid), taken);
    if (port === undefined) {
      decisions.set(claim.key, { kind: "exhausted" });
      continue;
    }
    taken.set(port, claim.key);
    decisions.set(claim.key, { kind: "lease", port, previous: claim.targetPort });
  }
  return decisions;
}

/** Upstream's message for a decision that leaves the Import without a port, else null. */
export function leaseProblem(decision: LeaseDecision): string | null {
  switch (decision.kind) {
    case "conflict":
      return `cannot generate listening port: port ${decision.port} is already in use by service ${decision.holder}`;
    case "outOfRange":
      return `cannot generate listening port: port ${decision.port} is outside [${PORT_MIN}, ${PORT_END})`;
    case "exhausted":
      return "cannot generate listening port: all ports are taken";
    default:
      return null;
  }
}
