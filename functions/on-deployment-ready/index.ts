/**
 * on-deployment-ready: add/update/delete of a CNF Deployment or Pod (label sdewanPurpose), and
 * the periodic resync -> bring every rule of that CNF in sync on every ready pod in one batch.
 * The event only names the object: shared/sync re-reads it, maps it to its CNF and does the rest
 * (syncCnfEvent). A CNF without ready pods is answered 202: its rules say why on their status,
 * and the next readiness change or resync brings them back (docs/resync.md).
 *
 * Environment: SYNC_POD_CONCURRENCY (pods of one CNF synced at once, default 4),
 * RESYNC_CNF_CONCURRENCY (CNFs of one resync at once, default 4).
 */
import {
  eventRecorder,
  functionDeps,
  positiveIntFromEnv,
  type FunctionDeps,
} from "../../shared/runtime/deps.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import { syncCnfEvent } from "../../shared/sync/index.js";

export function createOnDeploymentReady(given: Partial<FunctionDeps> = {}): EventFunction {
  const deps = functionDeps(given);
  const podConcurrency = positiveIntFromEnv(deps.env, "SYNC_POD_CONCURRENCY", 4);
  const cnfConcurrency = positiveIntFromEnv(deps.env, "RESYNC_CNF_CONCURRENCY", 4);
  return {
    name: "on-deployment-ready",
    kind: "event",
    handle: (event, ctx) =>
      syncCnfEvent(
        event,
        {
          ...ctx,
          kube: deps.kube().withCalls(ctx.calls),
          env: deps.env,
          now: () => deps.now().toISOString(),
          podConcurrency,
          events: eventRecorder(deps, "on-deployment-ready", ctx.calls),
        },
        cnfConcurrency,
      ),
  };
}

export const onDeploymentReady: EventFunction = createOnDeploymentReady();

export default onDeploymentReady;
