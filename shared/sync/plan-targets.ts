/**
 * Turns rule CRs into RuleTargets (what each rule wants on every CNF pod) through the registry,
 * and CNF list replies into PodHoldings. Pure: the registry converts and compares, this module
 * only arranges the results for planPodWrites.
 */
import {
  RuleError,
  requireKind,
  type CnfObject,
  type NetworkInterfaceMap,
  type RuleCr,
  type RuleKindEntry,
} from "../rules/index.js";
import type { HeldObject, PodHoldings, RuleTarget } from "./plan-writes.js";

export type TargetResult =
  | { readonly ok: true; readonly target: RuleTarget }
  | { readonly ok: false; readonly key: string; readonly code: string; readonly message: string };

export const ruleKey = (cr: Pick<RuleCr, "kind" | "metadata">): string =>
  `${cr.kind}/${cr.metadata.name}`;

/** Collection id shared by every kind stored in one CNF collection (SNAT and DNAT: redirects). */
export const collectionId = (entry: RuleKindEntry): string =>
  `${entry.cnf.module}/${entry.cnf.collection}`;

export const isDeleting = (cr: Pick<RuleCr, "metadata">): boolean =>
  cr.metadata.deletionTimestamp !== undefined;

function desiredObject(entry: RuleKindEntry, cr: RuleCr, networks: NetworkInterfaceMap): CnfObject {
  return entry.toCnf(cr, { networks });
}

/** What `cr` wants on each pod; a spec the CNF can never take comes back as a coded failure. */
export function planRuleTarget(cr: RuleCr, networks: NetworkInterfaceMap): TargetResult {
  const entry = requireKind(cr.kind);
  const key = ruleKey(cr);
  let desired: CnfObject | null = null;
  if (!isDeleting(cr)) {
    try {
      desired = desiredObject(entry, cr, networks);
    } catch (err) {
      if (err instanceof RuleError) return { ok: false, key, code: err.code, message: err.message };
      throw err;
    }
  }
  const target: RuleTarget = {
    key,
    collection: collectionId(entry),
    objectName: cr.metadata.name,
    service: entry.cnf.restartService,
    rank: entry.applyRank,
    desired,
    updatable: entry.cnf.update === "put",
    matches: (actual) => desired !== null && entry.cnfEqual(desired, actual),
  };
  return { ok: true, target };
}

/** Indexes the objects of CNF collection replies by collection id and name. */
export function holdingsOf(collections: ReadonlyMap<string, readonly HeldObject[]>): PodHoldings {
  const holdings = new Map<string, Map<string, HeldObject>>();
  for (const [collection, objects] of collections) {
    holdings.set(collection, new Map(objects.map((o) => [o.name, o])));
  }
  return holdings;
}
