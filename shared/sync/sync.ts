/**
 * Rule sync: "desired vs actual for a set of rules on a set of pods". reconcile-rule calls it
 * with one rule, on-deployment-ready with every rule of a CNF. Observe (observe.ts) -> plan
 * (plan-*.ts, pure) -> apply (apply-pod.ts on each ready pod, apply-rule.ts per rule).
 */
import pLimit from "p-limit";
import {
  CnfClient,
  processCnfRestarts,
  type CnfRestartPacer,
  type RestartMode,
  cnfBaseUrl,
  cnfCaFromEnv,
  cnfClientTuningFromEnv,
  type CnfClientTuning,
  cnfCredentialsFromEnv,
  cnfEndpointConfig,
  type Env,
} from "../cnf/index.js";
import {
  isKubeError,
  redactingRecorder,
  ruleResource,
  type EntryContext,
  type EventRecorder,
  type EventRegarding,
} from "../kube/index.js";
import { RULE_API_VERSION, requireKind, ruleKey, type RuleKey } from "../kinds/index.js";
import type { CallCounters, Log } from "../core/context.js";
import { done, retryLater, worstOutcome, type Outcome } from "../core/outcome.js";
import { syncPod, type PodSyncResult, type ReadMode, type RestartPacing } from "./apply-pod.js";
import {
  applyRuleDecision,
  claimRule,
  markApplying,
  readRulesAfterWrite,
  replanWith,
  statusMergePatch,
  type ClaimResult,
  type DecisionResult,
} from "./apply-rule.js";
import {
  observeReferrers,
  parseRuleObject,
  type CnfObservation,
  type ObservedRuleCr,
} from "./observe.js";
import {
  mayHaveWritten,
  needsClaim,
  planAfterWrite,
  planApplying,
  planClaimFailure,
  planOverwritten,
  planRuleDecision,
  RE_APPLIED,
  restartPendingOf,
  type ObservedRule,
  type PodRuleResult,
  type RuleAfterWrite,
  type RuleDecision,
} from "./plan-status.js";
import {
  planRule,
  undeclaredBlocks,
  withLaterResults,
  withoutCollisions,
  type PlannedRule,
  type RuleIdentity,
} from "./plan-rules.js";
import {
  isOwnChange,
  planRuleEvent,
  planSyncEvents,
  type NotedRuleEvent,
  type PlannedEvent,
} from "./plan-events.js";
import { planDeletionTarget } from "./plan-targets.js";
import type { RuleTarget } from "./plan-writes.js";
import { SecretReader, resolveSecretRefs } from "./secret-refs.js";
import { cnfKeys, type CnfKeys } from "./key-material.js";
import { redactingLog, type KeyMaterial } from "../core/redact.js";
import { processOwnWrites } from "./own-writes.js";
import type { CnfLeaseSettings } from "./cnf-lease.js";
import { messageOf } from "../core/error-message.js";
import type { CnfRuleCount } from "./sync-counts.js";
import type { SyncStore } from "./store.js";

export type { CnfRuleCount } from "./sync-counts.js";

/** How many rules' API writes (claims, statuses) are in flight at once. */
const STATUS_WRITE_CONCURRENCY = 32;

/**
 * rule sync's context: an EntryContext's log, now and events, the API reached only through the
 * SyncStore the entry builds from its client (on-event.ts), and what sync needs besides.
 */
export interface SyncContext extends Omit<EntryContext, "kube"> {
  readonly store: SyncStore;
  readonly env: Env;
  readonly calls: CallCounters;
  readonly signal: AbortSignal;
  readonly log: Log;
  readonly now: () => string;
  /** How many pods are synced at once. */
  readonly podConcurrency?: number;
  /** Service restarts per pod (shared/cnf/restarts.ts); the process-wide pacer when absent. */
  readonly restarts?: CnfRestartPacer;
  /** Where rule and CNF Events go (shared/kube's recorder); none when absent. */
  readonly events?: EventRecorder;
  /** A CNF-wide sync of one CNF holds its Lease (cnf-lease.ts); uncoordinated when absent. */
  readonly cnfLease?: CnfLeaseSettings;
  /**
   * Told, after a CNF-wide sync, how many rules of each CNF synced are not in sync (the
   * sdewan_rules_not_in_sync gauge); `complete` when the counts cover every CNF of the cluster.
   */
  readonly onCnfsSynced?: (counts: readonly CnfRuleCount[], complete: boolean) => void;
}

