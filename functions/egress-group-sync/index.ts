/**
 * egress-group-sync: add/update/delete of an Antrea Egress, a Pod or a Namespace (or a resync) ->
 * recompute the EgressGroup of every affected Egress from live state and write it only if it
 * changed. The event is a hint: it only says which groups to look at (shared/egress).
 *
 * Outcomes: done (202) when every touched group is as planned, also when a group is Stalled
 * because of a Pod or Namespace event (the group records it; redelivery cannot help); permanent
 * (422) for an Egress event whose Egress has an invalid selector or too many members; retry (503)
 * on API errors and after repeated write conflicts; malformed (400) for events of other kinds.
 */
import {
  applyEgressTrigger,
  triggerFromEvent,
  type EventResult,
  type GroupLimits,
  type GroupResult,
} from "../../shared/egress/index.js";
import { isKubeError } from "../../shared/kube/errors.js";
import type { KubeClient } from "../../shared/kube/index.js";
import type { EventFunction, HandlerContext } from "../../shared/runtime/function.js";
import {
  done,
  malformed,
  permanent,
  retryLater,
  type Outcome,
} from "../../shared/runtime/outcome.js";
import type { IntakeEvent } from "../../shared/events/types.js";
import { kubeEgressStore } from "./store.js";

export interface EgressGroupSyncOptions {
  /** The API client; default: KUBECONFIG or in-cluster, created on the first event. */
  readonly kube?: KubeClient;
  readonly now?: () => Date;
  readonly limits?: GroupLimits;
  /** Whole recomputes tried when a write hits a conflict. Default 3. */
  readonly maxConflictAttempts?: number;
}

const PAST: Readonly<Record<GroupResult["action"], string>> = {
  create: "created",
  update: "updated",
  delete: "deleted",
  unchanged: "unchanged",
};

function describeGroup(group: GroupResult): string {
  const members = group.memberCount === null ? "" : ` (${group.memberCount} members)`;
  const stalled = group.problem === null ? "" : `, stalled: ${group.problem.reason}`;
  return `EgressGroup ${group.name} ${PAST[group.action]}${members}${stalled}`;
}

function summary(result: EventResult): string {
  const { groups, trigger } = result;
  if (groups.length === 0) {
    const what =
      trigger.kind === "pod" ? `pod ${trigger.namespace}/${trigger.name}` : `${trigger.kind}`;
    return `unchanged: no Egress selects or lists ${what}`;
  }
  const [only] = groups;
  if (groups.length === 1 && only !== undefined) return describeGroup(only);
  const counts = new Map<string, number>();
  for (const g of groups) counts.set(PAST[g.action], (counts.get(PAST[g.action]) ?? 0) + 1);
  const stalled = groups.filter((g) => g.problem !== null).map((g) => g.name);
  const parts = [...counts].map(([action, n]) => `${n} ${action}`).join(", ");
  return `${groups.length} EgressGroups recomputed: ${parts}${stalled.length > 0 ? `; stalled: ${stalled.join(", ")}` : ""}`;
}

function outcomeOf(result: EventResult): Outcome {
  const { trigger, groups } = result;
  const problem = groups[0]?.problem ?? null;
  if (trigger.kind === "egress" && problem !== null) {
    return permanent(problem.reason, `EgressGroup ${trigger.name}: ${problem.message}`);
  }
  return done(summary(result));
}

export function createEgressGroupSync(options: EgressGroupSyncOptions = {}): EventFunction {
  let defaultKube: Promise<KubeClient> | undefined;
  // Loaded on the first event, so importing the function (the server, unit tests) does not load
  // the ESM-only Kubernetes client or require a KUBECONFIG.
  const kubeClient = (): Promise<KubeClient> =>
    options.kube !== undefined
      ? Promise.resolve(options.kube)
      : (defaultKube ??= import("../../shared/kube/client.js")
          .then((m) => m.createKubeClient())
          .catch((error: unknown) => {
            defaultKube = undefined; // e.g. no KUBECONFIG yet: try again on the next event
            throw error;
          }));
  const maxAttempts = options.maxConflictAttempts ?? 3;

  async function handle(event: IntakeEvent, ctx: HandlerContext): Promise<Outcome> {
    const classified = triggerFromEvent(event);
    if (!classified.ok) return malformed(classified.code, classified.reason);
    const store = kubeEgressStore((await kubeClient()).withCalls(ctx.calls));
    for (let attempt = 1; ; attempt += 1) {
      try {
        const now = (options.now?.() ?? new Date()).toISOString();
        const result = await applyEgressTrigger(classified.trigger, store, {
          now,
          ...(options.limits === undefined ? {} : { limits: options.limits }),
        });
        ctx.log.debug({ recomputed: result.recomputed }, "egress groups recomputed");
        return outcomeOf(result);
      } catch (error) {
        // A concurrent writer changed (or deleted) a group between our read and our write:
        // recompute from scratch.
        const raced = isKubeError(error, "conflict") || isKubeError(error, "notFound");
        if (raced && attempt < maxAttempts) continue;
        if (raced) return retryLater((error as Error).message);
        if (isKubeError(error) && (error.retryable || error.code === "forbidden")) {
          return retryLater(error.message);
        }
        throw error;
      }
    }
  }

  return { name: "egress-group-sync", kind: "event", handle };
}

export const egressGroupSync: EventFunction = createEgressGroupSync();

export default egressGroupSync;
