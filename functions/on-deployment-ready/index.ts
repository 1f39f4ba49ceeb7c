/**
 * on-deployment-ready: add/update/delete of a CNF Deployment or Pod (label sdewanPurpose), and
 * the periodic resync -> bring every rule of that CNF in sync on every ready pod in one batch.
 * The event only names the object: shared/sync re-reads it, maps it to its CNF and does the rest
 * (syncCnfEvent). A CNF without ready pods is answered 202: its rules say why on their status,
 * and the next readiness change or resync brings them back (docs/resync.md).
 *
 * Environment: SYNC_POD_CONCURRENCY (pods of one CNF synced at once, default 4),
 * RESYNC_CNF_CONCURRENCY (CNFs of one resync at once, default 4), CNF_SYNC_LEASE_SECONDS (how
 * long a CNF's sync Lease holds, default 30) and CNF_SYNC_LEASE_WAIT_MS (how long a second
 * event of the same CNF waits for it, default 20000): one sync per CNF at a time (ADR 0008).
 */
import {
  eventRecorder,
  functionDeps,
  positiveIntFromEnv,
  type FunctionDeps,
} from "../../shared/runtime/deps.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import { ledgerNamespace, syncCnfEvent } from "../../shared/sync/index.js";

export function createOnDeploymentReady(given: Partial<FunctionDeps> = {}): EventFunction {
  const deps = functionDeps(given);
  const podConcurrency = positiveIntFromEnv(deps.env, "SYNC_POD_CONCURRENCY", 4);
  const cnfConcurrency = positiveIntFromEnv(deps.env, "RESYNC_CNF_CONCURRENCY", 4);
  const cnfLease = {
    namespace: ledgerNamespace(deps.env),
    seconds: positiveIntFromEnv(deps.env, "CNF_SYNC_LEASE_SECONDS", 30),
    waitMs: positiveIntFromEnv(deps.env, "CNF_SYNC_LEASE_WAIT_MS", 20_000),
  };
  return {
    name: "on-deployment-ready",
    kind: "event",
    handle: (event, ctx) =>
      syncCnfEvent(event, {
        ...ctx,
        kube: deps.kube().withCalls(ctx.calls),
        env: deps.env,
        now: () => deps.now().toISOString(),
        podConcurrency,
        cnfConcurrency,
        cnfLease,
        events: eventRecorder(deps, "on-deployment-ready", ctx.calls),
        onCnfsSynced: (counts, complete) => ctx.metrics?.setRulesNotInSync(counts, complete),
      }),
  };
}

export const onDeploymentReady: EventFunction = createOnDeploymentReady();

export default onDeploymentReady;