export interface SyncRequest {
  readonly observation: CnfObservation;
  readonly rules: readonly ObservedRuleCr[];
  readonly readMode: ReadMode;
  /**
   * "coalesce" when the caller is redelivered if a restart is deferred (a rule event), so a burst
   * restarts each service a few times; "now" (the default) pays every restart in this sync.
   */
  readonly restartMode?: RestartMode;
  /**
   * Objects no rule declares that must be absent on every ready pod (pruning, plan-prune.ts).
   * Their keys must not look like a rule key; their results land in `pods` only.
   */
  readonly extraTargets?: readonly RuleTarget[];
  /** `rules` are every rule of the CNF (a resync): no other rule's key to look up. */
  readonly allRulesOfCnf?: boolean;
}

export interface RuleReport {
  readonly rule: RuleIdentity;
  /** The planned outcome, or what claiming the rule or writing its decision turned it into. */
  readonly outcome: Outcome;
}

export interface SyncReport {
  readonly rules: readonly RuleReport[];
  readonly pods: readonly PodSyncResult[];
  readonly outcome: Outcome;
}

let cachedCredentials: { env: Env; value: ReturnType<typeof cnfCredentialsFromEnv> } | undefined;

function credentialsFor(env: Env): ReturnType<typeof cnfCredentialsFromEnv> {
  if (cachedCredentials?.env !== env) {
    cachedCredentials = { env, value: cnfCredentialsFromEnv(env) };
  }
  return cachedCredentials.value;
}

/** A SyncContext while the keys of the CNF are known: its log redacts them, as its CNF clients do. */
interface KeyedSyncContext extends SyncContext {
  readonly keys: CnfKeys;
  /** The rule Events this sync decided on, recorded once it knows where each goes. */
  readonly noted: RuleEvent[];
}

function clientFor(
  ctx: KeyedSyncContext,
  observation: CnfObservation,
  podIp: string,
  tuning: CnfClientTuning,
): CnfClient {
  const endpoint = cnfEndpointConfig(ctx.env, observation.deployment?.metadata.annotations);
  return new CnfClient({
    baseUrl: cnfBaseUrl(endpoint, podIp),
    credentials: credentialsFor(ctx.env),
    calls: ctx.calls,
    signal: ctx.signal,
    log: ctx.log,
    keys: ctx.keys.all,
    timeoutMs: tuning.timeoutMs,
    writeTimeoutMs: tuning.writeTimeoutMs,
    restartTimeoutMs: tuning.restartTimeoutMs,
    retry: tuning.retry,
    ca: cnfCaFromEnv(ctx.env),
  });
}

/**
 * Syncs `targets` onto every ready pod. `mode`: "coalesce" lets a burst's restarts be deferred
 * (restarts.ts); the pacing settings are read with the CNF client's, so an invalid one fails the
 * pod's rules with a message naming it, as an invalid timeout does.
 */
async function syncPods(
  ctx: KeyedSyncContext,
  request: SyncRequest,
  targets: readonly RuleTarget[],
  mode: RestartMode,
): Promise<PodSyncResult[]> {
  if (targets.length === 0) return [];
  const limit = pLimit(ctx.podConcurrency ?? 4);
  const pacer = ctx.restarts ?? processCnfRestarts;
  return Promise.all(
    request.observation.pods.ready.map((pod) =>
      limit(async () => {
        let client: CnfClient;
        let pacing: RestartPacing;
        try {
          const tuning = cnfClientTuningFromEnv(ctx.env);
          client = clientFor(ctx, request.observation, pod.ip, tuning);
          pacing = { pacer, mode, ...tuning.restartPacing };
        } catch (error) {
          return syncPodUnreachable(pod.name, targets, error);
        }
        return syncPod(client, pod.name, targets, request.readMode, pacing);
      }),
    ),
  );
}

