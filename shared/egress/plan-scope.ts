/**
 * Events without memory: an update event does not carry the old object, so the set of groups to
 * recompute is derived from live state only (a Pod event is planned member by member instead, in
 * plan-pod-event.ts):
 * - Namespace event: every Egress whose namespaceSelector is set, plus every group listing a Pod of
 *   that Namespace (covers deleted Namespaces);
 * - Egress event: that Egress's group;
 * - resync: every Egress and every existing group (orphans are deleted).
 * A recompute is a full recomputation of the group, so duplicate and reordered events converge.
 *
 * It also plans the list requests that observe the candidates, pushing selectors to the API server.
 */
import type { IntakeEvent } from "../events/types.js";
import {
  compileAppliedTo,
  type CompiledAppliedTo,
  type NamespaceLabels,
  type PodKey,
} from "./membership.js";
import { compareStrings } from "../core/order.js";
import { EGRESS_KIND } from "../kinds/index.js";
import type { EgressSnapshot } from "./plan-group.js";
import { labelSelectorQuery, selectorMatches, selectsEverything } from "../core/label-selector.js";

export type RecomputeTrigger =
  | { readonly kind: "pod"; readonly namespace: string; readonly name: string }
  | { readonly kind: "namespace"; readonly name: string }
  | { readonly kind: "egress"; readonly name: string }
  | { readonly kind: "resync" };

export type TriggerClassification =
  | { readonly ok: true; readonly trigger: RecomputeTrigger }
  | { readonly ok: false; readonly code: "UnknownKind" | "MissingName"; readonly reason: string };

const CORE_KINDS: Readonly<Record<string, "pod" | "namespace">> = {
  Pod: "pod",
  Namespace: "namespace",
};

function apiVersionFits(kind: string, apiVersion: string): boolean {
  if (apiVersion === "") return true; // plain curl refs may omit it
  return kind === EGRESS_KIND ? apiVersion.startsWith("crd.antrea.io/") : apiVersion === "v1";
}

/**
 * Which recompute an intake event asks for. A namespaced resync scope is treated as a full resync:
 * Egresses are cluster-scoped, so no smaller set is cheaper to prove complete.
 */
export function triggerFromEvent(event: IntakeEvent): TriggerClassification {
  if (event.type === "resync") return { ok: true, trigger: { kind: "resync" } };
  const { kind, apiVersion, namespace, name } = event.ref;
  // Own keys only: a kind named "constructor" must not find Object.prototype's member.
  const core = Object.hasOwn(CORE_KINDS, kind) ? CORE_KINDS[kind] : undefined;
  const known = (core !== undefined || kind === EGRESS_KIND) && apiVersionFits(kind, apiVersion);
  if (!known) {
    const shown = apiVersion === "" ? kind : `${apiVersion} ${kind}`;
    return {
      ok: false,
      code: "UnknownKind",
      reason: `egress-group-sync does not handle ${shown} events`,
    };
  }
  if (name === "" || (core === "pod" && namespace === "")) {
    return {
      ok: false,
      code: "MissingName",
      reason: `${kind} event without ${name === "" ? "name" : "namespace"}`,
    };
  }
  if (core === "pod") return { ok: true, trigger: { kind: "pod", namespace, name } };
  if (core === "namespace") return { ok: true, trigger: { kind: "namespace", name } };
  return { ok: true, trigger: { kind: "egress", name } };
}

/** An existing group reduced to what recompute planning reads. */
export interface GroupListing {
  readonly name: string;
  readonly members: readonly { readonly pod: PodKey }[];
}

export interface RecomputeObservation {
  readonly egresses: readonly EgressSnapshot[];
  readonly groups: readonly GroupListing[];
}

export interface GroupToRecompute {
  readonly name: string;
  /** Why, for the log line ("has the pod as a member", "lists the pod", ...). */
  readonly reasons: readonly string[];
}

class RecomputeSet {
  private readonly reasons = new Map<string, string[]>();
  add(name: string, reason: string): void {
    const list = this.reasons.get(name) ?? [];
    list.push(reason);
    this.reasons.set(name, list);
  }
  sorted(): GroupToRecompute[] {
    return [...this.reasons.entries()]
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([name, reasons]) => ({ name, reasons }));
  }
}

function validAppliedTo(egress: EgressSnapshot): CompiledAppliedTo | null {
  const compiled = compileAppliedTo(egress.appliedTo);
  return compiled.ok ? compiled.appliedTo : null;
}

function addGroupsListing(
  set: RecomputeSet,
  groups: readonly GroupListing[],
  lists: (pod: PodKey) => boolean,
  reason: string,
): void {
  for (const group of groups) {
    if (group.members.some((m) => lists(m.pod))) set.add(group.name, reason);
  }
}

