/**
 * Pure planning of pruning (docs/adr/0001-prune-only-what-we-applied.md): a CNF Deployment opts
 * in with PRUNE_ANNOTATION; a ledger lists the CNF objects this controller applied for a rule of
 * that CNF; an object is pruned only when the ledger lists it and no rule CR of the CNF declares
 * it any more. Objects the CNF had at start, or that someone added by hand, are never in the
 * ledger, so they are never touched. No I/O here; prune-ledger.ts reads and writes the ledger.
 */
import { ALL_RULE_KINDS, ruleKey, type RuleKindEntry } from "../kinds/index.js";
import type { PodSyncResult } from "./plan-status.js";
import { collectionId, planDeletionTarget } from "./plan-targets.js";
import type { RuleTarget } from "./plan-writes.js";

/** Deployment annotation that turns pruning on for a CNF; any other value (or none) is off. */
export const PRUNE_ANNOTATION = "sdewan.akraino.org/prune";

/** Rule key prefix of prune targets, so they never collide with a rule's "<Kind>/<name>". */
export const PRUNE_KEY_PREFIX = "prune:";

/** One CNF object: collection id ("firewall/zones") and object name. */
export interface CnfObjectId {
  readonly collection: string;
  readonly name: string;
}

export const objectIdKey = (id: CnfObjectId): string => `${id.collection}/${id.name}`;

export function pruneEnabled(annotations: Readonly<Record<string, string>> | undefined): boolean {
  return annotations?.[PRUNE_ANNOTATION]?.trim().toLowerCase() === "true";
}

/** A rule of the CNF's scope, reduced to what pruning reads. */
export interface ScopeRule {
  readonly kind: string;
  readonly name: string;
  readonly deleting: boolean;
}

/** The first registry entry of each collection: SNAT and DNAT share redirects, sites and hosts remotes. */
const KIND_OF_COLLECTION = new Map<string, RuleKindEntry>();
for (const entry of ALL_RULE_KINDS) {
  if (!KIND_OF_COLLECTION.has(collectionId(entry))) {
    KIND_OF_COLLECTION.set(collectionId(entry), entry);
  }
}

/** Every CNF collection rules are stored in. */
export const RULE_COLLECTIONS: readonly string[] = [...KIND_OF_COLLECTION.keys()];

function declaredObject(rule: ScopeRule): CnfObjectId | undefined {
  const entry = ALL_RULE_KINDS.find((e) => e.kind === rule.kind);
  if (entry === undefined) return undefined;
  return { collection: collectionId(entry), name: entry.cnfObjectName(rule.name) };
}

/** Reads a ledger: one "module/collection/name" a line; lines naming no rule collection are ignored. */
export function parseLedger(text: string | undefined): CnfObjectId[] {
  const ids: CnfObjectId[] = [];
  for (const line of (text ?? "").split("\n")) {
    const [module, collection, ...rest] = line.trim().split("/");
    const name = rest.join("/");
    const id = { collection: `${module}/${collection}`, name };
    if (name !== "" && KIND_OF_COLLECTION.has(id.collection)) ids.push(id);
  }
  return ids;
}

/** Writes a ledger sorted and without duplicates, so an unchanged ledger is byte-equal. */
export function formatLedger(ids: Iterable<CnfObjectId>): string {
  const lines = new Set([...ids].map(objectIdKey));
  return [...lines].sort().join("\n");
}

/**
 * Objects to make absent on every ready pod: in the ledger, and not declared by any rule of the
 * scope (a rule being deleted still declares its object; its own finalizer path removes it).
 */
export function planPruneTargets(
  ledger: readonly CnfObjectId[],
  rules: readonly ScopeRule[],
): RuleTarget[] {
  const declared = new Set(rules.flatMap((r) => [declaredObject(r)].filter(isId)).map(objectIdKey));
  const seen = new Set<string>();
  const targets: RuleTarget[] = [];
  for (const id of ledger) {
    const key = objectIdKey(id);
    const entry = KIND_OF_COLLECTION.get(id.collection);
    if (entry === undefined || declared.has(key) || seen.has(key)) continue;
    seen.add(key);
    targets.push({ ...planDeletionTarget(entry.kind, id.name), key: `${PRUNE_KEY_PREFIX}${key}` });
  }
  return targets;
}

const isId = (id: CnfObjectId | undefined): id is CnfObjectId => id !== undefined;

export interface LedgerChange {
  /** Objects now held for a live rule on at least one pod: recorded. */
  readonly add: readonly CnfObjectId[];
  /** Pruned objects confirmed absent on every pod the CNF should have: forgotten. */
  readonly remove: readonly CnfObjectId[];
  /** Prune targets actually deleted from some pod in this sync. */
  readonly pruned: number;
}

export interface LedgerChangeInput {
  readonly rules: readonly ScopeRule[];
  readonly pruneTargets: readonly RuleTarget[];
  readonly pods: readonly PodSyncResult[];
  /** All pods the CNF should have are ready and were synced. */
  readonly allPods: boolean;
}

function heldAnywhere(key: string, pods: readonly PodSyncResult[]): boolean {
  return pods.some((p) => p.results.get(key)?.kind === "held");
}

function absentEverywhere(key: string, pods: readonly PodSyncResult[]): boolean {
  return pods.length > 0 && pods.every((p) => p.results.get(key)?.kind === "held");
}

/** What a sync taught the ledger. A rule's results are keyed by its `ruleKey`. */
export function planLedgerChange(input: LedgerChangeInput): LedgerChange {
  const add = input.rules
    .filter((r) => !r.deleting && heldAnywhere(ruleKey(r), input.pods))
    .flatMap((r) => [declaredObject(r)].filter(isId));
  const remove = input.allPods
    ? input.pruneTargets
        .filter((t) => absentEverywhere(t.key, input.pods))
        .map((t) => ({ collection: t.collection, name: t.objectName }))
    : [];
  const prunedKeys = new Set(input.pruneTargets.map((t) => t.key));
  const pruned = input.pods.reduce(
    (n, p) => n + p.writes.filter((w) => prunedKeys.has(w.ruleKey)).length,
    0,
  );
  return { add, remove, pruned };
}

/** The ledger after `change` (additions are declared objects, removals undeclared: disjoint). */
export function applyLedgerChange(
  ledger: readonly CnfObjectId[],
  change: LedgerChange,
): CnfObjectId[] {
  const removed = new Set(change.remove.map(objectIdKey));
  const next = new Map<string, CnfObjectId>();
  for (const id of [...ledger, ...change.add]) {
    if (!removed.has(objectIdKey(id))) next.set(objectIdKey(id), id);
  }
  return [...next.values()];
}
