/**
 * Pure planning of one EgressGroup: from the live Egress (or its absence), the candidate Pods and
 * Namespaces and the existing group, the desired group and whether to create, update, delete or
 * leave it; content is compared, never metadata. The group is owned by its Egress (no
 * blockOwnerDeletion: it would need update on the Egress's finalizers); a bad selector or an
 * oversized group is never written half-way (Stalled). Details: docs/code-notes.md (egress).
 */
import {
  compileAppliedTo,
  computeMembers,
  type AppliedTo,
  type GroupMember,
  type NamespaceLabels,
  type PodSnapshot,
} from "./membership.js";
import { EGRESS_API_VERSION, EGRESS_KIND } from "../kinds/index.js";
import type { PodIndex } from "./pod-index.js";
import { DEFAULT_GROUP_LIMITS, groupSizeProblem, type GroupLimits } from "./size.js";

/** The facts of an Antrea Egress the group depends on. */
export interface EgressSnapshot {
  readonly name: string;
  readonly uid: string;
  readonly generation: number;
  readonly appliedTo: AppliedTo;
}

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller: boolean;
}

export type GroupProblemReason = "InvalidSelector" | "TooManyMembers";

export interface GroupProblem {
  readonly reason: GroupProblemReason;
  readonly message: string;
}

export interface GroupCondition {
  readonly type: "Ready" | "Stalled";
  readonly status: "True" | "False";
  readonly reason: string;
  readonly message: string;
  readonly observedGeneration: number;
  readonly lastTransitionTime: string;
}

export interface EgressGroupContent {
  /** The Egress generation the members were computed from; 0 when they never were. */
  readonly egressGeneration: number;
  readonly memberCount: number;
  /** Sorted by namespace, then name. */
  readonly members: readonly GroupMember[];
}

/** An EgressGroup as read from the API server, reduced to what planning compares. */
export interface ObservedEgressGroup {
  readonly name: string;
  readonly resourceVersion: string;
  /** uid of the Egress ownerReference, null when there is none. */
  readonly ownerUid: string | null;
  readonly content: EgressGroupContent;
  readonly conditions: readonly GroupCondition[];
  /** Whether its labels index exactly its members (member-index.ts); false forces a rewrite. */
  readonly indexed: boolean;
}

export interface DesiredEgressGroup {
  readonly name: string;
  readonly ownerReference: OwnerReference;
  readonly content: EgressGroupContent;
  readonly conditions: readonly GroupCondition[];
}

export type EgressGroupPlan =
  | {
      readonly action: "create" | "update";
      readonly name: string;
      readonly desired: DesiredEgressGroup;
      readonly problem: GroupProblem | null;
    }
  | {
      readonly action: "unchanged";
      readonly name: string;
      /** null when neither the Egress nor its group exists. */
      readonly desired: DesiredEgressGroup | null;
      readonly problem: GroupProblem | null;
    }
  | {
      readonly action: "delete";
      readonly name: string;
      readonly desired: null;
      readonly problem: null;
    };

export interface EgressGroupPlanInput {
  /** The group's name, which is the Egress's name. */
  readonly name: string;
  /** The live Egress, or null when it does not exist (any more). */
  readonly egress: EgressSnapshot | null;
  /** Candidate Pods: any superset of the Egress's members (an index when planning many groups). */
  readonly pods: PodIndex | Iterable<PodSnapshot>;
  readonly namespaces: NamespaceLabels;
  readonly existing: ObservedEgressGroup | null;
  /** RFC 3339 time used for conditions that change status. */
  readonly now: string;
  readonly limits?: GroupLimits;
}

export const NO_MEMBERS: EgressGroupContent = { egressGeneration: 0, memberCount: 0, members: [] };

/** The ownerReference a group carries to its Egress. */
export function egressOwnerReference(egress: EgressSnapshot): OwnerReference {
  return {
    apiVersion: EGRESS_API_VERSION,
    kind: EGRESS_KIND,
    name: egress.name,
    uid: egress.uid,
    controller: true,
  };
}

/** The members a plan settled on, and why they are the last good ones when it could not compute. */
export interface ComputedContent {
  readonly content: EgressGroupContent;
  readonly problem: GroupProblem | null;
}

