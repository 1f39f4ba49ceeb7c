/**
 * CNF-wide sync, the logic of on-deployment-ready: converge every rule of one CNF, of every CNF
 * of a namespace, or of the whole cluster, each CNF in one batch (syncRules with collection
 * reads, so a pod costs one GET per CNF collection whatever the number of rules). Also releases
 * rules whose CNF is gone, and prunes for CNFs that opt in (plan-prune.ts).
 *
 * Not here: which CNF an event means (plan-scope.ts), HTTP (shared/runtime).
 *
 *   const report = await runCnfWork(ctx, { kind: "namespace", namespace: "ns1" });
 *   report.outcome  // worst over every rule: retry when a CNF write must be retried
 */
import pLimit from "p-limit";
import type { Deployment } from "../kube/index.js";
import { ALL_RULE_KINDS, PURPOSE_LABEL } from "../kinds/index.js";
import { batchOutcome, done, retryLater, type Outcome } from "../core/outcome.js";
import { isKubeError, ruleResource, settleObject } from "../kube/index.js";
import {
  listRulesOfScope,
  observeCnf,
  observeCnfOf,
  parseRuleObject,
  type CnfObservation,
  type CnfScope,
  type ObservedRuleCr,
} from "./observe.js";
import {
  PRUNE_KEY_PREFIX,
  planLedgerChange,
  planPruneTargets,
  pruneEnabled,
  type LedgerChange,
  type ScopeRule,
} from "./plan-prune.js";
import { planScopeGroups, type CnfWork, type ScopeGroup } from "./plan-scope.js";
import {
  ledgerNamespace,
  ledgerNotKeptReason,
  readLedger,
  updateLedger,
  type StoredLedger,
} from "./prune-ledger.js";
import { syncRules, type SyncContext, type SyncReport } from "./sync.js";
import { withCnfLease, type CnfLeaseSettings } from "./cnf-lease.js";
import { messageOf } from "../core/error-message.js";
import type { SyncStore } from "./store.js";

export interface CnfSyncOptions {
  /** How many CNFs a namespace or cluster resync syncs at once (pods per CNF: SyncContext). */
  readonly cnfConcurrency?: number;
  /**
   * One CNF's sync holds its Lease (cnf-lease.ts) when set; `triggerVersion` is the
   * resourceVersion of the object whose change triggered it, when there is one.
   */
  readonly lease?: { readonly settings: CnfLeaseSettings; readonly triggerVersion?: string };
}

export interface ScopeReport {
  readonly scope: CnfScope;
  readonly situation: "found" | "none" | "conflict" | "failed";
  /** Undefined when there was nothing to sync, or a failure stopped the scope. */
  readonly sync: SyncReport | undefined;
  /** CNF objects deleted by pruning, over all pods. */
  readonly pruned: number;
  /** One per rule (and per prune write or failure); empty when there was nothing to do. */
  readonly outcomes: readonly Outcome[];
}

export interface CnfBatchReport {
  readonly scopes: readonly ScopeReport[];
  readonly outcome: Outcome;
  /** Set when the CNF's sync did not run: another sync held its Lease (cnf-lease.ts). */
  readonly leaseHeld?: { readonly covered: boolean; readonly holder: string };
}

const RETRY_SECONDS = 5;

const NO_CNF = (scope: CnfScope): CnfObservation => ({
  situation: { kind: "none", ...scope },
  deployment: undefined,
  pods: { ready: [], expected: 0 },
  networks: new Map(),
});

function scopeRuleOf(rule: ObservedRuleCr): ScopeRule {
  const obj = rule.ok ? rule.cr : rule.raw;
  const deleting = obj.metadata.deletionTimestamp !== undefined;
  return { kind: obj.kind, name: obj.metadata.name, deleting };
}

/** One outcome per prune target per pod that did something: deleted, or failed. */
function pruneOutcomes(report: SyncReport): Outcome[] {
  const outcomes: Outcome[] = [];
  for (const pod of report.pods) {
    for (const write of pod.writes) {
      if (write.ruleKey.startsWith(PRUNE_KEY_PREFIX)) outcomes.push(done("pruned"));
    }
    for (const [key, result] of pod.results) {
      if (key.startsWith(PRUNE_KEY_PREFIX) && result.kind === "failed") {
        const message = `pruning ${key.slice(PRUNE_KEY_PREFIX.length)} on pod ${pod.pod} failed: ${result.failure.message}`;
        outcomes.push(retryLater(message, RETRY_SECONDS));
      }
    }
  }
  return outcomes;
}