function syncPodUnreachable(
  pod: string,
  targets: readonly RuleTarget[],
  error: unknown,
): PodSyncResult {
  const message = messageOf(error);
  const failure = { class: "invalid" as const, pod, message };
  const results = new Map(targets.map((t) => [t.key, { kind: "failed", failure } as const]));
  return { pod, results, writes: [], restarted: [] };
}

function podResultsOf(
  rule: PlannedRule,
  pods: readonly PodSyncResult[],
  readySince?: ReadonlyMap<string, string>,
): PodRuleResult[] {
  if (rule.target === undefined) return [];
  if (readySince === undefined) return resultsFor(rule.observed.key, pods);
  // Each result with when its pod turned Ready: a pod that came back is re-seeded (ADR 0016).
  return pods.flatMap((p) => {
    const result = p.results.get(rule.observed.key);
    if (result === undefined) return [];
    const since = readySince.get(p.pod);
    return result.kind === "held" && since !== undefined
      ? [{ ...result, podReadySince: since }]
      : [result];
  });
}

/** What happened to the object keyed `key` on each pod that synced it. */
function resultsFor(key: string, pods: readonly PodSyncResult[]): PodRuleResult[] {
  return pods.flatMap((p) => {
    const result = p.results.get(key);
    return result ? [result] : [];
  });
}

/**
 * Claims (ADR 0003) every rule about to be written for the first time. A rule that could not be
 * claimed is left out of this sync, writes and status alike, and reported with why. A rule whose
 * status says inSync for an earlier generation is marked Applying first.
 */
async function claimRules(
  ctx: KeyedSyncContext,
  planned: readonly PlannedRule[],
  willWrite: boolean,
): Promise<{ claimed: PlannedRule[]; unclaimed: RuleReport[] }> {
  const limit = pLimit(STATUS_WRITE_CONCURRENCY);
  const results = await Promise.all(
    planned.map((rule) =>
      limit(async () => {
        if (rule.target === undefined || !willWrite) return rule;
        let ready = rule;
        if (needsClaim(rule.observed, willWrite)) {
          const claim = await claimRule(ctx.store, rule.identity, {
            ...rule.meta,
            echoBasis: rule.echoBasis,
          });
          if (!claim.claimed) {
            return { rule: rule.identity, outcome: await claimFailed(ctx, rule, claim) };
          }
          ready = withVersion(
            { ...rule, observed: { ...rule.observed, hasFinalizer: true } },
            claim.resourceVersion,
          );
        }
        // No inSync=true for an earlier generation while this one is written (issue 17).
        const applying = planApplying(rule.observed, ctx.now());
        if (applying !== null) {
          const version = await markApplying(ctx.store, rule.identity, rule.oldStatus, applying, {
            echoBasis: rule.echoBasis,
            resourceVersion: ready.meta.resourceVersion,
          });
          // The final status write is made over what this mark wrote (its precondition).
          if (version !== undefined)
            ready = { ...withVersion(ready, version), oldStatus: applying };
        }
        return ready;
      }),
    ),
  );
  return {
    claimed: results.filter((r): r is PlannedRule => "observed" in r),
    unclaimed: results.filter((r): r is RuleReport => "outcome" in r),
  };
}

/** The rule as this sync's own write left it: the precondition of its next write. */
function withVersion(rule: PlannedRule, resourceVersion: string | undefined): PlannedRule {
  if (resourceVersion === undefined) return rule;
  return {
    ...rule,
    meta: { ...rule.meta, resourceVersion },
    observed: { ...rule.observed, resourceVersion },
  };
}

/** A claim that failed: its outcome, after the rule's status says why when it should. */
async function claimFailed(
  ctx: KeyedSyncContext,
  rule: PlannedRule,
  claim: Extract<ClaimResult, { claimed: false }>,
): Promise<Outcome> {
  if (claim.failure === undefined) return claim.outcome;
  const { failure } = claim;
  const plan = (observed: ObservedRule) => planClaimFailure(observed, failure, ctx.now());
  const { outcome, after, decision } = await applyRuleDecision(
    ctx.store,
    rule.identity,
    rule.oldStatus,
    plan(rule.observed),
    { ...rule.meta, replan: replanWith(rule.observed, rule.uid, plan) },
  );
  if (after !== "gone") noteEvent(ctx, rule, decision);
  return outcome;
}

