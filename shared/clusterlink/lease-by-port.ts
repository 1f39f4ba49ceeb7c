/**
 * One Import event without listing every Import: the Imports that could contest a port are
 * exactly those whose spec.targetPort is that port, one fieldSelector list away (the Import CRD
 * makes .spec.targetPort selectable). The decisions are plan-lease.ts's, made over that subset,
 * which decides a port exactly as the whole set would: the oldest holder keeps it.
 *
 * Write, then look again: after a lease, the holders of the new port are listed once more, so
 * of two instances that leased one port in the same instant the later one sees both, and moves
 * the younger Import (whichever Import its event was about).
 */
import type { KubeClient, KubeObject } from "../kube/index.js";
import {
  findServices,
  IMPORTS,
  keyOf,
  leaseClaimOf,
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

/** Ports probed for a free one before the event gives up and is redelivered. */
const MAX_PROBES = 64;

async function holdersOf(kube: KubeClient, port: number): Promise<ObservedImport[]> {
  const found = await kube.list(IMPORTS, { fieldSelector: `spec.targetPort=${port}` });
  return found.map(observeImport).filter((i) => !i.deleting);
}

const claimsOf = (imports: readonly ObservedImport[]): LeaseClaim[] =>
  imports.map(leaseClaimOf).filter((c): c is LeaseClaim => c !== null);

const nextPort = (port: number): number => (port + 1 >= PORT_END ? PORT_MIN : port + 1);

/** The first port from the Import's start that no Import holds. */
async function probeFreePort(kube: KubeClient, imp: ObservedImport): Promise<number | null> {
  let port = leaseStart(imp.uid);
  for (let i = 0; i < MAX_PROBES; i += 1) {
    const holders = (await holdersOf(kube, port)).filter((h) => keyOf(h) !== keyOf(imp));
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

async function decideFor(kube: KubeClient, imp: ObservedImport): Promise<PortDecision> {
  const claim = leaseClaimOf(imp);
  if (claim === null) return { decision: undefined, rivals: [] };
  let rivals: ObservedImport[] = [];
  if (claim.targetPort >= PORT_MIN && claim.targetPort < PORT_END) {
    const holders = await holdersOf(kube, claim.targetPort);
    rivals = holders.filter((h) => keyOf(h) !== keyOf(imp));
    const decision = planLeases(claimsOf([imp, ...rivals])).get(claim.key);
    if (decision?.kind !== "lease") return { decision, rivals };
  } else if (claim.targetPort !== 0) {
    const decision = planLeases([claim]).get(claim.key);
    if (decision?.kind !== "lease") return { decision, rivals };
  }
  const port = await probeFreePort(kube, imp);
  const decision: LeaseDecision =
    port === null ? { kind: "exhausted" } : { kind: "lease", port, previous: claim.targetPort };
  return { decision, rivals };
}

/** Younger Imports that hold `port` with a lease of ours: they lost it and must move. */
function losersOn(holders: readonly ObservedImport[]): ImportKey[] {
  const decisions = planLeases(claimsOf(holders));
  return holders.filter((h) => decisions.get(keyOf(h))?.kind === "lease");
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
  kube: KubeClient,
  key: ImportKey,
  round: number,
  read: KubeObject | undefined,
): Promise<ObservedImport | undefined> {
  const object = round === 0 && read !== undefined ? read : await kube.get(IMPORTS, key);
  const imp = object === undefined ? undefined : observeImport(object);
  return imp === undefined || imp.deleting ? undefined : imp;
}

/**
 * Settles one Import (re-read live) by its port alone, and the Imports that lost a port to it.
 * Its Services are read together with its port's holders: neither depends on the other, and an
 * event's latency is its chain of round trips.
 */
export async function settleByPort(
  kube: KubeClient,
  key: ImportKey,
  options: ImportEventOptions,
  how: SettleHow,
): Promise<PortSettled> {
  const maxRounds = options.maxRounds ?? 5;
  for (let round = 0; round < maxRounds; round += 1) {
    const imp = await importFor(kube, key, round, how.read);
    if (imp === undefined) return { own: null, others: [] };
    const [{ decision, rivals }, found] = await Promise.all([
      decideFor(kube, imp),
      findServices(kube, imp, options.clNamespace),
    ]);
    const own = await settleImport(kube, imp, decision, options, {
      fromOwnEvent: how.fromOwnEvent,
      found,
    });
    const contested =
      decision?.kind === "lease" ? await holdersOf(kube, decision.port) : [imp, ...rivals];
    const losers = losersOn(contested);
    if (losers.some((l) => keyOf(l) === keyOf(imp))) continue; // we lost the race: lease again
    const others = (how.depth ?? 0) === 0 ? await settleLosers(kube, losers, options) : [];
    return { own, others };
  }
  throw new LeaseRaceError(`Import ${keyOf(key)}: leases still moving after ${maxRounds} rounds`);
}

/** The Imports that lost a port to this one, each settled by its own port (one level deep). */
async function settleLosers(
  kube: KubeClient,
  losers: readonly ImportKey[],
  options: ImportEventOptions,
): Promise<Settled[]> {
  const settled: Settled[] = [];
  for (const loser of losers) {
    const result = await settleByPort(kube, loser, options, { fromOwnEvent: false, depth: 1 });
    if (result.own !== null) settled.push(result.own);
  }
  return settled;
}

export class LeaseRaceError extends Error {
  override readonly name = "LeaseRaceError";
}
