/**
 * The two events rule sync answers, from intake to Outcome: a rule event (reconcile-rule) and a
 * CNF Deployment/Pod event or a resync (on-deployment-ready). The event only names an object:
 * it is re-read (a rule's delete event excepted), and the rest is syncRules / runCnfWork. An API failure while reading becomes a
 * retry or a permanent outcome (kubeFailureOutcome), never an exception.
 */
import { done, malformed, type Outcome } from "../core/outcome.js";
import type { IntakeEvent } from "../events/index.js";
import {
  kubeFailureOutcome,
  ruleResource,
  type EntryContext,
  type KubeObject,
} from "../kube/index.js";
import { byKind, PURPOSE_LABEL, RULE_KIND_NAMES, type RuleKindEntry } from "../kinds/index.js";
import { observeRuleAndCnf, ruleEventBegan } from "./observe.js";
import { processDeferredRules, type DeferredRule } from "./deferred-rules.js";
import { messageOf } from "../core/error-message.js";
import { processOwnWrites } from "./own-writes.js";
import { parseRuleObject, type CnfObservation } from "./observed.js";
import { cnfObjectKind, planObjectWork, planResyncWork, type CnfWork } from "./plan-scope.js";
import { runCnfWork, type CnfBatchReport } from "./resync.js";
import { coversCluster, notInSyncCounts } from "./sync-counts.js";
import { syncRules, type SyncContext, type SyncReport } from "./sync.js";
import type { SyncStore } from "./store.js";
import { kubeSyncStore } from "./kube-store.js";

type ObjectEvent = Extract<IntakeEvent, { type: "object" }>;

/** The uid and resourceVersion of the object a Resource-mode event carries, when it has them. */
function carriedVersion(event: ObjectEvent): { uid?: string; version?: string } {
  const metadata = event.object?.["metadata"];
  if (typeof metadata !== "object" || metadata === null) return {};
  const { uid, resourceVersion } = metadata as Record<string, unknown>;
  return {
    ...(typeof uid === "string" ? { uid } : {}),
    ...(typeof resourceVersion === "string" ? { version: resourceVersion } : {}),
  };
}

function skipEcho(ctx: SyncContext, event: ObjectEvent, saved: string): Outcome {
  const { ref } = event;
  ctx.calls.ownEchoesSkipped = (ctx.calls.ownEchoesSkipped ?? 0) + 1;
  ctx.log.debug(
    { rule: `${ref.kind} ${ref.namespace}/${ref.name}` },
    `echo of own write: ${saved}`,
  );
  return done("unchanged");
}

async function syncRule(event: ObjectEvent, ctx: SyncContext): Promise<Outcome> {
  const { ref } = event;
  const entry = byKind(ref.kind);
  if (entry === undefined) {
    return malformed(
      "UnknownKind",
      `reconcile-rule does not handle kind ${ref.kind}; supported kinds: ${RULE_KIND_NAMES.join(", ")}`,
    );
  }
  if (ref.namespace === "") {
    return malformed("MissingNamespace", `${ref.kind} ${ref.name}: rule kinds are namespaced`);
  }
  // The watch saw the rule leave the API server, which waits for our finalizer: the finalizer
  // path already cleaned the CNF, and a new rule of the name has its own event (ADR 0021).
  if (event.action === "delete") return done("gone");
  // Resource mode: the event says which version it is; our own write's echo needs no read.
  const carried = carriedVersion(event);
  if (
    event.action === "update" &&
    processOwnWrites.takeEcho(carried.uid, carried.version, "carried")
  ) {
    return skipEcho(ctx, event, "no reads");
  }
  const ended = ruleEventBegan(ref.namespace);
  try {
    return await syncRuleRead(event, ctx, entry);
  } finally {
    ended();
  }
}

/** syncRule from the rule's read on, counted as a rule event in flight (observe.ts). */
async function syncRuleRead(
  event: ObjectEvent,
  ctx: SyncContext,
  entry: RuleKindEntry,
): Promise<Outcome> {
  const { ref } = event;
  const key = { namespace: ref.namespace, name: ref.name };
  // A delivery syncing this rule with others whose restart it paid: its write is then our echo.
  await processDeferredRules.settled(ref.namespace, { kind: ref.kind, name: ref.name });
  const isEcho = (raw: KubeObject): boolean =>
    event.action === "update" &&
    processOwnWrites.takeEcho(raw.metadata.uid, raw.metadata.resourceVersion, "read");
  const observed = await observeRuleAndCnf(ctx.store, ruleResource(entry), key, isEcho);
  // Deleted (and released) before we got here: the finalizer path already cleaned the CNF.
  if (observed === undefined) return done("gone");
  if (observed.echo === true) return skipEcho(ctx, event, "no CNF reads");
  const { raw, observation } = observed;
  const request = { observation, readMode: "items", restartMode: "coalesce" } as const;
  const report = await syncRules(ctx, { ...request, rules: [parseRuleObject(raw)] });
  const outcome = await afterRestarts(ctx, ref.namespace, ref, observation, report);
  const cnfWrites = report.pods.reduce((n, p) => n + p.writes.length, 0);
  const rule = `${ref.kind} ${ref.namespace}/${ref.name}`;
  ctx.log.debug({ rule, cnfWrites, pods: report.pods.length }, "rule synced");
  return outcome;
}