/** A finalizer release that failed: the Terminating rule's status says why (planClaimFailure). */
async function reportFinalizerFailure(
  ctx: KeyedSyncContext,
  rule: PlannedRule,
  applied: DecisionResult,
): Promise<DecisionResult> {
  const failure = applied.finalizerFailure;
  if (failure === undefined) return applied;
  const plan = (observed: ObservedRule) => planClaimFailure(observed, failure, ctx.now());
  const reported = await applyRuleDecision(
    ctx.store,
    rule.identity,
    rule.oldStatus,
    plan(rule.observed),
    { ...rule.meta, replan: replanWith(rule.observed, rule.uid, plan) },
  );
  noteEvent(ctx, rule, reported.decision);
  return { ...reported, after: applied.after };
}

/** The context of one sync: every key the CNF could echo, known before its first call. */
async function keyedContext(
  outer: SyncContext,
  request: SyncRequest,
  reader: SecretReader,
  willWrite: boolean,
): Promise<KeyedSyncContext> {
  const keys = await cnfKeys(
    outer.store,
    reader,
    request.observation,
    request.rules,
    request.allRulesOfCnf === true || !willWrite,
  );
  // Every text from here is redacted.
  return { ...outer, keys, noted: [], log: redactingLog(outer.log, () => keys.current) };
}

/** The rules claimed and the pods' results: what the statuses are decided from. */
interface PodsSynced {
  readonly planned: readonly PlannedRule[];
  readonly unclaimed: readonly RuleReport[];
  readonly pods: readonly PodSyncResult[];
  readonly usedBy: ReadonlyMap<string, readonly string[]>;
}

/**
 * Claims the rules, then brings every ready pod to their targets; a deletion a pod refused
 * because an object no rule declares used it is tried again once that is known.
 */
async function syncRulesOnPods(
  ctx: KeyedSyncContext,
  request: SyncRequest,
  reader: SecretReader,
  willWrite: boolean,
): Promise<PodsSynced> {
  const mode = request.restartMode ?? "now";
  const found = request.observation.situation.kind === "found";
  // Secrets named by reference are read only for a CNF that exists (its targets need them).
  const observed = found ? await resolveSecretRefs(reader, request.rules) : request.rules;
  const { claimed: planned, unclaimed } = await claimRules(
    ctx,
    withoutCollisions(observed.map((r) => planRule(r, request.observation))),
    willWrite,
  );
  const ruleTargets = planned.flatMap((p) =>
    p.target ? [{ ...p.target, restartPending: restartPendingOf(p.observed) }] : [],
  );
  const targets = found ? [...ruleTargets, ...(request.extraTargets ?? [])] : [];
  const firstPass = await syncPods(ctx, request, targets, mode);
  const usedBy = await stillUsedBy(ctx, planned, firstPass);
  const unblocked = undeclaredBlocks(planned, firstPass, usedBy);
  const pods =
    unblocked.length === 0
      ? firstPass
      : withLaterResults(firstPass, await syncPods(ctx, request, unblocked, mode));
  return { planned, unclaimed, pods, usedBy };
}

