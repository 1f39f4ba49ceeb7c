/**
 * One Import event without listing every Import: the Imports that could contest a port are those
 * whose spec.targetPort is that port, one fieldSelector list away. plan-lease.ts decides over that
 * subset exactly as over the whole set (the oldest holder keeps it). Write, then look again: after
 * a lease the new port's holders are listed, so of two racing instances the later one moves the
 * younger Import. Details: docs/code-notes.md (clusterlink/lease-by-port.ts).
 */
import type { KubeObject } from "../kube/index.js";
import {
  findServices,
  keyOf,
  leaseClaimOf,
  peerNamesOf,
  PRESUMED_ABSENT,
  readPeers,
  settleImport,
  type ImportEventOptions,
  type Settled,
} from "./apply-import.js";
import type { ImportKey } from "./names.js";
import { observeImport, type ObservedImport } from "./observed.js";
import {
  leaseStart,
  planLeases,
  PORT_END,
  PORT_MIN,
  type LeaseClaim,
  type LeaseDecision,
} from "./plan-lease.js";
import type { ClusterLinkStore } from "./store.js";

/** Ports probed for a free one before the event gives up and is redelivered. */
const MAX_PROBES = 64;

async function holdersOf(store: ClusterLinkStore, port: number): Promise<ObservedImport[]> {
  const found = await store.listImports({ fieldSelector: `spec.targetPort=${port}` });
  return found.map(observeImport).filter((i) => !i.deleting);
}

const claimsOf = (imports: readonly ObservedImport[]): LeaseClaim[] =>
  imports.map(leaseClaimOf).filter((c): c is LeaseClaim => c !== null);

const nextPort = (port: number): number => (port + 1 >= PORT_END ? PORT_MIN : port + 1);

/** The first port from the Import's start that no Import holds, skipping those it must avoid. */
async function probeFreePort(
  store: ClusterLinkStore,
  imp: ObservedImport,
  avoid: ReadonlySet<number>,
): Promise<number | null> {
  let port = leaseStart(imp.uid);
  for (let i = 0; i < MAX_PROBES; i += 1) {
    if (avoid.has(port)) {
      port = nextPort(port);
      continue;
    }
    const holders = (await holdersOf(store, port)).filter((h) => keyOf(h) !== keyOf(imp));
    if (holders.length === 0) return port;
    port = nextPort(port);
  }
  return null;
}

interface PortDecision {
  readonly decision: LeaseDecision | undefined;
  /** Other Imports that hold the Import's current port: younger ones we leased must move. */
  readonly rivals: readonly ObservedImport[];
}

/**
 * Whether the Import keeps its current targetPort (asked per port: its holders decide), or
 * undefined when it must lease one. `avoid`: ports this event saw a user ask for, which a lease
 * of ours gives up whatever the ages.
 */
async function currentPort(
  store: ClusterLinkStore,
  imp: ObservedImport,
  claim: LeaseClaim,
  avoid: ReadonlySet<number>,
): Promise<PortDecision | undefined> {
  if (claim.targetPort === 0 || (claim.leasedByUs && avoid.has(claim.targetPort))) {
    return undefined;
  }
  if (claim.targetPort < PORT_MIN || claim.targetPort >= PORT_END) {
    const decision = planLeases([claim]).get(claim.key);
    return decision?.kind === "lease" ? undefined : { decision, rivals: [] };
  }
  const rivals = (await holdersOf(store, claim.targetPort)).filter((h) => keyOf(h) !== keyOf(imp));
  const decision = planLeases(claimsOf([imp, ...rivals])).get(claim.key);
  return decision?.kind === "lease" ? { decision: undefined, rivals } : { decision, rivals };
}

/**
 * The Import's lease decision. A first lease (no targetPort yet, nothing to avoid) is its start
 * port, unprobed: the list after the write checks it.
 */
async function decideFor(
  store: ClusterLinkStore,
  imp: ObservedImport,
  avoid: ReadonlySet<number>,
): Promise<PortDecision> {
  const claim = leaseClaimOf(imp);
  if (claim === null) return { decision: undefined, rivals: [] };
  if (claim.targetPort === 0 && avoid.size === 0) {
    return { decision: { kind: "lease", port: leaseStart(imp.uid), previous: 0 }, rivals: [] };
  }
  const current = await currentPort(store, imp, claim, avoid);
  if (current?.decision !== undefined) return current;
  const port = await probeFreePort(store, imp, avoid);
  const decision: LeaseDecision =
    port === null ? { kind: "exhausted" } : { kind: "lease", port, previous: claim.targetPort };
  return { decision, rivals: current?.rivals ?? [] };
}

/** Younger Imports that hold `port` with a lease of ours: they lost it and must move. */
function losersOn(holders: readonly ObservedImport[]): ImportKey[] {
  const decisions = planLeases(claimsOf(holders));
  return holders.filter((h) => decisions.get(keyOf(h))?.kind === "lease");
}

