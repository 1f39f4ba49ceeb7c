/**
 * Pure: which Kubernetes Events a ClusterLink status change is worth. Only transitions an
 * operator must see, one per transition: the stored conditions (before) against the ones about
 * to be written (after), so a redelivery that changes nothing records nothing, and two instances
 * that see one transition record one Event (the recorder names it by object, reason and note,
 * and counts a repeat in its series).
 */
import type { ImportSpec } from "../kinds/clusterlink.js";
import { listedUnusable, SOURCES_CONDITION, type SourcesPlan } from "./plan-sources.js";
import type { StoredStatus, WantedCondition } from "./plan-status.js";

/** The closed catalogue of Event reasons on ClusterLink objects; docs/clusterlink.md lists them. */
export const CLUSTERLINK_EVENT_REASONS = {
  PeerReachable: { type: "Normal", means: "a gateway of the Peer answered its heartbeat" },
  PeerUnreachable: { type: "Warning", means: "no gateway of the Peer answers (thresholds met)" },
  PortLeased: { type: "Normal", means: "the Import was leased a dataplane target port" },
  PortConflict: { type: "Warning", means: "the Import's target port is held by another Import" },
  ServiceConflict: {
    type: "Warning",
    means: "a Service the Import needs is someone else's, or missing (merge mode)",
  },
  InvalidName: {
    type: "Warning",
    means: "no Service can take the Import's name: recreate it under a DNS-1035 label",
  },
  SourceUnusable: {
    type: "Warning",
    means: "a source of the Import turned unusable: its Peer is unreachable or missing",
  },
  SourcesReachable: {
    type: "Normal",
    means: "every source of the Import is usable again",
  },
  ExportInvalid: { type: "Warning", means: "the Export's Service or port is not there" },
  ExportVerified: { type: "Normal", means: "the Export is valid again (or for the first time)" },
  PolicyInvalid: {
    type: "Warning",
    means:
      "an (Privileged)AccessPolicy cannot be evaluated: a deny fails closed, an allow allows nothing",
  },
  PolicyValid: { type: "Normal", means: "an (Privileged)AccessPolicy can be evaluated again" },
} as const;

export type ClusterLinkEventReason = keyof typeof CLUSTERLINK_EVENT_REASONS;

export interface PlannedClusterLinkEvent {
  readonly type: "Normal" | "Warning";
  readonly reason: ClusterLinkEventReason;
  readonly note: string;
}

type Transition = (
  before: WantedCondition | undefined,
  after: WantedCondition,
) => PlannedClusterLinkEvent | null;

const event = (reason: ClusterLinkEventReason, note: string): PlannedClusterLinkEvent => ({
  type: CLUSTERLINK_EVENT_REASONS[reason].type,
  reason,
  note,
});

/** The reason of both Import conditions when its name cannot name a Service (plan-import.ts). */
const INVALID_NAME = "InvalidName";

/** Upstream's condition types and the Event each transition of theirs is reported as. */
const TRANSITIONS: Readonly<Record<string, Transition>> = {
  PeerReachable: (_before, after) =>
    after.status === "True"
      ? event("PeerReachable", "a gateway answered the heartbeat")
      : event("PeerUnreachable", after.message || "no gateway answers the heartbeat"),
  ImportTargetPortValid: (_before, after) =>
    after.status === "True" || after.reason === INVALID_NAME
      ? null
      : event("PortConflict", after.message),
  ImportServiceValid: (_before, after) =>
    after.status === "True"
      ? null
      : event(after.reason === INVALID_NAME ? "InvalidName" : "ServiceConflict", after.message),
  ExportValid: (before, after) =>
    after.status === "True"
      ? before === undefined
        ? null
        : event("ExportVerified", after.message || "the Export's Service is there")
      : event("ExportInvalid", after.message),
  PolicyValid: (before, after) =>
    after.status === "True"
      ? before === undefined
        ? null
        : event("PolicyValid", "the policy can be evaluated again")
      : event("PolicyInvalid", after.message),
};

/**
 * Events for the conditions whose status changes (or first appears). `leasedPort` is set when
 * this write leases the Import a port: a new lease is worth an Event even when the condition
 * stays True (an Import moved off a contested port).
 */
export function planClusterLinkEvents(
  before: StoredStatus | undefined,
  after: readonly WantedCondition[],
  leasedPort?: number,
): PlannedClusterLinkEvent[] {
  const stored = new Map((before?.conditions ?? []).map((c) => [c.type, c]));
  // Upstream sets ImportServiceValid False with the same message when the port fails: one
  // problem, one Event (PortConflict).
  const portFailed = after.some(
    (c) => c.type === "ImportTargetPortValid" && c.status === "False" && c.reason !== INVALID_NAME,
  );
  const events: PlannedClusterLinkEvent[] = [];
  for (const condition of after) {
    const transition = TRANSITIONS[condition.type];
    const previous = stored.get(condition.type);
    if (transition === undefined || previous?.status === condition.status) continue;
    if (condition.type === "ImportServiceValid" && portFailed) continue;
    const planned = transition(previous, condition);
    if (planned !== null) events.push(planned);
  }
  if (leasedPort !== undefined) {
    events.push(event("PortLeased", `dataplane target port ${leasedPort} leased`));
  }
  return events;
}

/**
 * An Import's sources: one Warning when sources turn unusable (their Peer unreachable or
 * missing), naming only those that were usable per the stored status, and one Normal when every
 * source is usable again. From the stored condition against the plan, so a redelivery, or a
 * Peer's message changing while it stays down, records nothing.
 */
export function planSourceEvents(
  before: StoredStatus | undefined,
  sources: NonNullable<ImportSpec["sources"]>,
  after: SourcesPlan,
): PlannedClusterLinkEvent[] {
  const stored = before?.conditions?.find((c) => c.type === SOURCES_CONDITION);
  const known = listedUnusable(stored, sources);
  const turned = after.unusable.filter((u) => !known.has(u.source));
  if (turned.length > 0) {
    const what = turned.length === 1 ? "a source" : `${turned.length} sources`;
    const note = `${what} turned unusable: ${turned.map((u) => u.problem).join("; ")}`;
    return [event("SourceUnusable", note)];
  }
  if (after.condition.status === "True" && stored?.status === "False") {
    return [event("SourcesReachable", `all ${after.total} sources usable again`)];
  }
  return [];
}
