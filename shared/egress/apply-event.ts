/**
 * The effectful shell around the pure plans: observe through an EgressStore, plan which groups
 * the trigger touches, observe their candidates with server-side filtered lists, plan each group,
 * and write only the groups whose content changed. Knows nothing of HTTP or of the Kubernetes
 * client: functions/egress-group-sync implements EgressStore over shared/kube.
 */
import pLimit from "p-limit";
import type { NamespaceLabels, PodSnapshot } from "./membership.js";
import type { NamespaceSnapshot } from "./observed.js";
import { PodIndex } from "./pod-index.js";
import {
  planEgressGroup,
  type DesiredEgressGroup,
  type EgressGroupPlan,
  type EgressSnapshot,
  type GroupProblem,
  type ObservedEgressGroup,
} from "./plan-group.js";
import {
  ELIGIBLE_POD_FIELD_SELECTOR,
  planNamespaceQuery,
  planPodQueries,
  planRecompute,
  type GroupToRecompute,
  type ListQuery,
  type RecomputeObservation,
  type RecomputeTrigger,
} from "./plan-recompute.js";
import type { GroupLimits } from "./size.js";

/** What the shell reads and writes; every method may throw the store's own (retryable) errors. */
export interface EgressStore {
  listEgresses(): Promise<EgressSnapshot[]>;
  getEgress(name: string): Promise<EgressSnapshot | null>;
  listGroups(): Promise<ObservedEgressGroup[]>;
  getGroup(name: string): Promise<ObservedEgressGroup | null>;
  getPod(namespace: string, name: string): Promise<PodSnapshot | null>;
  getNamespace(name: string): Promise<NamespaceSnapshot | null>;
  listNamespaces(query: ListQuery): Promise<NamespaceSnapshot[]>;
  /** Pods matching `query`, narrowed with `fieldSelector` on the server. */
  listPods(query: ListQuery, fieldSelector: string): Promise<PodSnapshot[]>;
  createGroup(desired: DesiredEgressGroup): Promise<void>;
  /** Replaces the group read at `resourceVersion`; fails (conflict) if it changed since. */
  replaceGroup(desired: DesiredEgressGroup, resourceVersion: string): Promise<void>;
  deleteGroup(name: string): Promise<void>;
}

export interface ApplyOptions {
  /** RFC 3339 time for condition transitions. */
  readonly now: string;
  readonly limits?: GroupLimits;
  /** Concurrent list and write requests. Default 8. */
  readonly concurrency?: number;
}

export interface GroupResult {
  readonly name: string;
  readonly action: EgressGroupPlan["action"];
  readonly memberCount: number | null;
  readonly problem: GroupProblem | null;
}

export interface EventResult {
  readonly trigger: RecomputeTrigger;
  /** The groups the trigger made us recompute, with why. */
  readonly recomputed: readonly GroupToRecompute[];
  readonly groups: readonly GroupResult[];
}

interface Candidates {
  readonly egresses: ReadonlyMap<string, EgressSnapshot>;
  readonly groups: ReadonlyMap<string, ObservedEgressGroup>;
}

const byName = <T extends { name: string }>(items: readonly T[]): Map<string, T> =>
  new Map(items.map((item) => [item.name, item]));

const listing = (groups: readonly ObservedEgressGroup[]): RecomputeObservation["groups"] =>
  groups.map((g) => ({ name: g.name, members: g.content.members }));

async function observeForPod(
  store: EgressStore,
  trigger: { namespace: string; name: string },
): Promise<Omit<RecomputeObservation, "groups"> & { groups: ObservedEgressGroup[] }> {
  const [egresses, groups, pod, namespace] = await Promise.all([
    store.listEgresses(),
    store.listGroups(),
    store.getPod(trigger.namespace, trigger.name),
    store.getNamespace(trigger.namespace),
  ]);
  const namespaces: NamespaceLabels =
    namespace === null ? new Map() : new Map([[namespace.name, namespace.labels]]);
  return { egresses, groups, pod, namespaces };
}