/** The CNF an observation found, as the key its deferred rules are remembered by. */
function cnfKeyOf(observation: CnfObservation): string | undefined {
  const deployment = observation.deployment;
  if (observation.situation.kind !== "found" || deployment === undefined) return undefined;
  const { uid, namespace, name } = deployment.metadata;
  return `${namespace ?? ""}/${name}#${uid ?? ""}`;
}

const deferredIn = (report: SyncReport): boolean =>
  report.pods.some((p) =>
    [...p.results.values()].some((r) => r.kind === "failed" && r.failure.class === "deferred"),
  );

/**
 * How much later than the restart is due the other deferred rules of a CNF are redelivered: the
 * first one's redelivery pays the restart and syncs them all meanwhile (ADR 0021).
 */
const FOLLOWER_GRACE_SECONDS = 2;

/**
 * After a rule's sync: a rule whose restart was deferred is remembered; a delivery that restarted
 * a service syncs the rules remembered as deferred on the CNF, now that the restart loaded them,
 * so their statuses are written once and their redeliveries read their echo (ADR 0021). Answers
 * the rule's outcome, a follower's retry put off by FOLLOWER_GRACE_SECONDS.
 */
async function afterRestarts(
  ctx: SyncContext,
  namespace: string,
  rule: DeferredRule,
  observation: CnfObservation,
  report: SyncReport,
): Promise<Outcome> {
  const { outcome } = report;
  const cnf = cnfKeyOf(observation);
  if (cnf === undefined) return outcome;
  if (report.pods.some((p) => p.restarted.length > 0)) {
    const paid = processDeferredRules
      .take(cnf)
      .filter((r) => r.kind !== rule.kind || r.name !== rule.name);
    if (paid.length > 0) {
      try {
        await processDeferredRules.track(
          namespace,
          paid,
          syncPaidRules(ctx, namespace, cnf, paid, observation),
        );
      } catch (error) {
        // Their redeliveries, owed by the delivery layer, do the work instead.
        ctx.log.info({ cnf, error: messageOf(error) }, "syncing rules a restart paid failed");
      }
    }
  }
  if (!deferredIn(report)) return outcome;
  const first = processDeferredRules.defer(cnf, rule);
  return first || outcome.kind !== "retry"
    ? outcome
    : { ...outcome, retryAfterSeconds: outcome.retryAfterSeconds + FOLLOWER_GRACE_SECONDS };
}

/**
 * Syncs `rules`, remembered as deferred on the CNF, after this delivery restarted its services:
 * re-read at once (one consistent list per kind), synced with the CNF as this delivery observed
 * it, their statuses written with the list's resourceVersion as precondition. A rule deferred
 * again (written after the restart began) is remembered again.
 */
async function syncPaidRules(
  ctx: SyncContext,
  namespace: string,
  cnf: string,
  rules: readonly DeferredRule[],
  observation: CnfObservation,
): Promise<void> {
  const purpose = observation.deployment?.metadata.labels?.[PURPOSE_LABEL];
  const lists = await Promise.all(
    [...Map.groupBy(rules, (r) => r.kind)].map(async ([kind, group]) => {
      const entry = byKind(kind);
      if (entry === undefined) return [];
      const names = new Set(group.map((r) => r.name));
      const items = await ctx.store.listRules(ruleResource(entry), {
        namespace,
        ...(purpose === undefined ? {} : { labelSelector: { [PURPOSE_LABEL]: purpose } }),
      });
      return items.filter((item) => names.has(item.metadata.name));
    }),
  );
  const raws = lists.flat();
  if (raws.length === 0) return;
  const report = await syncRules(ctx, {
    observation,
    rules: raws.map(parseRuleObject),
    readMode: "collections",
    restartMode: "coalesce",
  });
  for (const r of report.rules) {
    if (r.outcome.kind === "retry") processDeferredRules.defer(cnf, r.rule);
  }
  ctx.log.debug({ cnf, rules: raws.length }, "rules whose deferred restart was paid synced");
}

/** What an entry is handed: a SyncContext whose store is built here from `kube`. */
export type SyncEntryContext = Omit<SyncContext, "store"> & EntryContext;