/**
 * Reads the prune ledger. One that cannot be read (no grant, no namespace) means no pruning this
 * time, and no ledger write either: warn, and let the rules' outcomes answer the event.
 */
async function loadLedger(
  ctx: SyncContext,
  deployment: Deployment,
): Promise<StoredLedger | undefined> {
  const namespace = ledgerNamespace(ctx.env);
  try {
    return await readLedger(ctx.store, namespace, deployment);
  } catch (error) {
    warnLedgerNotKept(ctx, deployment, error, namespace);
    return undefined;
  }
}

/**
 * Writes the prune ledger. Without permission to write it, pruning only forgets what it applied
 * (it never prunes more): warn, and let the rules' outcomes answer the event.
 */
async function recordLedger(
  ctx: SyncContext,
  deployment: Deployment,
  stored: StoredLedger,
  change: LedgerChange,
): Promise<void> {
  const namespace = ledgerNamespace(ctx.env);
  try {
    await updateLedger(ctx.store, namespace, deployment, stored, change);
  } catch (error) {
    warnLedgerNotKept(ctx, deployment, error, namespace);
  }
}

/** Rethrows anything but a missing grant or namespace (retrying will not fix those). */
function warnLedgerNotKept(
  ctx: SyncContext,
  deployment: Deployment,
  error: unknown,
  namespace: string,
): void {
  const reason = ledgerNotKeptReason(error, namespace);
  if (reason === undefined) throw error;
  ctx.log.warn(
    { deployment: `${deployment.metadata.namespace ?? ""}/${deployment.metadata.name}` },
    `prune ledger not kept (${reason}): ${messageOf(error)}`,
  );
}

/** Syncs `rules` (all of the scope, deleting ones included) onto the observed CNF. */
async function syncScope(
  ctx: SyncContext,
  observation: CnfObservation,
  scope: CnfScope,
  rules: readonly ObservedRuleCr[],
): Promise<ScopeReport> {
  const situation = observation.situation.kind;
  const deployment = observation.deployment;
  const pruning = deployment !== undefined && pruneEnabled(deployment.metadata.annotations);
  if (rules.length === 0 && !pruning) {
    return { scope, situation, sync: undefined, pruned: 0, outcomes: [] };
  }
  const scopeRules = rules.map(scopeRuleOf);
  const ledger = pruning ? await loadLedger(ctx, deployment) : undefined;
  const extraTargets = ledger ? planPruneTargets(ledger.entries, scopeRules) : [];
  const sync = await syncRules(ctx, {
    observation,
    rules,
    readMode: "collections",
    // Redelivered (or resynced) when a restart is deferred, like a rule event.
    restartMode: "coalesce",
    extraTargets,
    allRulesOfCnf: true,
  });
  let pruned = 0;
  if (deployment !== undefined && ledger !== undefined) {
    const { situation: s } = observation;
    const allPods = s.kind === "found" && s.readyPods > 0 && s.readyPods >= s.expectedPods;
    const change = planLedgerChange({
      rules: scopeRules,
      pruneTargets: extraTargets,
      pods: sync.pods,
      allPods,
    });
    await recordLedger(ctx, deployment, ledger, change);
    pruned = change.pruned;
  }
  const outcomes = [...sync.rules.map((r) => r.outcome), ...pruneOutcomes(sync)];
  return { scope, situation, sync, pruned, outcomes };
}

/**
 * Runs `work` for one scope; a failure becomes that scope's outcome, not the batch's end. A CNF's
 * own event leaves a bug (anything but an API failure) to the runtime's 500; among many CNFs it
 * is that CNF's alone.
 */
function guarded(
  ctx: SyncContext,
  scope: CnfScope,
  work: () => Promise<ScopeReport>,
  among: "one" | "many",
): Promise<ScopeReport> {
  return settleObject(
    work,
    (outcome): ScopeReport => ({
      scope,
      situation: "failed",
      sync: undefined,
      pruned: 0,
      outcomes: [outcome],
    }),
    {
      object: `CNF ${scope.namespace}/${scope.purpose}`,
      log: ctx.log,
      ...(among === "one" ? { rethrow: (error: unknown) => !isKubeError(error) } : {}),
    },
  );
}