/** Step 1: what the trigger touches, and the Egresses and groups already read on the way. */
async function observeTrigger(
  store: EgressStore,
  trigger: RecomputeTrigger,
): Promise<{ recompute: GroupToRecompute[]; seen: Candidates }> {
  if (trigger.kind === "egress") {
    const [egress, group] = await Promise.all([
      store.getEgress(trigger.name),
      store.getGroup(trigger.name),
    ]);
    return {
      recompute: planRecompute(trigger, { egresses: [], groups: [] }),
      seen: {
        egresses: byName(egress === null ? [] : [egress]),
        groups: byName(group === null ? [] : [group]),
      },
    };
  }
  const observed =
    trigger.kind === "pod"
      ? await observeForPod(store, trigger)
      : await Promise.all([store.listEgresses(), store.listGroups()]).then(
          ([egresses, groups]) => ({ egresses, groups }),
        );
  return {
    recompute: planRecompute(trigger, { ...observed, groups: listing(observed.groups) }),
    seen: { egresses: byName(observed.egresses), groups: byName(observed.groups) },
  };
}

/** Step 2: the Namespaces and Pods every recomputed Egress may select, filtered server-side. */
async function observeMembers(
  store: EgressStore,
  egresses: readonly EgressSnapshot[],
  limit: ReturnType<typeof pLimit>,
): Promise<{ pods: PodSnapshot[]; namespaces: NamespaceLabels }> {
  const namespaceQuery = planNamespaceQuery(egresses);
  const namespaceList = namespaceQuery === null ? [] : await store.listNamespaces(namespaceQuery);
  const namespaces = new Map(namespaceList.map((ns) => [ns.name, ns.labels]));
  const podLists = await Promise.all(
    planPodQueries(egresses, namespaces).map((query) =>
      limit(() => store.listPods(query, ELIGIBLE_POD_FIELD_SELECTOR)),
    ),
  );
  return { pods: podLists.flat(), namespaces };
}

async function write(
  store: EgressStore,
  plan: EgressGroupPlan,
  existing: ObservedEgressGroup | null,
): Promise<void> {
  switch (plan.action) {
    case "create":
      return store.createGroup(plan.desired);
    case "update":
      return store.replaceGroup(plan.desired, existing?.resourceVersion ?? "");
    case "delete":
      return store.deleteGroup(plan.name);
    case "unchanged":
      return;
  }
}

/** Observes, plans and writes every group the trigger touches. Throws the store's errors. */
export async function applyEgressTrigger(
  trigger: RecomputeTrigger,
  store: EgressStore,
  options: ApplyOptions,
): Promise<EventResult> {
  const limit = pLimit(options.concurrency ?? 8);
  const { recompute, seen } = await observeTrigger(store, trigger);
  if (recompute.length === 0) return { trigger, recomputed: recompute, groups: [] };
  const egresses = recompute.flatMap((g) => {
    const egress = seen.egresses.get(g.name);
    return egress === undefined ? [] : [egress];
  });
  const observed = await observeMembers(store, egresses, limit);
  const pods = new PodIndex(observed.pods);
  const { namespaces } = observed;
  const results = await Promise.all(
    recompute.map(({ name }) =>
      limit(async (): Promise<GroupResult> => {
        const existing = seen.groups.get(name) ?? null;
        const plan = planEgressGroup({
          name,
          egress: seen.egresses.get(name) ?? null,
          pods,
          namespaces,
          existing,
          now: options.now,
          ...(options.limits === undefined ? {} : { limits: options.limits }),
        });
        await write(store, plan, existing);
        return {
          name,
          action: plan.action,
          memberCount: plan.desired?.content.memberCount ?? null,
          problem: plan.problem,
        };
      }),
    ),
  );
  return { trigger, recomputed: recompute, groups: results };
}
