/**
 * Which Pods an Antrea Egress selects, as antrea-controller computes it (reference A.4): its
 * appliedTo's podSelector and namespaceSelector, ANDed when both (`appliedTo: {}` selects
 * nothing), then without unscheduled, host-network and terminated Pods. A Pod selected by several
 * Egresses is a member of each group (Antrea's agent picks the effective one).
 * The selection table: docs/code-notes.md (egress/membership.ts).
 */
import { compareStrings } from "../core/order.js";
import { PodIndex } from "./pod-index.js";
import type { AppliedTo, CompiledAppliedTo, NamespaceLabels, PodSnapshot } from "./snapshot.js";

export type { AppliedTo, CompiledAppliedTo, NamespaceLabels, PodSnapshot } from "./snapshot.js";
import {
  compileLabelSelector,
  selectorMatches,
  selectsEverything,
  SELECTS_EVERYTHING,
  SELECTS_NOTHING,
  type LabelSelector,
  type SelectorError,
} from "../core/label-selector.js";

export type AppliedToCompilation =
  | { readonly ok: true; readonly appliedTo: CompiledAppliedTo }
  | { readonly ok: false; readonly errors: readonly SelectorError[] };

const isSet = (selector: LabelSelector | null | undefined): selector is LabelSelector =>
  selector !== null && selector !== undefined;

/** Validates and compiles spec.appliedTo; errors carry paths under `path`. */
export function compileAppliedTo(
  appliedTo: AppliedTo,
  path = "spec.appliedTo",
): AppliedToCompilation {
  const { podSelector, namespaceSelector } = appliedTo;
  if (!isSet(podSelector) && !isSet(namespaceSelector)) {
    return { ok: true, appliedTo: { pods: SELECTS_NOTHING, namespaces: SELECTS_NOTHING } };
  }
  const pods = isSet(podSelector)
    ? compileLabelSelector(podSelector, `${path}.podSelector`)
    : ({ ok: true, selector: SELECTS_EVERYTHING } as const);
  const namespaces = isSet(namespaceSelector)
    ? compileLabelSelector(namespaceSelector, `${path}.namespaceSelector`)
    : ({ ok: true, selector: SELECTS_EVERYTHING } as const);
  if (!pods.ok || !namespaces.ok) {
    return {
      ok: false,
      errors: [...(pods.ok ? [] : pods.errors), ...(namespaces.ok ? [] : namespaces.errors)],
    };
  }
  return { ok: true, appliedTo: { pods: pods.selector, namespaces: namespaces.selector } };
}

export type PodExclusion = "NotScheduled" | "HostNetwork" | "Terminated";

/** Why a Pod can never be an Egress member in its current state, or null when it can be. */
export function podExclusion(pod: PodSnapshot): PodExclusion | null {
  if (pod.nodeName === "") return "NotScheduled";
  if (pod.hostNetwork) return "HostNetwork";
  if (pod.phase === "Succeeded" || pod.phase === "Failed") return "Terminated";
  return null;
}

/** Label selection only (no exclusions): does appliedTo pick this Pod? */
export function appliedToSelects(
  appliedTo: CompiledAppliedTo,
  pod: PodSnapshot,
  namespaces: NamespaceLabels,
): boolean {
  if (!selectorMatches(appliedTo.pods, pod.labels)) return false;
  // An empty namespaceSelector skips the Namespace check entirely, as Antrea's index does.
  if (selectsEverything(appliedTo.namespaces)) return true;
  const namespaceLabels = namespaces.get(pod.namespace);
  return namespaceLabels !== undefined && selectorMatches(appliedTo.namespaces, namespaceLabels);
}

/** Selected by appliedTo and not excluded. */
export function isEgressMember(
  appliedTo: CompiledAppliedTo,
  pod: PodSnapshot,
  namespaces: NamespaceLabels,
): boolean {
  return podExclusion(pod) === null && appliedToSelects(appliedTo, pod, namespaces);
}

export interface PodKey {
  readonly name: string;
  readonly namespace: string;
}

export interface GroupMember {
  readonly pod: PodKey;
  readonly nodeName: string;
  readonly ips: readonly string[];
}

/** Deterministic member order: namespace, then name (code-point order, locale-independent). */
export function compareMembers(a: GroupMember, b: GroupMember): number {
  return compareStrings(a.pod.namespace, b.pod.namespace) || compareStrings(a.pod.name, b.pod.name);
}

/** A Pod's entry in a group. */
export const memberOf = (pod: PodSnapshot): GroupMember => ({
  pod: { name: pod.name, namespace: pod.namespace },
  nodeName: pod.nodeName,
  ips: [...pod.ips],
});

/**
 * The members of one Egress group, sorted. `pods` and `namespaces` may be any superset of the
 * relevant objects (e.g. the union of several list requests); duplicates of a Pod are ignored.
 * Pass a PodIndex when computing several groups from the same Pods.
 */
export function computeMembers(
  appliedTo: CompiledAppliedTo,
  pods: PodIndex | Iterable<PodSnapshot>,
  namespaces: NamespaceLabels,
): GroupMember[] {
  const members: GroupMember[] = [];
  for (const pod of PodIndex.of(pods).candidates(appliedTo, namespaces)) {
    if (isEgressMember(appliedTo, pod, namespaces)) members.push(memberOf(pod));
  }
  return members.sort(compareMembers);
}
