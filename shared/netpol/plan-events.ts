/**
 * Which Kubernetes Events a set of table writes is worth (issue 18: the same recorder as the
 * rule functions, shared/kube/event-recorder.ts): one per transition an operator must see, on the
 * object they know (the Pod, the NetworkPolicy), never one per redelivery: a write happens only
 * when a table changes, and an Event only when the change is one of these. Pure.
 *
 * - A Pod's tables written for the first time / removed (it became / stopped being an endpoint).
 *   Not for a resync: its creations and deletions are counted in its outcome, and a first resync
 *   of a cluster would otherwise be one Event per Pod.
 * - A problem appearing on a table (TooManyRules on a Pod or a policy; InvalidSelector or
 *   PeerSetTooLarge on a policy), and the problems going away.
 */
import { compareStrings } from "../core/order.js";
import type { NetpolProblem } from "../kinds/netpol.js";
import type { TableWrite } from "./plan-scope.js";

/** The closed catalogue of Event reasons of network-policy-sync; docs/netpol.md lists them. */
export const NETPOL_EVENT_REASONS = {
  EndpointTablesWritten: {
    type: "Normal",
    means: "a NetworkPolicy now selects the Pod: its enforcement tables are stored",
  },
  EndpointTablesRemoved: {
    type: "Normal",
    means: "no NetworkPolicy selects the Pod any more: its tables are removed",
  },
  FailClosed: {
    type: "Warning",
    means: "more than 64 rule bits in a direction: all of that direction's traffic is denied",
  },
  InvalidSelector: {
    type: "Warning",
    means: "a selector of the policy is invalid: it selects nothing until fixed",
  },
  PeerSetTooLarge: {
    type: "Warning",
    means:
      "the policy's peer set is too large to store: its label-selected peers are denied until it fits",
  },
  ProblemsResolved: {
    type: "Normal",
    means: "the tables express the policies as written again",
  },
} as const;

export type NetpolEventReason = keyof typeof NETPOL_EVENT_REASONS;

export interface PlannedNetpolEvent {
  readonly regarding: {
    readonly apiVersion: string;
    readonly kind: "Pod" | "NetworkPolicy";
    readonly namespace: string;
    readonly name: string;
    readonly uid?: string;
  };
  readonly type: "Normal" | "Warning";
  readonly reason: NetpolEventReason;
  readonly note: string;
}

const problemsOf = (object: unknown): readonly NetpolProblem[] =>
  (object as { status?: { problems?: readonly NetpolProblem[] } }).status?.problems ?? [];

const ownerUid = (object: unknown): string | undefined =>
  (object as { metadata?: { ownerReferences?: readonly { uid: string }[] } }).metadata
    ?.ownerReferences?.[0]?.uid;

function event(
  write: TableWrite,
  reason: NetpolEventReason,
  note: string,
  uid: string | undefined,
): PlannedNetpolEvent {
  const table = write.action === "delete" ? write.stored : write.desired;
  const pod = table.kind === "endpoint";
  return {
    regarding: {
      apiVersion: pod ? "v1" : "networking.k8s.io/v1",
      kind: pod ? "Pod" : "NetworkPolicy",
      namespace: table.namespace,
      name: table.name,
      ...(uid === undefined || uid === "" ? {} : { uid }),
    },
    type: NETPOL_EVENT_REASONS[reason].type,
    reason,
    note,
  };
}

const describe = (problems: readonly NetpolProblem[]): string =>
  problems.map((p) => p.message).join("; ");

/** The Events of one write; `resync`: the write comes from a resync. */
function eventsOfWrite(write: TableWrite, resync: boolean): PlannedNetpolEvent[] {
  if (write.action === "delete") {
    if (resync || write.stored.kind !== "endpoint") return [];
    const note = "no NetworkPolicy selects the Pod any more: its tables are removed";
    return [event(write, "EndpointTablesRemoved", note, write.stored.ownerUid)];
  }
  const uid = ownerUid(write.desired.object);
  const after = problemsOf(write.desired.object);
  const before = write.action === "replace" ? (write.previous.parsed?.status.problems ?? []) : [];
  const events: PlannedNetpolEvent[] = [];
  if (write.action === "create" && write.desired.kind === "endpoint" && !resync) {
    const note = "selected by a NetworkPolicy: ingress and egress tables stored";
    events.push(event(write, "EndpointTablesWritten", note, uid));
  }
  return [...events, ...problemEvents(write, before, after, uid)];
}

/** Event reason -> the problem reason it reports. */
const PROBLEM_EVENTS = [
  ["FailClosed", "TooManyRules"],
  ["InvalidSelector", "InvalidSelector"],
  ["PeerSetTooLarge", "PeerSetTooLarge"],
] as const;

/** Problems that appeared (one Event per kind), or all of them gone. */
function problemEvents(
  write: TableWrite,
  before: readonly NetpolProblem[],
  after: readonly NetpolProblem[],
  uid: string | undefined,
): PlannedNetpolEvent[] {
  const known = new Set(before.map((p) => `${p.reason}\n${p.message}`));
  const added = after.filter((p) => !known.has(`${p.reason}\n${p.message}`));
  const events: PlannedNetpolEvent[] = [];
  for (const [reason, problem] of PROBLEM_EVENTS) {
    const news = added.filter((p) => p.reason === problem);
    // A peer set's size changes with every member: one Event when it stops fitting, not per size.
    const again = problem === "PeerSetTooLarge" && before.some((p) => p.reason === problem);
    if (news.length > 0 && !again) events.push(event(write, reason, describe(news), uid));
  }
  if (before.length > 0 && after.length === 0) {
    events.push(event(write, "ProblemsResolved", `resolved: ${describe(before)}`, uid));
  }
  return events;
}

/** The Events of a set of writes, in table order. */
export function planTableEvents(
  writes: readonly TableWrite[],
  resync: boolean,
): PlannedNetpolEvent[] {
  return writes
    .flatMap((w) => eventsOfWrite(w, resync))
    .sort(
      (a, b) =>
        compareStrings(a.regarding.namespace, b.regarding.namespace) ||
        compareStrings(a.regarding.name, b.regarding.name) ||
        compareStrings(a.reason, b.reason),
    );
}