/** The context sync runs with: the API reached only through the store (store.ts). */
function withStore({ kube, ...rest }: SyncEntryContext): SyncContext {
  return { ...rest, store: kubeSyncStore(kube) };
}

/** A rule was created, changed or deleted: bring that one rule in sync on every pod of its CNF. */
export async function syncRuleEvent(event: IntakeEvent, ctx: SyncEntryContext): Promise<Outcome> {
  if (event.type === "resync") {
    return malformed(
      "WrongFunction",
      "reconcile-rule takes rule events; send resync events to on-deployment-ready",
    );
  }
  try {
    return await syncRule(event, withStore(ctx));
  } catch (error) {
    return kubeFailureOutcome(error, "reading the rule and its CNF");
  }
}

/** Which CNFs the event concerns, and the version of the object it names as re-read. */
interface EventWork {
  readonly work: CnfWork;
  /** metadata.resourceVersion of the live Deployment or Pod; undefined for a resync or a deletion. */
  readonly triggerVersion: string | undefined;
}

/** Which CNFs the event concerns: a Deployment or Pod is re-read first. */
async function workOf(event: IntakeEvent, store: SyncStore): Promise<EventWork> {
  if (event.type === "resync") {
    return { work: planResyncWork(event.scope), triggerVersion: undefined };
  }
  const kind = cnfObjectKind(event.ref);
  if (!kind.ok) return { work: kind.work, triggerVersion: undefined };
  const key = { namespace: event.ref.namespace, name: event.ref.name };
  const live =
    kind.kind === "Deployment" ? await store.getDeployment(key) : await store.getPod(key);
  const work = planObjectWork({
    ref: event.ref,
    liveLabels: live === undefined ? undefined : (live.metadata.labels ?? {}),
    eventObject: event.object,
  });
  return { work, triggerVersion: live?.metadata.resourceVersion };
}

function logReport(ctx: SyncContext, work: CnfWork, report: CnfBatchReport): void {
  const syncs = report.scopes.flatMap((s) => (s.sync ? [s.sync] : []));
  const pods = syncs.flatMap((s) => s.pods);
  ctx.log.info(
    {
      work: work.kind === "cnf" ? `${work.scope.namespace}/${work.scope.purpose}` : work.kind,
      cnfs: report.scopes.length,
      rules: syncs.reduce((n, s) => n + s.rules.length, 0),
      podsSynced: pods.length,
      cnfWrites: pods.reduce((n, p) => n + p.writes.length, 0),
      restarts: pods.reduce((n, p) => n + p.restarted.length, 0),
      pruned: report.scopes.reduce((n, s) => n + s.pruned, 0),
    },
    "CNFs synced",
  );
}

async function syncCnfs(
  event: IntakeEvent,
  ctx: SyncContext,
  cnfConcurrency: number,
): Promise<Outcome> {
  const { work, triggerVersion } = await workOf(event, ctx.store);
  if (work.kind === "malformed") return malformed(work.code, work.reason);
  if (work.kind === "skip") {
    ctx.log.info({ reason: work.reason }, `ignoring event: ${work.reason}`);
    return done(`ignored: ${work.reason}`);
  }
  const lease =
    work.kind === "cnf" && ctx.cnfLease !== undefined
      ? { settings: ctx.cnfLease, ...(triggerVersion === undefined ? {} : { triggerVersion }) }
      : undefined;
  const report = await runCnfWork(ctx, work, { cnfConcurrency, ...(lease ? { lease } : {}) });
  if (report.leaseHeld !== undefined) {
    const { covered, holder } = report.leaseHeld;
    const why = report.outcome.kind === "done" ? report.outcome.result : "lease busy";
    ctx.log.info({ holder, covered }, `CNF sync not run: ${why}`);
    return report.outcome;
  }
  logReport(ctx, work, report);
  ctx.onCnfsSynced?.(notInSyncCounts(report), coversCluster(work.kind, report));
  return report.outcome;
}

/** on-deployment-ready's context: a SyncEntryContext and how many CNFs one event syncs at once. */
export type CnfEventContext = SyncEntryContext & { readonly cnfConcurrency: number };

/**
 * A CNF Deployment or Pod changed, or the resync is due: bring every rule of the CNFs it concerns
 * in sync on every ready pod, `cnfConcurrency` CNFs at a time.
 */
export async function syncCnfEvent(event: IntakeEvent, ctx: CnfEventContext): Promise<Outcome> {
  try {
    return await syncCnfs(event, withStore(ctx), ctx.cnfConcurrency);
  } catch (error) {
    return kubeFailureOutcome(error, "reading the CNF and its rules");
  }
}
