/**
 * clusterlink-export's one entry: an Export or Service event (or a resync) -> re-read the
 * Exports it concerns and the Services they name, plan their status (plan-export.ts), write it
 * only when it changed.
 *
 * Outcomes: done when every status is as planned (an Export found invalid through a Service
 * event or the resync is recorded as Stalled, still done: redelivery cannot fix it); permanent
 * for an Export event whose Export is invalid (422, Stalled); retry on API errors; malformed for
 * events of other kinds. In the resync an Export whose status cannot be written is reported on
 * itself (an Event) and skipped: the others are settled, the answer stays 202.
 */
import type { Log } from "../core/context.js";
import type { KubeObject, Service } from "../core/objects.js";
import { batchOutcome, done, malformed, permanent, type Outcome } from "../core/outcome.js";
import type { IntakeEvent } from "../events/index.js";
import {
  eachObject,
  isKubeError,
  kubeFailureOutcome,
  type EntryContext,
  retryOnConflict,
  type EventRecorder,
  type EventRegarding,
} from "../kube/index.js";
import { CLUSTERLINK_API_VERSION } from "../kinds/clusterlink.js";
import { observeExport, type ObservedExport } from "./observed.js";
import { planExport } from "./plan-export.js";
import { planStatus } from "./plan-status.js";
import { planClusterLinkEvents } from "./plan-events.js";
import { recordClusterLinkEvents } from "./record-events.js";
import type { ClusterLinkStore } from "./store.js";
import { kubeClusterLinkStore } from "./kube-store.js";
import { exportTriggerFromEvent, needsService, serviceNamespaces } from "./plan-export-scope.js";

export interface ExportEventOptions {
  /** RFC 3339 time for condition transitions. */
  readonly now: string;
  /** Where transitions an operator must see are recorded (plan-events.ts). */
  readonly events?: EventRecorder;
}

interface Target {
  readonly exp: ObservedExport;
  /** The Service it names, when one was read (undefined: absent or not needed). */
  readonly service: Service | undefined;
}

/** One Export: plan, write the status when it changed, say what happened. */
async function settleExport(
  store: ClusterLinkStore,
  target: Target,
  options: ExportEventOptions,
  fromExportEvent: boolean,
): Promise<Outcome> {
  const { exp, service } = target;
  const plan = planExport(exp, service);
  const status = planStatus(exp.status, plan.conditions, exp.generation, options.now);
  const key = { namespace: exp.namespace, name: exp.name };
  if (status.write !== null) {
    await store.patchExportStatus(key, status.write, { resourceVersion: exp.resourceVersion });
    await recordClusterLinkEvents(
      options.events,
      { kind: "Export", ...key, uid: exp.uid },
      planClusterLinkEvents(exp.status, plan.conditions),
    );
  }
  const written = status.write === null ? "unchanged" : "status written";
  const ref = `Export ${exp.namespace}/${exp.name}`;
  if (plan.verdict.kind === "valid") return done(`${ref} valid, ${written}`);
  if (fromExportEvent) return permanent(plan.verdict.reason, `${ref}: ${plan.verdict.message}`);
  return done(`${ref} stalled (${plan.verdict.reason}), ${written}`);
}

/** Re-reads one Export and its Service; conflicts re-read and re-plan. */
async function syncOneExport(
  store: ClusterLinkStore,
  key: { namespace: string; name: string },
  options: ExportEventOptions,
  fromExportEvent: boolean,
): Promise<Outcome> {
  return retryOnConflict({ attempts: 3 }, async () => {
    const object = await store.getExport(key);
    if (object === undefined) return done(`Export ${key.namespace}/${key.name} is gone`);
    const exp = observeExport(object);
    const service = needsService(exp) ? await store.getService(key) : undefined;
    return settleExport(store, { exp, service }, options, fromExportEvent);
  });
}

const exportRegarding = (exp: ObservedExport): EventRegarding => ({
  apiVersion: CLUSTERLINK_API_VERSION,
  kind: "Export",
  namespace: exp.namespace,
  name: exp.name,
  uid: exp.uid,
});

/**
 * The resync: every Export, with one Service list per namespace that needs one. An Export that
 * cannot be settled is reported on itself and skipped (eachObject); the others are settled.
 */
async function syncAllExports(
  store: ClusterLinkStore,
  namespace: string | undefined,
  log: Log,
  options: ExportEventOptions,
): Promise<Outcome> {
  const exports = (await store.listExports(namespace ? { namespace } : {})).map(observeExport);
  const namespaces = serviceNamespaces(exports);
  const services = new Map<string, KubeObject & Service>();
  for (const ns of namespaces) {
    for (const svc of await store.listServices({ namespace: ns })) {
      services.set(`${ns}/${svc.metadata.name}`, svc);
    }
  }
  const outcomes = await eachObject(
    exports,
    async (exp) => {
      const service = services.get(`${exp.namespace}/${exp.name}`);
      try {
        return await settleExport(store, { exp, service }, options, false);
      } catch (error) {
        // Changed since the list: its own event (or the next resync) brings it.
        if (!isKubeError(error, "conflict")) throw error;
        return done(`Export ${exp.namespace}/${exp.name} changed since the list`);
      }
    },
    { regarding: exportRegarding, log, events: options.events },
  );
  return outcomes.length === 0 ? done("no Export to verify") : batchOutcome(outcomes);
}

/** clusterlink-export's context: the API, the log, the clock, where Events go. */
export type ExportEventContext = EntryContext;

export async function syncExportEvent(
  event: IntakeEvent,
  ctx: ExportEventContext,
): Promise<Outcome> {
  const { kube, log } = ctx;
  const store = kubeClusterLinkStore(kube);
  const options: ExportEventOptions = {
    now: ctx.now(),
    ...(ctx.events ? { events: ctx.events } : {}),
  };
  const trigger = exportTriggerFromEvent(event);
  if (trigger.kind === "malformed") return malformed(trigger.code, trigger.reason);
  try {
    if (trigger.kind === "all") return await syncAllExports(store, trigger.namespace, log, options);
    const { namespace, name, fromExportEvent } = trigger;
    const outcome = await syncOneExport(store, { namespace, name }, options, fromExportEvent);
    log.debug({ kind: fromExportEvent ? "Export" : "Service", namespace, name }, "export verified");
    return outcome;
  } catch (error) {
    return kubeFailureOutcome(error, "verifying the Exports", {
      notFound: "raced",
      retryAfterSeconds: 5,
    });
  }
}
