/**
 * on-deployment-ready: add/update/delete of a CNF Deployment or Pod (label sdewanPurpose), and
 * the periodic resync -> bring every rule of that CNF in sync on every ready pod in one batch.
 * The event only names the object: it is re-read and mapped to its CNF (plan-scope.ts), and
 * shared/sync/resync.ts does the rest. A CNF without ready pods is answered 202: its rules say
 * why on their status, and the next readiness change or resync brings them back (docs/resync.md).
 */
import type { IntakeEvent } from "../../shared/events/types.js";
import { DEPLOYMENTS, PODS, defaultKubeClient, type KubeClient } from "../../shared/kube/index.js";
import type { EventFunction, HandlerContext } from "../../shared/runtime/function.js";
import { done, malformed, type Outcome } from "../../shared/runtime/outcome.js";
import { kubeFailureOutcome } from "../../shared/sync/apply-rule.js";
import {
  cnfObjectKind,
  planObjectWork,
  planResyncWork,
  type CnfWork,
} from "../../shared/sync/plan-scope.js";
import { runCnfWork, type CnfBatchReport } from "../../shared/sync/resync.js";
import type { SyncContext } from "../../shared/sync/sync.js";

export interface OnDeploymentReadyOptions {
  /** Tests pass the admin client of the test cluster; default: in-cluster or KUBECONFIG. */
  readonly kube?: () => KubeClient;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** A positive integer from the environment, else `fallback`. */
function intFromEnv(env: OnDeploymentReadyOptions["env"], name: string, fallback: number): number {
  const value = Number(env?.[name]);
  return Number.isInteger(value) && value > 0 ? value : fallback;
}

/** Which CNFs the event concerns: a Deployment or Pod is re-read first. */
async function workOf(event: IntakeEvent, kube: KubeClient): Promise<CnfWork> {
  if (event.type === "resync") return planResyncWork(event.scope);
  const kind = cnfObjectKind(event.ref);
  if (!kind.ok) return kind.work;
  const key = { namespace: event.ref.namespace, name: event.ref.name };
  const live =
    kind.kind === "Deployment" ? await kube.get(DEPLOYMENTS, key) : await kube.get(PODS, key);
  return planObjectWork({
    ref: event.ref,
    liveLabels: live === undefined ? undefined : (live.metadata.labels ?? {}),
    eventObject: event.object,
  });
}

function logReport(ctx: HandlerContext, work: CnfWork, report: CnfBatchReport): void {
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

async function handle(
  event: IntakeEvent,
  ctx: HandlerContext,
  options: OnDeploymentReadyOptions,
): Promise<Outcome> {
  const env = options.env ?? process.env;
  const kube = (options.kube ?? defaultKubeClient)().withCalls(ctx.calls);
  const work = await workOf(event, kube);
  if (work.kind === "malformed") return malformed(work.code, work.reason);
  if (work.kind === "skip") {
    ctx.log.info({ reason: work.reason }, `ignoring event: ${work.reason}`);
    return done(`ignored: ${work.reason}`);
  }
  const sync: SyncContext = {
    kube,
    env,
    calls: ctx.calls,
    signal: ctx.signal,
    log: ctx.log,
    now: () => new Date().toISOString(),
    podConcurrency: intFromEnv(env, "SYNC_POD_CONCURRENCY", 4),
  };
  const report = await runCnfWork(sync, work, {
    cnfConcurrency: intFromEnv(env, "RESYNC_CNF_CONCURRENCY", 4),
  });
  logReport(ctx, work, report);
  return report.outcome;
}

export function createOnDeploymentReady(options: OnDeploymentReadyOptions = {}): EventFunction {
  return {
    name: "on-deployment-ready",
    kind: "event",
    async handle(event, ctx) {
      try {
        return await handle(event, ctx, options);
      } catch (error) {
        return kubeFailureOutcome(error, "reading the CNF and its rules");
      }
    },
  };
}

export const onDeploymentReady: EventFunction = createOnDeploymentReady();

export default onDeploymentReady;
