/**
 * A Pod event changes at most that Pod's entry in each group, so it is planned as one member
 * change per group (the groups found by the member index's two selectors) instead of a
 * recomputation from every candidate Pod; a group that is not current goes to the full
 * recompute, so every shortcut yields what a recompute would. Lost events and groups edited
 * behind our back are healed by the resync. Details: docs/code-notes.md (egress/plan-pod-event.ts).
 */
import {
  compileAppliedTo,
  compareMembers,
  isEgressMember,
  memberOf,
  type GroupMember,
  type NamespaceLabels,
  type PodKey,
  type PodSnapshot,
} from "./membership.js";
import { compareStrings } from "../core/order.js";
import {
  planEgressGroup,
  planWithContent,
  sameMember,
  type EgressGroupPlan,
  type EgressSnapshot,
  type ObservedEgressGroup,
} from "./plan-group.js";
import type { GroupToRecompute } from "./plan-scope.js";
import { DEFAULT_GROUP_LIMITS, groupSizeProblem, type GroupLimits } from "./size.js";

export interface PodEventObservation {
  /** The Pod the event names. */
  readonly key: PodKey;
  /** The live Pod, or null when it is gone. */
  readonly pod: PodSnapshot | null;
  /** The labels of the Pod's Namespace (absent when the Namespace is gone). */
  readonly namespaces: NamespaceLabels;
  readonly egresses: readonly EgressSnapshot[];
}

const samePod = (a: PodKey, b: PodKey): boolean => a.namespace === b.namespace && a.name === b.name;

/** The member `egress` wants for the Pod: its entry when selected, null when not (or invalid). */
function wantedMember(
  egress: EgressSnapshot,
  pod: PodSnapshot | null,
  namespaces: NamespaceLabels,
): GroupMember | null {
  if (pod === null) return null;
  const compiled = compileAppliedTo(egress.appliedTo);
  return compiled.ok && isEgressMember(compiled.appliedTo, pod, namespaces) ? memberOf(pod) : null;
}

export interface PodSelection {
  /** Names of the Egresses that select the Pod now, sorted. */
  readonly selecting: readonly string[];
  /** The Pod's entry in their groups; null when none selects it. */
  readonly member: GroupMember | null;
}

/** Which Egresses select the Pod now, and its entry in their groups. */
export function planPodSelection(observed: PodEventObservation): PodSelection {
  const selecting = observed.egresses
    .filter((e) => wantedMember(e, observed.pod, observed.namespaces) !== null)
    .map((e) => e.name)
    .sort(compareStrings);
  const member = selecting.length > 0 && observed.pod !== null ? memberOf(observed.pod) : null;
  return { selecting: [...new Set(selecting)], member };
}

/**
 * The groups (sorted, with why) a Pod event touches: the selecting ones, and those `found` (by
 * the index selectors) that list the Pod. Only the found ones need reading and planning.
 */
export function planPodTouches(
  observed: PodEventObservation,
  selection: PodSelection,
  found: readonly ObservedEgressGroup[],
): GroupToRecompute[] {
  const reasons = new Map<string, string[]>();
  const add = (name: string, reason: string): void => {
    reasons.set(name, [...(reasons.get(name) ?? []), reason]);
  };
  for (const name of selection.selecting) add(name, "has the pod as a member");
  for (const group of found) {
    if (group.content.members.some((m) => samePod(m.pod, observed.key))) {
      add(group.name, "lists the pod");
    }
  }
  return [...reasons.entries()]
    .sort(([a], [b]) => compareStrings(a, b))
    .map(([name, why]) => ({ name, reasons: why }));
}

/** `members` (sorted) with the entry of `key` replaced, inserted or removed; the same array if unchanged. */
export function withMember(
  members: readonly GroupMember[],
  key: PodKey,
  member: GroupMember | null,
): readonly GroupMember[] {
  const probe: GroupMember = member ?? { pod: key, nodeName: "", ips: [] };
  const at = members.findIndex((m) => compareMembers(m, probe) >= 0);
  const index = at === -1 ? members.length : at;
  const current = members[index];
  const listed = current !== undefined && samePod(current.pod, key);
  if (member === null) {
    return listed ? members.toSpliced(index, 1) : members;
  }
  if (listed) return sameMember(current, member) ? members : members.with(index, member);
  return members.toSpliced(index, 0, member);
}

/**
 * Why `group` may have been computed from a newer Egress than `egress`, the one in our view: a
 * higher generation; or, when the view came from the watch cache, another owner or no Egress at
 * all (a consistent view that lacks it is the truth: the group is then deleted). Acting on such a
 * view could write an older selection over a newer one, so the event re-reads consistently
 * instead (shared/kube/freshness.ts). Null when the view is at least as new as the group.
 */
export function newerThanView(
  group: ObservedEgressGroup,
  egress: EgressSnapshot | null,
  cachedView: boolean,
): string | null {
  if (egress === null) return cachedView ? `Egress ${group.name} not in the cached view` : null;
  if (group.ownerUid !== null && group.ownerUid !== egress.uid) {
    return cachedView ? `EgressGroup ${group.name} is owned by another Egress` : null;
  }
  const seen = Math.max(
    group.content.egressGeneration,
    ...group.conditions.map((c) => c.observedGeneration),
  );
  return seen > egress.generation
    ? `EgressGroup ${group.name} reflects Egress generation ${seen}, newer than ${egress.generation}`
    : null;
}

/** Ready, computed from this very Egress generation and owner, with an intact member index. */
function isCurrent(group: ObservedEgressGroup, egress: EgressSnapshot): boolean {
  const [ready, ...others] = group.conditions;
  return (
    group.indexed &&
    group.ownerUid === egress.uid &&
    group.content.egressGeneration === egress.generation &&
    group.content.memberCount === group.content.members.length &&
    others.length === 0 &&
    ready?.type === "Ready" &&
    ready.status === "True" &&
    ready.observedGeneration === egress.generation
  );
}

export interface MemberChangeInput {
  readonly name: string;
  readonly egress: EgressSnapshot | null;
  readonly existing: ObservedEgressGroup | null;
  readonly observed: PodEventObservation;
  readonly now: string;
  readonly limits?: GroupLimits;
}

export type MemberChangePlan =
  | { readonly kind: "plan"; readonly plan: EgressGroupPlan }
  | { readonly kind: "recompute"; readonly reason: string };

/** One group's plan for a Pod event, or why it needs a full recompute instead. */
export function planMemberChange(input: MemberChangeInput): MemberChangePlan {
  const { name, egress, existing, observed, now } = input;
  if (egress === null) {
    const plan = planEgressGroup({ name, egress, pods: [], namespaces: new Map(), existing, now });
    return { kind: "plan", plan };
  }
  if (existing === null) return { kind: "recompute", reason: "no group yet" };
  if (!isCurrent(existing, egress)) return { kind: "recompute", reason: "group not current" };
  const member = wantedMember(egress, observed.pod, observed.namespaces);
  const members = withMember(existing.content.members, observed.key, member);
  if (groupSizeProblem(members, input.limits ?? DEFAULT_GROUP_LIMITS) !== null) {
    return { kind: "recompute", reason: "over the size budget" };
  }
  const content = { egressGeneration: egress.generation, memberCount: members.length, members };
  return {
    kind: "plan",
    plan: planWithContent(name, egress, existing, { content, problem: null }, now),
  };
}