/** Other holders of a port just leased to `imp` that asked for it themselves (no lease of ours). */
function requestersOf(holders: readonly ObservedImport[], imp: ObservedImport): ImportKey[] {
  return claimsOf(holders)
    .filter((c) => c.key !== keyOf(imp) && !c.leasedByUs)
    .flatMap((c) => holders.filter((h) => keyOf(h) === c.key));
}

export interface PortSettled {
  readonly own: Settled | null;
  readonly others: readonly Settled[];
}

export interface SettleHow {
  /** The event is about this Import: a problem is answered 422, not only recorded. */
  readonly fromOwnEvent: boolean;
  /** Losers of losers are left to their events and the resync: 0 settles losers, 1 does not. */
  readonly depth?: number;
  /** The Import as the caller just read it, used for the first round instead of a re-read. */
  readonly read?: KubeObject;
}

/** The live Import for this round: the caller's read first, then fresh ones. */
async function importFor(
  store: ClusterLinkStore,
  key: ImportKey,
  round: number,
  read: KubeObject | undefined,
): Promise<ObservedImport | undefined> {
  const object = round === 0 && read !== undefined ? read : await store.getImport(key);
  const imp = object === undefined ? undefined : observeImport(object);
  return imp === undefined || imp.deleting ? undefined : imp;
}

/** What the holders of the Import's port, listed after its settle, say about its lease. */
type Verdict =
  | { readonly kind: "kept"; readonly losers: readonly ImportKey[] }
  /** Lost to an older Import (a race of leases): lease again. */
  | { readonly kind: "lost" }
  /** Leased a port a user asked for: lease again elsewhere, then re-check those users. */
  | { readonly kind: "yield"; readonly port: number; readonly requesters: readonly ImportKey[] };

async function verdictOn(
  store: ClusterLinkStore,
  imp: ObservedImport,
  { decision, rivals }: PortDecision,
): Promise<Verdict> {
  if (decision?.kind !== "lease") return { kind: "kept", losers: losersOn([imp, ...rivals]) };
  const contested = await holdersOf(store, decision.port);
  const requesters = requestersOf(contested, imp);
  if (requesters.length > 0) return { kind: "yield", port: decision.port, requesters };
  const losers = losersOn(contested);
  return losers.some((l) => keyOf(l) === keyOf(imp)) ? { kind: "lost" } : { kind: "kept", losers };
}

/** An Import never leased made no Services: they are created unread (apply-import.ts). */
const neverLeased = (imp: ObservedImport): boolean =>
  imp.spec.ok && (imp.spec.value.targetPort ?? 0) === 0;

/**
 * Settles one Import (re-read live) by its port alone, and the Imports that lost a port to it.
 * Its Services and its sources' Peers are read together with its port's holders: none depends
 * on the others, and an event's latency is its chain of round trips.
 */
export async function settleByPort(
  store: ClusterLinkStore,
  key: ImportKey,
  options: ImportEventOptions,
  how: SettleHow,
): Promise<PortSettled> {
  const maxRounds = options.maxRounds ?? 5;
  const avoid = new Set<number>();
  const yieldedTo: ImportKey[] = [];
  for (let round = 0; round < maxRounds; round += 1) {
    const imp = await importFor(store, key, round, how.read);
    if (imp === undefined) return { own: null, others: [] };
    const [decided, found, peers] = await Promise.all([
      decideFor(store, imp, avoid),
      neverLeased(imp) ? PRESUMED_ABSENT : findServices(store, imp, options.clNamespace),
      readPeers(store, peerNamesOf(imp), options.clNamespace),
    ]);
    const own = await settleImport(store, imp, decided.decision, options, {
      fromOwnEvent: how.fromOwnEvent,
      found,
      peers,
    });
    const verdict = await verdictOn(store, imp, decided);
    if (verdict.kind === "yield") {
      avoid.add(verdict.port);
      yieldedTo.push(...verdict.requesters);
    }
    if (verdict.kind !== "kept") continue;
    const others =
      (how.depth ?? 0) === 0
        ? await settleLosers(store, [...verdict.losers, ...yieldedTo], options)
        : [];
    return { own, others };
  }
  throw new LeaseRaceError(`Import ${keyOf(key)}: leases still moving after ${maxRounds} rounds`);
}

/** The Imports that lost a port to this one, each settled by its own port (one level deep). */
async function settleLosers(
  store: ClusterLinkStore,
  losers: readonly ImportKey[],
  options: ImportEventOptions,
): Promise<Settled[]> {
  const settled: Settled[] = [];
  for (const loser of losers) {
    const result = await settleByPort(store, loser, options, { fromOwnEvent: false, depth: 1 });
    if (result.own !== null) settled.push(result.own);
  }
  return settled;
}

export class LeaseRaceError extends Error {
  override readonly name = "LeaseRaceError";
}
