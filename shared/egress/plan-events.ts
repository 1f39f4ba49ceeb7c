/**
 * Which Kubernetes Event a group write is worth: `MembersChanged (+a -b)` when the members it
 * writes differ from those it replaces, by Pod (a Pod whose IPs or node changed is not a change of
 * membership). Planned from the write, so a redelivery that finds the group as planned, or a
 * write that lost a race and was recomputed as unchanged, records nothing. The note lists the
 * Pods, so the same change seen again (a Pod leaving and rejoining twice) is the same Event, whose
 * series counts it. Pure: apply-event.ts calls it, on-event.ts records it.
 */
import type { GroupMember } from "./membership.js";
import type { EgressGroupPlan, ObservedEgressGroup } from "./plan-group.js";

/** The closed catalogue of Event reasons on EgressGroups; docs/events.md lists them. */
export const EGRESS_GROUP_EVENT_REASONS = {
  MembersChanged: { type: "Normal", means: "Pods joined or left the group (+joined -left)" },
} as const;

export type EgressGroupEventReason = keyof typeof EGRESS_GROUP_EVENT_REASONS;

/** Pods named in a note per side; the counts are always whole. */
export const NOTE_MEMBERS_LISTED = 10;

export interface MembersChange {
  readonly group: string;
  /** "namespace/name", sorted. */
  readonly joined: readonly string[];
  readonly left: readonly string[];
}

export interface PlannedGroupEvent {
  readonly type: "Normal";
  readonly reason: EgressGroupEventReason;
  readonly note: string;
}

const podKey = (member: GroupMember): string => `${member.pod.namespace}/${member.pod.name}`;

/** The Pods that join and leave when `plan` is written over `existing`; null when none do. */
export function planMembersChange(
  existing: ObservedEgressGroup | null,
  plan: EgressGroupPlan,
): MembersChange | null {
  if (plan.action !== "create" && plan.action !== "update") return null;
  const before = new Set((existing?.content.members ?? []).map(podKey));
  const after = new Set(plan.desired.content.members.map(podKey));
  const joined = [...after].filter((pod) => !before.has(pod)).sort();
  const left = [...before].filter((pod) => !after.has(pod)).sort();
  if (joined.length === 0 && left.length === 0) return null;
  return { group: plan.name, joined, left };
}

function listed(pods: readonly string[]): string {
  const shown = pods.slice(0, NOTE_MEMBERS_LISTED).join(", ");
  const more = pods.length - NOTE_MEMBERS_LISTED;
  return more > 0 ? `${shown} and ${more} more` : shown;
}

/** `+2 -1: joined a/x, a/y; left b/z`. */
export function membersChangedEvent(change: MembersChange): PlannedGroupEvent {
  const parts = [
    ...(change.joined.length > 0 ? [`joined ${listed(change.joined)}`] : []),
    ...(change.left.length > 0 ? [`left ${listed(change.left)}`] : []),
  ];
  return {
    type: EGRESS_GROUP_EVENT_REASONS.MembersChanged.type,
    reason: "MembersChanged",
    note: `+${change.joined.length} -${change.left.length}: ${parts.join("; ")}`,
  };
}
