/**
 * The EgressGroup object (sdewan.akraino.org/v1alpha1, schema in shared/kinds) to and from the
 * planner's view. Everything we compute lives under `status` (the CRD has no status subresource,
 * so one write carries the whole group).
 */
import * as z from "zod";
import {
  EGRESS_GROUP_API_VERSION,
  EGRESS_GROUP_KIND,
  EGRESS_KIND,
  egressGroupSchema,
  type EgressGroup,
} from "../kinds/index.js";
import type { GroupMember } from "./membership.js";
import { memberIndexLabels, memberIndexMatches } from "./member-index.js";
import {
  NO_MEMBERS,
  type DesiredEgressGroup,
  type GroupCondition,
  type ObservedEgressGroup,
} from "./plan-group.js";

type ParsedGroup = EgressGroup;

function conditionsOf(group: ParsedGroup): GroupCondition[] {
  return (group.status?.conditions ?? []).flatMap((c): GroupCondition[] =>
    (c.type === "Ready" || c.type === "Stalled") && c.status !== "Unknown"
      ? [
          {
            type: c.type,
            status: c.status,
            reason: c.reason,
            message: c.message,
            observedGeneration: c.observedGeneration ?? 0,
            lastTransitionTime: c.lastTransitionTime,
          },
        ]
      : [],
  );
}

function membersOf(group: ParsedGroup): GroupMember[] {
  return (group.status?.members ?? []).map((m) => ({
    pod: { name: m.pod.name, namespace: m.pod.namespace },
    nodeName: m.nodeName ?? "",
    ips: m.ips,
  }));
}

function labelsOf(group: ParsedGroup): Readonly<Record<string, string>> {
  const labels = z.record(z.string(), z.string()).safeParse(group.metadata["labels"]);
  return labels.success ? labels.data : {};
}

function unreadableGroup(object: unknown): ObservedEgressGroup {
  const metadata = z
    .looseObject({ metadata: z.looseObject({ name: z.string(), resourceVersion: z.string() }) })
    .safeParse(object);
  return {
    name: metadata.success ? metadata.data.metadata.name : "",
    resourceVersion: metadata.success ? metadata.data.metadata.resourceVersion : "",
    // No owner and no content: the next plan sees a difference and rewrites the whole group.
    ownerUid: null,
    content: NO_MEMBERS,
    conditions: [],
    indexed: false,
  };
}

/**
 * Reads an EgressGroup from the API server. A group whose content does not parse (edited by hand)
 * is read as empty and unowned, so the next plan rewrites it instead of failing forever.
 */
export function observedGroupFromObject(object: unknown): ObservedEgressGroup {
  const parsed = egressGroupSchema.safeParse(object);
  if (!parsed.success) return unreadableGroup(object);
  const group = parsed.data;
  const owner = (group.metadata.ownerReferences ?? []).find((o) => o.kind === EGRESS_KIND);
  const members = membersOf(group);
  return {
    name: group.metadata.name,
    resourceVersion: group.metadata.resourceVersion ?? "",
    ownerUid: owner?.uid ?? null,
    content: {
      egressGeneration: group.status?.observedEgressGeneration ?? 0,
      memberCount: group.status?.memberCount ?? members.length,
      members,
    },
    conditions: conditionsOf(group),
    indexed: memberIndexMatches(labelsOf(group), group.metadata.name, members),
  };
}

/**
 * The full object to create, or to update when `resourceVersion` is given (optimistic concurrency:
 * a concurrent writer makes the update fail with 409 instead of being overwritten by stale data).
 */
export function groupObjectFromDesired(
  desired: DesiredEgressGroup,
  resourceVersion?: string,
): EgressGroup {
  return {
    apiVersion: EGRESS_GROUP_API_VERSION,
    kind: EGRESS_GROUP_KIND,
    metadata: {
      name: desired.name,
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      labels: memberIndexLabels(desired.name, desired.content.members),
      // Only this function writes groups, so field ownership tells nobody anything, and it would
      // list every index label a second time (~40 bytes a member). [{}] is the API's documented
      // way to store none (a write other than apply; an empty list would not clear them).
      managedFields: [{}],
      ownerReferences: [{ ...desired.ownerReference }],
    },
    status: {
      members: desired.content.members.map((m) => ({
        pod: { name: m.pod.name, namespace: m.pod.namespace },
        nodeName: m.nodeName,
        ips: [...m.ips],
      })),
      memberCount: desired.content.memberCount,
      observedEgressGeneration: desired.content.egressGeneration,
      conditions: desired.conditions.map((c) => ({ ...c })),
    },
  };
}
