/**
 * Pure planning of CNF writes: given what a set of rules wants on one CNF pod and what that pod
 * holds, return the ordered writes that make the pod hold exactly what the rules want.
 * No I/O here; apply-writes.ts executes the plan.
 */

import { compareStrings } from "../core/order.js";
import type { CnfObject } from "../kinds/index.js";

/** An object as a CNF returned it in a GET list: named, other keys as the CNF chose. */
export interface HeldObject {
  readonly name: string;
  readonly [field: string]: unknown;
}

/** What one rule wants on every pod of its CNF. */
export interface RuleTarget {
  /** The rule's `ruleKey`; a pruned object no rule declares has a "prune:" key instead. */
  readonly key: string;
  /** The rule's kind, for the registry's CNF access details. */
  readonly kind: string;
  /** CNF collection id, "<module>/<collection>", e.g. "firewall/zones". */
  readonly collection: string;
  readonly objectName: string;
  /** The CNF service restarted after this object changes, or null. */
  readonly service: string | null;
  /** Dependency rank: lower ranks are created first and deleted last. */
  readonly rank: number;
  /** The object the CNF must hold, or null when the rule is being deleted and must be absent. */
  readonly desired: CnfObject | null;
  /** False for collections without PUT (CNFService): an update is a delete then a create. */
  readonly updatable: boolean;
  /**
   * The service may not have been restarted since the object was last written (a restart failed,
   * or the function stopped between write and restart): restart it even where nothing changes.
   */
  readonly restartPending?: boolean;
  /** Normalised comparison of the desired object with what the CNF returned. */
  matches(actual: HeldObject): boolean;
}

/** What one pod holds, per collection id, by object name. */
export type PodHoldings = ReadonlyMap<string, ReadonlyMap<string, HeldObject>>;

export type WriteOp = "create" | "update" | "recreate" | "delete";

export interface PlannedWrite {
  readonly op: WriteOp;
  readonly ruleKey: string;
  readonly collection: string;
  readonly objectName: string;
  readonly body: CnfObject | null;
  readonly service: string | null;
}

/** A rule whose service must be restarted on a pod: after its write, or a pending restart. */
export type ServiceTouch = Pick<PlannedWrite, "ruleKey" | "service">;

export interface PodWritePlan {
  /** Creates and updates in rank order, then deletes in reverse rank order. */
  readonly writes: readonly PlannedWrite[];
  /** Rules already held by the pod exactly as desired (or already absent when being deleted). */
  readonly unchanged: readonly string[];
  /** Unchanged rules whose service restart is still pending: restarted without a write. */
  readonly restartOnly: readonly ServiceTouch[];
}

function writeFor(target: RuleTarget, holdings: PodHoldings): PlannedWrite | null {
  const actual = holdings.get(target.collection)?.get(target.objectName);
  const base = {
    ruleKey: target.key,
    collection: target.collection,
    objectName: target.objectName,
    service: target.service,
  };
  if (target.desired === null) {
    return actual === undefined ? null : { ...base, op: "delete", body: null };
  }
  if (actual === undefined) return { ...base, op: "create", body: target.desired };
  if (target.matches(actual)) return null;
  return { ...base, op: target.updatable ? "update" : "recreate", body: target.desired };
}

/**
 * Plans the writes for one pod. Ordering makes referenced objects exist before their referrers
 * (creates/updates by ascending rank) and referrers go before what they reference (deletes by
 * descending rank, after updates have moved references away).
 */
export function planPodWrites(targets: readonly RuleTarget[], holdings: PodHoldings): PodWritePlan {
  const rankOf = new Map(targets.map((t) => [t.key, t.rank]));
  const rank = (w: PlannedWrite): number => rankOf.get(w.ruleKey) ?? 0;
  const applies: PlannedWrite[] = [];
  const deletes: PlannedWrite[] = [];
  const unchanged: string[] = [];
  const restartOnly: ServiceTouch[] = [];
  for (const target of targets) {
    const write = writeFor(target, holdings);
    if (write === null) {
      unchanged.push(target.key);
      if (target.restartPending === true && target.service !== null) {
        restartOnly.push({ ruleKey: target.key, service: target.service });
      }
    } else if (write.op === "delete") deletes.push(write);
    else applies.push(write);
  }
  applies.sort((a, b) => rank(a) - rank(b));
  deletes.sort((a, b) => rank(b) - rank(a));
  return { writes: [...applies, ...deletes], unchanged, restartOnly };
}

/** Services to restart once on a pod after the given successful writes (and pending restarts). */
export function servicesToRestart(done: readonly ServiceTouch[]): string[] {
  const services = new Set<string>();
  for (const write of done) if (write.service !== null) services.add(write.service);
  return [...services].sort();
}

/**
 * Two rules that map to the same CNF object (e.g. a FirewallSNAT and a FirewallDNAT with one
 * name, both stored as redirects) would overwrite each other forever. The first by key wins;
 * the others are reported so they can be marked Stalled instead of fighting.
 */
export function findObjectCollisions(targets: readonly RuleTarget[]): Map<string, string> {
  const owner = new Map<string, string>();
  const collisions = new Map<string, string>();
  for (const target of [...targets].sort((a, b) => compareStrings(a.key, b.key))) {
    const objectKey = `${target.collection}/${target.objectName}`;
    const first = owner.get(objectKey);
    if (first === undefined) owner.set(objectKey, target.key);
    else collisions.set(target.key, first);
  }
  return collisions;
}
