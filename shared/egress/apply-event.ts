/**
 * The effectful shell around the pure plans: observe through an EgressStore, plan which groups
 * the trigger touches, observe their candidates with server-side filtered lists, plan each group,
 * and write only the groups whose content changed. Knows nothing of HTTP or of the Kubernetes
 * client: kube-store.ts implements EgressStore over shared/kube.
 */
import pLimit from "p-limit";
import type { Log } from "../core/context.js";
import { done, type Outcome } from "../core/outcome.js";
import { eachObject } from "../kube/each-object.js";
import type { EventRecorder } from "../kube/event-recorder.js";
import { KubeError } from "../kube/errors.js";
import { raced } from "../kube/failure-outcome.js";
import type { ReadFreshness } from "../kube/freshness.js";
import { EGRESS_GROUP_API_VERSION, EGRESS_GROUP_KIND } from "../kinds/index.js";
import type { NamespaceLabels, PodKey, PodSnapshot } from "./membership.js";
import type { NamespaceSnapshot } from "./observed.js";
import { compareStrings } from "../core/order.js";
import { PodIndex } from "./pod-index.js";
import {
  planEgressGroup,
  type DesiredEgressGroup,
  type EgressGroupPlan,
  type EgressSnapshot,
  type GroupProblem,
  type ObservedEgressGroup,
} from "./plan-group.js";
import { podEventSelectors } from "./member-index.js";
import { planMembersChange, type MembersChange } from "./plan-events.js";
import {
  newerThanView,
  planMemberChange,
  planPodSelection,
  planPodTouches,
  type PodEventObservation,
} from "./plan-pod-event.js";
import {
  ELIGIBLE_POD_FIELD_SELECTOR,
  planNamespaceQuery,
  planPodQueries,
  planRecompute,
  type GroupToRecompute,
  type ListQuery,
  type RecomputeObservation,
  type RecomputeTrigger,
} from "./plan-scope.js";
import type { GroupLimits } from "./size.js";

/** What the shell reads and writes; every method may throw the store's own (retryable) errors. */
export interface EgressStore {
  /** "cached": from the API server's watch cache (shared/kube/freshness.ts). Default consistent. */
  listEgresses(freshness?: ReadFreshness): Promise<EgressSnapshot[]>;
  getEgress(name: string): Promise<EgressSnapshot | null>;
  listGroups(): Promise<ObservedEgressGroup[]>;
  getGroup(name: string): Promise<ObservedEgressGroup | null>;
  /** The groups matching a label selector (member-index.ts builds them). */
  listGroupsBySelector(
    labelSelector: string,
    freshness?: ReadFreshness,
  ): Promise<ObservedEgressGroup[]>;
  getPod(namespace: string, name: string): Promise<PodSnapshot | null>;
  getNamespace(name: string): Promise<NamespaceSnapshot | null>;
  listNamespaces(query: ListQuery): Promise<NamespaceSnapshot[]>;
  /** Pods matching `query`, narrowed with `fieldSelector` on the server. */
  listPods(query: ListQuery, fieldSelector: string): Promise<PodSnapshot[]>;
  /** Creates the group; resolves with its uid. */
  createGroup(desired: DesiredEgressGroup): Promise<string>;
  /** Replaces the group read at `resourceVersion`; fails (conflict) if it changed since. Its uid. */
  replaceGroup(desired: DesiredEgressGroup, resourceVersion: string): Promise<string>;
  deleteGroup(name: string): Promise<void>;
}

export interface ApplyOptions {
  /** RFC 3339 time for condition transitions. */
  readonly now: string;
  readonly limits?: GroupLimits;
  /** Concurrent list and write requests. Default 8. */
  readonly concurrency?: number;
  /**
   * Called once a write that changed the group's members succeeded (plan-events.ts), with the
   * group's uid; awaited, so it must be bounded (the Event recorder is).
   */
  readonly onMembersChanged?: (change: MembersChange, uid: string) => Promise<void>;
  /**
   * How fresh a Pod event's lists are: "cached" on an event's first attempt, "consistent" after a
   * refused write or a stale view (shared/kube/freshness.ts). Other triggers read consistently.
   * Default "consistent".
   */
  readonly freshness?: ReadFreshness;
  /** Where a group that could not be written is reported (eachObject); silent when absent. */
  readonly log?: Log;
  readonly events?: EventRecorder;
}