function computeContent(input: EgressGroupPlanInput, egress: EgressSnapshot): ComputedContent {
  const lastGood = input.existing?.content ?? NO_MEMBERS;
  const compiled = compileAppliedTo(egress.appliedTo);
  if (!compiled.ok) {
    const message = compiled.errors.map((e) => `${e.path}: ${e.message}`).join("; ");
    return { content: lastGood, problem: { reason: "InvalidSelector", message } };
  }
  const members = computeMembers(compiled.appliedTo, input.pods, input.namespaces);
  const sizeProblem = groupSizeProblem(members, input.limits ?? DEFAULT_GROUP_LIMITS);
  if (sizeProblem !== null) {
    const message = `${sizeProblem}; members are kept as computed from Egress generation ${lastGood.egressGeneration}`;
    return { content: lastGood, problem: { reason: "TooManyMembers", message } };
  }
  return {
    content: { egressGeneration: egress.generation, memberCount: members.length, members },
    problem: null,
  };
}

type ConditionFields = Omit<GroupCondition, "lastTransitionTime">;

function conditionFields(computed: ComputedContent, generation: number): ConditionFields[] {
  const { problem, content } = computed;
  if (problem === null) {
    const message = `${content.memberCount} members computed from Egress generation ${generation}`;
    return [
      {
        type: "Ready",
        status: "True",
        reason: "MembersComputed",
        message,
        observedGeneration: generation,
      },
    ];
  }
  return [
    {
      type: "Ready",
      status: "False",
      reason: problem.reason,
      message: problem.message,
      observedGeneration: generation,
    },
    {
      type: "Stalled",
      status: "True",
      reason: problem.reason,
      message: problem.message,
      observedGeneration: generation,
    },
  ];
}

/** Keeps lastTransitionTime from the existing condition of the same type when its status is unchanged. */
function withTransitionTimes(
  fields: readonly ConditionFields[],
  existing: readonly GroupCondition[],
  now: string,
): GroupCondition[] {
  return fields.map((condition) => {
    const previous = existing.find((c) => c.type === condition.type);
    const since =
      previous !== undefined && previous.status === condition.status
        ? previous.lastTransitionTime
        : now;
    return { ...condition, lastTransitionTime: since };
  });
}

const sameStrings = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((value, i) => value === b[i]);

/** Same Pod, node and IPs. */
export const sameMember = (a: GroupMember, b: GroupMember): boolean =>
  a.pod.namespace === b.pod.namespace &&
  a.pod.name === b.pod.name &&
  a.nodeName === b.nodeName &&
  sameStrings(a.ips, b.ips);

function membersEqual(a: readonly GroupMember[], b: readonly GroupMember[]): boolean {
  return (
    a.length === b.length &&
    a.every((m, i) => {
      const other = b[i];
      return other !== undefined && sameMember(m, other);
    })
  );
}

function contentEqual(a: EgressGroupContent, b: EgressGroupContent): boolean {
  return (
    a.egressGeneration === b.egressGeneration &&
    a.memberCount === b.memberCount &&
    membersEqual(a.members, b.members)
  );
}

/** Conditions compared without lastTransitionTime, in order. */
function conditionsEqual(a: readonly GroupCondition[], b: readonly GroupCondition[]): boolean {
  const strip = (c: GroupCondition): string =>
    JSON.stringify([c.type, c.status, c.reason, c.message, c.observedGeneration]);
  return a.length === b.length && a.every((c, i) => b[i] !== undefined && strip(c) === strip(b[i]));
}

/** Whether writing `desired` over `existing` would change anything we own. */
export function groupContentEqual(
  existing: ObservedEgressGroup,
  desired: DesiredEgressGroup,
): boolean {
  return (
    existing.indexed &&
    existing.ownerUid === desired.ownerReference.uid &&
    contentEqual(existing.content, desired.content) &&
    conditionsEqual(existing.conditions, desired.conditions)
  );
}

/** Plans one EgressGroup: the desired object and the write (if any) that gets it there. */
export function planEgressGroup(input: EgressGroupPlanInput): EgressGroupPlan {
  const { name, egress, existing } = input;
  if (egress === null) {
    return existing === null
      ? { action: "unchanged", name, desired: null, problem: null }
      : { action: "delete", name, desired: null, problem: null };
  }
  return planWithContent(name, egress, existing, computeContent(input, egress), input.now);
}

/**
 * The plan for a group of a live Egress once its content is settled (by a full computation, or
 * by changing one member of a current group): conditions, owner, and the write if any.
 */
export function planWithContent(
  name: string,
  egress: EgressSnapshot,
  existing: ObservedEgressGroup | null,
  computed: ComputedContent,
  now: string,
): EgressGroupPlan {
  const conditions = withTransitionTimes(
    conditionFields(computed, egress.generation),
    existing?.conditions ?? [],
    now,
  );
  const desired: DesiredEgressGroup = {
    name,
    ownerReference: egressOwnerReference(egress),
    content: computed.content,
    conditions,
  };
  const action =
    existing === null ? "create" : groupContentEqual(existing, desired) ? "unchanged" : "update";
  return { action, name, desired, problem: computed.problem };
}