/** Each claimed rule's status decided from the pods' results and written, a few at a time. */
async function decideRules(
  ctx: KeyedSyncContext,
  request: SyncRequest,
  synced: PodsSynced,
  { now, redaction }: { readonly now: string; readonly redaction: KeyMaterial },
): Promise<DecidedRule[]> {
  const { planned, pods, usedBy } = synced;
  const limit = pLimit(STATUS_WRITE_CONCURRENCY);
  const readySince = new Map(
    request.observation.pods.ready.flatMap((p) =>
      p.readySince === undefined ? [] : [[p.name, p.readySince] as const],
    ),
  );
  return Promise.all(
    planned.map((rule) =>
      limit(async (): Promise<DecidedRule> => {
        const podResults = podResultsOf(rule, pods, readySince);
        const plan = (observed: ObservedRule) =>
          planRuleDecision({
            rule: observed,
            cnf: request.observation.situation,
            podResults,
            unappliable: rule.unappliable,
            needs: rule.needs,
            stillUsedBy: usedBy.get(rule.observed.key),
            keys: redaction,
            now,
          });
        const applied = await applyRuleDecision(
          ctx.store,
          rule.identity,
          rule.oldStatus,
          plan(rule.observed),
          {
            ...rule.meta,
            echoBasis: rule.echoBasis,
            replan: replanWith(rule.observed, rule.uid, plan),
          },
        );
        const result = await reportFinalizerFailure(ctx, rule, applied);
        const wrote = mayHaveWritten(rule.observed, podResults);
        if (result.after !== "gone" && result.stale === undefined) {
          noteEvent(ctx, rule, result.decision);
          noteReseeded(ctx, rule, result.decision);
        }
        return { rule, wrote, result };
      }),
    ),
  );
}

/** Brings `request.rules` in sync on every ready pod of the observed CNF and records the result. */
export async function syncRules(
  outer: SyncContext,
  request: SyncRequest,
  /** 1, or which pass of applying rules overtaken by a newer generation (syncOvertaken). */
  pass = 1,
): Promise<SyncReport> {
  const found = request.observation.situation.kind === "found";
  const willWrite = found && request.observation.pods.ready.length > 0;
  const reader = new SecretReader(outer.store);
  const ctx = await keyedContext(outer, request, reader, willWrite);
  const synced = await syncRulesOnPods(ctx, request, reader, willWrite);
  const now = ctx.now();
  const redaction = await ctx.keys.settled();
  const decided = await decideRules(ctx, request, synced, { now, redaction });
  const { pods } = synced;
  await recordEvents(ctx, request, pods, redaction);
  const raced = await settleRacedWrites(ctx, request, decided);
  finishOwnWrites(decided, raced);
  const again = await syncOvertaken(ctx, request, decided, raced, pass);
  const rules = [...synced.unclaimed, ...again.rules];
  const allPods = again.pods.length === 0 ? pods : withLaterResults(pods, again.pods);
  return { rules, pods: allPods, outcome: worstOutcome(rules.map((r) => r.outcome)) };
}

/** How many times one sync applies a rule whose spec keeps changing under it. */
const MAX_PASSES = 3;

/**
 * Rules whose status write found a newer generation than this sync applied (planRewrite
 * "stale"), after this sync may have written the older one to a pod: that write may have
 * reached the CNF after the newer generation's, so the status stops claiming inSync
 * (planOverwritten) and the newer generation is applied again, now. The CNF then holds the last
 * generation written by whichever delivery finished last, and its status says so (issue 25).
 * A stale rule this sync wrote nothing for is left to the newer generation's own event.
 */
async function syncOvertaken(
  ctx: SyncContext,
  request: SyncRequest,
  decided: readonly DecidedRule[],
  reports: readonly RuleReport[],
  pass: number,
): Promise<{ rules: RuleReport[]; pods: readonly PodSyncResult[] }> {
  const overtaken = decided.flatMap((d, i) => {
    const stale = d.result.stale;
    const report = reports[i];
    const current = report !== undefined && report.outcome.kind === "done";
    return stale !== undefined && d.wrote && current && !stale.observed.deleting
      ? [{ index: i, decided: d, stale }]
      : [];
  });
  if (overtaken.length === 0) return { rules: [...reports], pods: [] };
  if (pass >= MAX_PASSES) {
    const message = "the rule's spec kept changing while it was applied";
    const rules = reports.map((r, i) =>
      overtaken.some((o) => o.index === i) ? { ...r, outcome: retryLater(message, 1) } : r,
    );
    return { rules, pods: [] };
  }
  const fresh = await Promise.all(
    overtaken.map(async ({ decided: d, stale }) => {
      const correction = planOverwritten(stale.observed, d.rule.observed.generation, ctx.now());
      if (correction === null) return stale.raw;
      const type = ruleResource(requireKind(d.rule.identity.kind));
      const key = { namespace: d.rule.identity.namespace, name: d.rule.identity.name };
      try {
        return await ctx.store.patchRuleStatus(
          type,
          key,
          statusMergePatch(stale.observed.status, correction),
          { resourceVersion: stale.observed.resourceVersion },
        );
      } catch (error) {
        if (!isKubeError(error)) throw error;
        return stale.raw; // the pass below re-reads on its own 409
      }
    }),
  );
  const report = await syncRules(
    ctx,
    { ...request, rules: fresh.map(parseRuleObject), extraTargets: [] },
    pass + 1,
  );
  const byRule = new Map(report.rules.map((r) => [ruleKey(r.rule), r]));
  const rules = reports.map((r) => byRule.get(ruleKey(r.rule)) ?? r);
  return { rules, pods: report.pods };
}