export interface GroupResult {
  readonly name: string;
  readonly action: EgressGroupPlan["action"];
  readonly memberCount: number | null;
  readonly problem: GroupProblem | null;
  /** Set when the group could not be written: reported on it and skipped, the others written. */
  readonly failure?: Outcome;
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

type Limit = ReturnType<typeof pLimit>;

const byName = <T extends { name: string }>(items: readonly T[]): Map<string, T> =>
  new Map(items.map((item) => [item.name, item]));

const listing = (groups: readonly ObservedEgressGroup[]): RecomputeObservation["groups"] =>
  groups.map((g) => ({ name: g.name, members: g.content.members }));

/** Step 1: what the trigger touches, and the Egresses and groups already read on the way. */
async function observeTrigger(
  store: EgressStore,
  trigger: Exclude<RecomputeTrigger, { kind: "pod" }>,
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
  const [egresses, groups] = await Promise.all([store.listEgresses(), store.listGroups()]);
  return {
    recompute: planRecompute(trigger, { egresses, groups: listing(groups) }),
    seen: { egresses: byName(egresses), groups: byName(groups) },
  };
}

/** Step 2: the Namespaces and Pods every recomputed Egress may select, filtered server-side. */
async function observeMembers(
  store: EgressStore,
  egresses: readonly EgressSnapshot[],
  limit: Limit,
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

/** Writes the plan; the group's uid when it was created or replaced. */
async function write(
  store: EgressStore,
  plan: EgressGroupPlan,
  existing: ObservedEgressGroup | null,
): Promise<string | null> {
  switch (plan.action) {
    case "create":
      return store.createGroup(plan.desired);
    case "update":
      return store.replaceGroup(plan.desired, existing?.resourceVersion ?? "");
    case "delete":
      await store.deleteGroup(plan.name);
      return null;
    case "unchanged":
      return null;
  }
}

const resultOf = (plan: EgressGroupPlan): GroupResult => ({
  name: plan.name,
  action: plan.action,
  memberCount: plan.desired?.content.memberCount ?? null,
  problem: plan.problem,
});

/** Full recomputes of `names`: observes their candidate Pods once, then plans each group. */
async function planRecomputes(
  store: EgressStore,
  names: readonly string[],
  seen: Candidates,
  options: ApplyOptions,
  limit: Limit,
): Promise<EgressGroupPlan[]> {
  const egresses = names.flatMap((name) => {
    const egress = seen.egresses.get(name);
    return egress === undefined ? [] : [egress];
  });
  const observed = await observeMembers(store, egresses, limit);
  const pods = new PodIndex(observed.pods);
  return names.map((name) =>
    planEgressGroup({
      name,
      egress: seen.egresses.get(name) ?? null,
      pods,
      namespaces: observed.namespaces,
      existing: seen.groups.get(name) ?? null,
      now: options.now,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
    }),
  );
}

const SILENT: Log = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

/**
 * Writes every plan (bounded), in the order given; reports each change of members written. A
 * group the API server refuses is reported on itself and skipped (eachObject); a race is the
 * recompute's.
 */
async function writeAll(
  store: EgressStore,
  plans: readonly EgressGroupPlan[],
  seen: Candidates,
  limit: Limit,
  options: ApplyOptions,
): Promise<GroupResult[]> {
  const outcomes = await eachObject(
    plans,
    (plan) =>
      limit(async () => {
        const existing = seen.groups.get(plan.name) ?? null;
        const uid = await write(store, plan, existing);
        const change = planMembersChange(existing, plan);
        if (uid !== null && change !== null) await options.onMembersChanged?.(change, uid);
        return done(plan.action);
      }),
    {
      regarding: (plan) => ({
        apiVersion: EGRESS_GROUP_API_VERSION,
        kind: EGRESS_GROUP_KIND,
        namespace: "",
        name: plan.name,
      }),
      log: options.log ?? SILENT,
      events: options.events,
      rethrow: raced,
      concurrency: plans.length,
    },
  );
  return plans.map((plan, i) => {
    const outcome = outcomes[i];
    return outcome === undefined || outcome.kind === "done"
      ? resultOf(plan)
      : { ...resultOf(plan), action: "unchanged", failure: outcome };
  });
}

/**
 * A Pod event: reads the groups the index selectors find (plan-pod-event.ts), changes the Pod's
 * entry in each (or recomputes it in full when that cannot be done), and writes those that changed.
 * Selecting groups the selectors do not return already list the Pod as it is: reported unchanged.
 */
async function applyPodTrigger(
  key: PodKey,
  store: EgressStore,
  options: ApplyOptions,
  limit: Limit,
): Promise<Omit<EventResult, "trigger">> {
  const freshness = options.freshness ?? "consistent";
  // Egresses may come from the watch cache: an Egress change has its own event, which recomputes
  // its group from consistent reads, and a group computed from a newer Egress than ours is never
  // acted on (newerThanView). The Pod and its Namespace are GETs, always fresh.
  const [egresses, pod, namespace] = await Promise.all([
    store.listEgresses(freshness),
    store.getPod(key.namespace, key.name),
    store.getNamespace(key.namespace),
  ]);
  const namespaces: NamespaceLabels =
    namespace === null ? new Map() : new Map([[namespace.name, namespace.labels]]);
  const observed: PodEventObservation = { key, pod, namespaces, egresses };
  const selection = planPodSelection(observed);
  const selectors = podEventSelectors(key, selection.member, selection.selecting);
  const lists = [selectors.listedElsewhere, selectors.missingOrStale].flatMap((selector) =>
    selector === null ? [] : [limit(() => store.listGroupsBySelector(selector, freshness))],
  );
  const found = (await Promise.all(lists)).flat();
  const egressByName = byName(egresses);
  for (const group of found) {
    const egress = egressByName.get(group.name) ?? null;
    const stale = newerThanView(group, egress, freshness === "cached");
    if (stale !== null) throw new KubeError("conflict", stale);
  }
  const recomputed = planPodTouches(observed, selection, found);
  const seen: Candidates = { egresses: egressByName, groups: byName(found) };
  const plans: EgressGroupPlan[] = [];
  const recompute: string[] = [];
  const asTheyAre: GroupResult[] = [];
  for (const { name } of recomputed) {
    const existing = seen.groups.get(name);
    if (existing === undefined) {
      asTheyAre.push({ name, action: "unchanged", memberCount: null, problem: null });
      continue;
    }
    const change = planMemberChange({
      name,
      egress: seen.egresses.get(name) ?? null,
      existing,
      observed,
      now: options.now,
      ...(options.limits === undefined ? {} : { limits: options.limits }),
    });
    if (change.kind === "plan") plans.push(change.plan);
    else recompute.push(name);
  }
  if (recompute.length > 0) {
    plans.push(...(await planRecomputes(store, recompute, seen, options, limit)));
  }
  const written = await writeAll(store, plans, seen, limit, options);
  const groups = [...written, ...asTheyAre].sort((a, b) => compareStrings(a.name, b.name));
  return { recomputed, groups };
}

/** Observes, plans and writes every group the trigger touches. Throws the store's errors. */
export async function applyEgressTrigger(
  trigger: RecomputeTrigger,
  store: EgressStore,
  options: ApplyOptions,
): Promise<EventResult> {
  const limit = pLimit(options.concurrency ?? 8);
  if (trigger.kind === "pod") {
    return { trigger, ...(await applyPodTrigger(trigger, store, options, limit)) };
  }
  const { recompute, seen } = await observeTrigger(store, trigger);
  if (recompute.length === 0) return { trigger, recomputed: recompute, groups: [] };
  const names = recompute.map((g) => g.name);
  const plans = await planRecomputes(store, names, seen, options, limit);
  return {
    trigger,
    recomputed: recompute,
    groups: await writeAll(store, plans, seen, limit, options),
  };
}
