/**
 * The I/O half of plan-events.ts: the planned Events recorded on the ClusterLink object they are
 * about. Best-effort, as the recorder is: an Event that cannot be written never changes an
 * event's outcome.
 */
import type { EventRecorder } from "../kube/index.js";
import type { PlannedClusterLinkEvent } from "./plan-events.js";

export interface ClusterLinkObjectRef {
  readonly kind: "Peer" | "Export" | "Import" | "AccessPolicy" | "PrivilegedAccessPolicy";
  /** "" for a cluster-scoped object. */
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
}

export async function recordClusterLinkEvents(
  recorder: EventRecorder | undefined,
  regarding: ClusterLinkObjectRef,
  planned: readonly PlannedClusterLinkEvent[],
): Promise<void> {
  if (recorder === undefined || planned.length === 0) return;
  await Promise.all(
    planned.map((event) =>
      recorder.record({
        regarding: { apiVersion: "clusterlink.net/v1alpha1", ...regarding },
        type: event.type,
        reason: event.reason,
        action: "Reconcile",
        note: event.note,
      }),
    ),
  );
}