/**
 * This delivery answered for its own writes of each rule it finished (done or permanent): their
 * echoes carry nothing new (own-writes.ts). A rule to retry is not finished.
 */
function finishOwnWrites(decided: readonly DecidedRule[], reports: readonly RuleReport[]): void {
  // settleRacedWrites answers one report per decided rule, in the same order.
  decided.forEach((d, i) => {
    const outcome = reports[i]?.outcome;
    if (outcome !== undefined && outcome.kind !== "retry") processOwnWrites.finish(d.rule.uid);
  });
}

/** A rule's planned Event, with what recording it on the rule needs. */
interface RuleEvent extends NotedRuleEvent {
  readonly regarding: EventRegarding;
  readonly action: "Sync" | "Delete";
}

/** Notes the rule's Event for this decision, if it is worth one (plan-events.ts). */
function noteEvent(
  ctx: KeyedSyncContext,
  rule: PlannedRule,
  decision: RuleDecision,
  event: PlannedEvent | null = planRuleEvent(rule.oldStatus, decision),
): void {
  if (event === null || ctx.events === undefined) return;
  const { kind, namespace, name } = rule.identity;
  ctx.noted.push({
    rule: { kind, name, key: rule.observed.key },
    event,
    own: isOwnChange(rule.observed),
    regarding: {
      apiVersion: RULE_API_VERSION,
      kind,
      namespace,
      name,
      ...(rule.uid ? { uid: rule.uid } : {}),
    },
    action: rule.observed.deleting ? "Delete" : "Sync",
  });
}

/**
 * A rule written to pods that turned ready since it was applied: no status write (nothing it says changed),
 * but the writes are news, told with the CNF's other Events (one on the Deployment for many).
 */
function noteReseeded(ctx: KeyedSyncContext, rule: PlannedRule, decision: RuleDecision): void {
  if (decision.result !== RE_APPLIED || decision.status !== null) return;
  noteEvent(ctx, rule, decision, {
    type: "Normal",
    reason: "Applied",
    note: "written to pods that turned ready since it was applied",
  });
}

/**
 * Records the noted Events (plan-events.ts planSyncEvents): on their rules, or, for what a sync
 * of the whole CNF did to many rules at once, one per reason on the CNF's Deployment. Every note
 * is redacted against every key of the CNF first; best-effort, as the recorder is.
 */
async function recordEvents(
  ctx: KeyedSyncContext,
  request: SyncRequest,
  pods: readonly PodSyncResult[],
  keys: KeyMaterial,
): Promise<void> {
  if (ctx.events === undefined) return;
  const events = redactingRecorder(ctx.events, (note) => keys.redact(note));
  const deployment = request.allRulesOfCnf === true ? cnfRegarding(request.observation) : undefined;
  const { situation } = request.observation;
  const readiness =
    situation.kind === "found"
      ? {
          ready: situation.readyPods,
          expected: situation.expectedPods,
          rules: request.rules.length,
        }
      : undefined;
  const planned = planSyncEvents({
    noted: ctx.noted,
    cnf: deployment,
    pods,
    ...(readiness === undefined ? {} : { readiness }),
  });
  await Promise.all([
    ...planned.onRules.map(({ event, regarding, action }) =>
      events.record({ ...event, regarding, action }),
    ),
    ...planned.onCnf.map(
      (event) => deployment && events.record({ ...event, regarding: deployment, action: "Sync" }),
    ),
  ]);
}