function planForNamespace(name: string, observed: RecomputeObservation, set: RecomputeSet): void {
  for (const egress of observed.egresses) {
    const selector = egress.appliedTo.namespaceSelector;
    if (selector !== null && selector !== undefined) set.add(egress.name, "selects namespaces");
  }
  addGroupsListing(
    set,
    observed.groups,
    (p) => p.namespace === name,
    "lists a pod of the namespace",
  );
}

/** The groups (by name, sorted) that a trigger makes us recompute. */
export function planRecompute(
  trigger: Exclude<RecomputeTrigger, { kind: "pod" }>,
  observed: RecomputeObservation,
): GroupToRecompute[] {
  const set = new RecomputeSet();
  switch (trigger.kind) {
    case "namespace":
      planForNamespace(trigger.name, observed, set);
      break;
    case "egress":
      set.add(trigger.name, "egress event");
      break;
    case "resync":
      for (const egress of observed.egresses) set.add(egress.name, "resync");
      for (const group of observed.groups) set.add(group.name, "resync");
      break;
  }
  return set.sorted();
}

/** Server-side filter that already drops unscheduled and terminated Pods. */
export const ELIGIBLE_POD_FIELD_SELECTOR =
  "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed";

/** One list request. namespace "" = all namespaces; labelSelector "" = no label filter. */
export interface ListQuery {
  readonly namespace: string;
  readonly labelSelector: string;
}

export interface ObservationLimits {
  /** Above this many distinct Pod lists, one unfiltered list is cheaper. */
  readonly maxPodLists: number;
  /** An Egress whose namespaceSelector matches at most this many Namespaces lists them one by one. */
  readonly maxNamespacesListedSeparately: number;
}

export const DEFAULT_OBSERVATION_LIMITS: ObservationLimits = {
  maxPodLists: 8,
  maxNamespacesListedSeparately: 4,
};

const compiledEgresses = (egresses: readonly EgressSnapshot[]): CompiledAppliedTo[] =>
  egresses.flatMap((e) => {
    const appliedTo = validAppliedTo(e);
    return appliedTo === null ? [] : [appliedTo];
  });

/**
 * The Namespace list needed before the Pods can be judged: null when no Egress constrains
 * Namespaces, the selector's own query when they all use the same one, else all Namespaces.
 */
export function planNamespaceQuery(egresses: readonly EgressSnapshot[]): ListQuery | null {
  const queries = new Set<string>();
  for (const appliedTo of compiledEgresses(egresses)) {
    if (appliedTo.pods.kind === "nothing" || selectsEverything(appliedTo.namespaces)) continue;
    queries.add(labelSelectorQuery(appliedTo.namespaces) ?? "");
  }
  if (queries.size === 0) return null;
  const [only] = queries;
  return { namespace: "", labelSelector: queries.size === 1 && only !== undefined ? only : "" };
}

function podQueriesFor(
  appliedTo: CompiledAppliedTo,
  namespaces: NamespaceLabels,
  limits: ObservationLimits,
): ListQuery[] {
  const labelSelector = labelSelectorQuery(appliedTo.pods);
  if (labelSelector === null) return [];
  if (selectsEverything(appliedTo.namespaces)) return [{ namespace: "", labelSelector }];
  const matching = [...namespaces].filter(([, labels]) =>
    selectorMatches(appliedTo.namespaces, labels),
  );
  if (matching.length > limits.maxNamespacesListedSeparately)
    return [{ namespace: "", labelSelector }];
  return matching.map(([namespace]) => ({ namespace, labelSelector }));
}

/**
 * The Pod lists whose union holds every member of every given Egress (each with
 * ELIGIBLE_POD_FIELD_SELECTOR). `namespaces` is the result of planNamespaceQuery's list.
 */
export function planPodQueries(
  egresses: readonly EgressSnapshot[],
  namespaces: NamespaceLabels,
  limits: ObservationLimits = DEFAULT_OBSERVATION_LIMITS,
): ListQuery[] {
  const byKey = new Map<string, ListQuery>();
  for (const appliedTo of compiledEgresses(egresses)) {
    for (const query of podQueriesFor(appliedTo, namespaces, limits)) {
      byKey.set(`${query.namespace}\u0000${query.labelSelector}`, query);
    }
  }
  const queries = [...byKey.values()];
  const everything = queries.some((q) => q.namespace === "" && q.labelSelector === "");
  if (everything || queries.length > limits.maxPodLists)
    return [{ namespace: "", labelSelector: "" }];
  return queries.sort(
    (a, b) =>
      compareStrings(a.namespace, b.namespace) || compareStrings(a.labelSelector, b.labelSelector),
  );
}