/** A CNF's sync under its Lease: a holder that covers it answers for it, a busy one is retried. */
async function syncOneCnfLeased(
  ctx: SyncContext,
  scope: CnfScope,
  lease: NonNullable<CnfSyncOptions["lease"]>,
): Promise<CnfBatchReport> {
  const leased = await withCnfLease(ctx, lease.settings, scope, lease.triggerVersion, () =>
    syncOneCnf(ctx, scope),
  );
  if (leased.kind === "ran") return leased.value;
  const where = `${scope.namespace}/${scope.purpose}`;
  if (leased.kind === "covered") {
    return {
      scopes: [],
      outcome: done(`covered: a sync of CNF ${where} that began after this change is running`),
      leaseHeld: { covered: true, holder: leased.holder },
    };
  }
  const message = `another sync of CNF ${where} held its Lease for ${lease.settings.waitMs} ms (holder ${leased.holder})`;
  return {
    scopes: [],
    outcome: retryLater(message, RETRY_SECONDS),
    leaseHeld: { covered: false, holder: leased.holder },
  };
}

async function syncOneCnf(ctx: SyncContext, scope: CnfScope): Promise<CnfBatchReport> {
  const report = await guarded(
    ctx,
    scope,
    async () => {
      const [observation, rules] = await Promise.all([
        observeCnf(ctx.store, scope),
        listRulesOfScope(ctx.store, scope),
      ]);
      return syncScope(ctx, observation, scope, rules);
    },
    "one",
  );
  return { scopes: [report], outcome: batchOutcome(report.outcomes) };
}

/** Every rule of every kind, in one namespace or all: one list per kind. */
async function listAllRules(store: SyncStore, namespace: string | undefined) {
  const lists = await Promise.all(
    ALL_RULE_KINDS.map((entry) =>
      store.listRules(ruleResource(entry), namespace === undefined ? {} : { namespace }),
    ),
  );
  return lists.flat().map((raw) => ({
    namespace: raw.metadata.namespace ?? "",
    purpose: raw.metadata.labels?.[PURPOSE_LABEL],
    rule: parseRuleObject(raw),
  }));
}

function syncGroup(
  ctx: SyncContext,
  group: ScopeGroup<ObservedRuleCr>,
  deployments: readonly Deployment[],
): Promise<ScopeReport> {
  const { scope } = group;
  return guarded(
    ctx,
    scope,
    async () => {
      const inNamespace = deployments.filter((d) => d.metadata.namespace === scope.namespace);
      if (!group.labelled) return syncScope(ctx, NO_CNF(scope), scope, group.rules);
      const cnf = inNamespace.find((d) => d.metadata.labels?.[PURPOSE_LABEL] === scope.purpose);
      // A CNF without rules costs nothing unless it prunes (then its ledger may name orphans).
      if (group.rules.length === 0 && !pruneEnabled(cnf?.metadata.annotations)) {
        return { scope, situation: "found", sync: undefined, pruned: 0, outcomes: [] };
      }
      const observation = await observeCnfOf(ctx.store, scope, inNamespace);
      return syncScope(ctx, observation, scope, group.rules);
    },
    "many",
  );
}

/** Every CNF and every rule of a namespace, or of the cluster, with bounded CNF concurrency. */
async function syncMany(
  ctx: SyncContext,
  namespace: string | undefined,
  options: CnfSyncOptions,
): Promise<CnfBatchReport> {
  const inNamespace = namespace === undefined ? {} : { namespace };
  const [deployments, rules] = await Promise.all([
    ctx.store.listDeployments({ ...inNamespace, labelSelector: PURPOSE_LABEL }),
    listAllRules(ctx.store, namespace),
  ]);
  const cnfs = deployments
    .filter((d) => d.metadata.deletionTimestamp === undefined)
    .map((d) => ({
      namespace: d.metadata.namespace ?? "",
      purpose: d.metadata.labels?.[PURPOSE_LABEL] ?? "",
    }));
  const groups = planScopeGroups(cnfs, rules);
  const limit = pLimit(options.cnfConcurrency ?? 4);
  const scopes = await Promise.all(
    groups.map((group) => limit(() => syncGroup(ctx, group, deployments))),
  );
  return { scopes, outcome: batchOutcome(scopes.flatMap((s) => s.outcomes)) };
}

/** Converges the CNFs `work` names (work of kind "skip" or "malformed" is the caller's). */
export async function runCnfWork(
  ctx: SyncContext,
  work: Extract<CnfWork, { kind: "cnf" | "namespace" | "all" }>,
  options: CnfSyncOptions = {},
): Promise<CnfBatchReport> {
  if (work.kind === "cnf") {
    return options.lease === undefined
      ? syncOneCnf(ctx, work.scope)
      : syncOneCnfLeased(ctx, work.scope, options.lease);
  }
  return syncMany(ctx, work.kind === "namespace" ? work.namespace : undefined, options);
}