/** The CNF's Deployment as an Event's object, when the sync found exactly one. */
function cnfRegarding(observation: SyncRequest["observation"]): EventRegarding | undefined {
  const deployment = observation.deployment;
  if (observation.situation.kind !== "found" || deployment === undefined) return undefined;
  const { name, namespace, uid } = deployment.metadata;
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    namespace: namespace ?? "",
    name,
    ...(uid === undefined ? {} : { uid }),
  };
}

/** For each deletion a pod refused as still in use: the rule CRs that reference it. */
async function stillUsedBy(
  ctx: SyncContext,
  planned: readonly PlannedRule[],
  pods: readonly PodSyncResult[],
): Promise<Map<string, readonly string[]>> {
  const blocked = planned.filter(
    (rule) =>
      rule.observed.deleting &&
      podResultsOf(rule, pods).some((r) => r.kind === "failed" && r.failure.class === "dependency"),
  );
  const found = await Promise.all(
    blocked.map(async (rule) => {
      const referrers = await observeReferrers(ctx.store, {
        ...rule.identity,
        purpose: rule.purpose,
      });
      return referrers === undefined ? [] : [[rule.observed.key, referrers] as const];
    }),
  );
  return new Map(found.flat());
}

interface DecidedRule {
  readonly rule: PlannedRule;
  /** Sync may have written to a pod for this rule, observed live. */
  readonly wrote: boolean;
  readonly result: DecisionResult;
}

/**
 * Rules deleted while this event wrote for them: their deletion may already have found the pods
 * empty and released the finalizer, so what this event wrote is removed here and now. Rules
 * replaced by a new one of the same name are retried. Everything else reports as decided.
 */
async function settleRacedWrites(
  ctx: KeyedSyncContext,
  request: SyncRequest,
  decided: readonly DecidedRule[],
): Promise<RuleReport[]> {
  const written = decided.filter((d) => d.wrote && d.rule.target !== undefined);
  const unanswered = written
    .filter((d) => d.result.after === undefined)
    .map((d) => d.rule.identity);
  let readBack = new Map<RuleKey, RuleAfterWrite>();
  try {
    if (unanswered.length > 0) readBack = await readRulesAfterWrite(ctx.store, unanswered);
  } catch (error) {
    if (!isKubeError(error)) throw error;
    // Unknown fates: the writes stand, as they did before this check existed; resync rechecks.
  }
  const writtenRules = new Set(written);
  const checked = decided.map((d): { report: RuleReport; raced: boolean } => {
    const report = { rule: d.rule.identity, outcome: d.result.outcome };
    if (!writtenRules.has(d)) return { report, raced: false };
    const after = d.result.after ?? readBack.get(ruleKey(d.rule.identity));
    if (after === undefined) return { report, raced: false };
    const fate = planAfterWrite(d.rule.uid, after);
    if (fate === "current") return { report, raced: false };
    if (fate === "replaced") {
      const message = "a new rule of the same name replaced it while it was applied";
      return { report: { ...report, outcome: retryLater(message, 2) }, raced: false };
    }
    return { report, raced: true };
  });
  const raced = checked.filter((c) => c.raced).map((c) => c.report.rule);
  if (raced.length === 0) return checked.map((c) => c.report);
  ctx.log.info(
    { rules: raced.map((r) => `${r.kind} ${r.namespace}/${r.name}`) },
    "rules deleted while being applied: removing what this event wrote",
  );
  const targets = raced.map((r) => planDeletionTarget(r.kind, r.name));
  const removal = await syncPods(ctx, request, targets, "now");
  return checked.map(({ report, raced: wasRaced }) => {
    if (!wasRaced) return report;
    const key = ruleKey(report.rule);
    const failed = resultsFor(key, removal).find((r) => r.kind === "failed");
    const outcome =
      failed === undefined
        ? done("deleted while applied; removed again")
        : retryLater(
            `deleted while applied; removing it again failed: ${failed.failure.message}`,
            2,
          );
    return { ...report, outcome };
  });
}
