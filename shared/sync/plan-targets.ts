/**
 * Turns rule CRs into RuleTargets (what each rule wants on every CNF pod) through the registry,
 * and CNF list replies into PodHoldings. Pure: the registry converts and compares, this module
 * only arranges the results for planPodWrites.
 */
import type { OutcomeCode } from "../core/outcome.js";
import {
  RuleError,
  requireKind,
  type CnfObject,
  type NetworkInterfaceMap,
  type RuleCr,
  type RuleKindEntry,
  ruleKey,
} from "../kinds/index.js";
import type { HeldObject, PodHoldings, RuleTarget } from "./plan-writes.js";

export type TargetResult =
  | { readonly ok: true; readonly target: RuleTarget }
  | {
      readonly ok: false;
      readonly key: string;
      readonly code: OutcomeCode;
      readonly message: string;
    };

/** Collection id shared by every kind stored in one CNF collection (SNAT and DNAT: redirects). */
export const collectionId = (entry: RuleKindEntry): string =>
  `${entry.cnf.module}/${entry.cnf.collection}`;

export const isDeleting = (cr: Pick<RuleCr, "metadata">): boolean =>
  cr.metadata.deletionTimestamp !== undefined;

/** A rule being deleted wants its object absent; only its kind and name matter. */
export function planDeletionTarget(kind: string, name: string): RuleTarget {
  const entry = requireKind(kind);
  return {
    key: ruleKey({ kind, name }),
    kind,
    collection: collectionId(entry),
    objectName: entry.cnfObjectName(name),
    service: entry.cnf.restartService,
    rank: entry.applyRank,
    desired: null,
    updatable: entry.cnf.update === "put",
    matches: () => false,
  };
}

/** What `cr` wants on each pod; a spec the CNF can never take comes back as a coded failure. */
export function planRuleTarget(
  cr: RuleCr,
  networks: NetworkInterfaceMap | RuleError,
): TargetResult {
  const deletion = planDeletionTarget(cr.kind, cr.metadata.name);
  if (isDeleting(cr)) return { ok: true, target: deletion };
  const entry = requireKind(cr.kind);
  let desired: CnfObject;
  try {
    // An unreadable nfn-network annotation only matters to kinds that name networks.
    if (networks instanceof RuleError && entry.networks(cr.spec).length > 0) throw networks;
    desired = entry.toCnf(cr, { networks: networks instanceof RuleError ? new Map() : networks });
  } catch (err) {
    if (err instanceof RuleError) {
      return { ok: false, key: deletion.key, code: err.code, message: err.message };
    }
    throw err;
  }
  return {
    ok: true,
    target: { ...deletion, desired, matches: (actual) => entry.cnfEqual(desired, actual) },
  };
}

/** Indexes the objects of CNF collection replies by collection id and name. */
export function holdingsOf(collections: ReadonlyMap<string, readonly HeldObject[]>): PodHoldings {
  const holdings = new Map<string, Map<string, HeldObject>>();
  for (const [collection, objects] of collections) {
    holdings.set(collection, new Map(objects.map((o) => [o.name, o])));
  }
  return holdings;
}
