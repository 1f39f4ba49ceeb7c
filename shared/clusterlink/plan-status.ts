/**
 * Pure: the status of a Peer, Export or Import from the conditions a plan wants, and whether it
 * differs from what is stored. Unchanged conditions keep their transition time, so a repeat
 * event writes nothing (upstream also writes only on a change of type/status/reason/message).
 */
import type { ClusterLinkCondition } from "../kinds/clusterlink.js";

export type ConditionStatus = "True" | "False" | "Unknown";

/** A condition as a plan wants it; the transition time and generation are filled in here. */
export interface WantedCondition {
  readonly type: string;
  readonly status: ConditionStatus;
  readonly reason: string;
  readonly message: string;
}

export interface StoredStatus {
  readonly observedGeneration?: number | undefined;
  readonly conditions?: readonly ClusterLinkCondition[] | undefined;
}

export interface StatusPlan {
  /** The status to write, or null when the stored one already says all this. */
  readonly write: {
    readonly observedGeneration: number;
    readonly conditions: ClusterLinkCondition[];
  } | null;
}

const same = (a: ClusterLinkCondition, b: WantedCondition, generation: number): boolean =>
  a.status === b.status &&
  a.reason === b.reason &&
  a.message === b.message &&
  a.observedGeneration === generation;

/** Conditions of types the plan does not name are kept as they are (another writer's). */
export function planStatus(
  stored: StoredStatus | undefined,
  wanted: readonly WantedCondition[],
  generation: number,
  now: string,
): StatusPlan {
  const current = stored?.conditions ?? [];
  const byType = new Map(current.map((c) => [c.type, c]));
  let changed = stored?.observedGeneration !== generation;
  const next: ClusterLinkCondition[] = current.filter(
    (c) => !wanted.some((w) => w.type === c.type),
  );
  for (const w of wanted) {
    const old = byType.get(w.type);
    if (old !== undefined && same(old, w, generation)) {
      next.push(old);
      continue;
    }
    changed = true;
    const lastTransitionTime =
      old !== undefined && old.status === w.status ? old.lastTransitionTime : now;
    next.push({ ...w, lastTransitionTime, observedGeneration: generation });
  }
  return { write: changed ? { observedGeneration: generation, conditions: next } : null };
}

/** Ready/Reconciling/Stalled as the design proposal defines them, from one verdict. */
export function reconcileConditions(
  verdict:
    | { readonly kind: "ready"; readonly reason: string; readonly message: string }
    | { readonly kind: "stalled"; readonly reason: string; readonly message: string }
    | { readonly kind: "reconciling"; readonly reason: string; readonly message: string },
): WantedCondition[] {
  const { reason, message } = verdict;
  const flag = (on: boolean): ConditionStatus => (on ? "True" : "False");
  const idle = { reason: "Idle", message: "" };
  return [
    { type: "Ready", status: flag(verdict.kind === "ready"), reason, message },
    {
      type: "Reconciling",
      status: flag(verdict.kind === "reconciling"),
      ...(verdict.kind === "reconciling" ? { reason, message } : idle),
    },
    {
      type: "Stalled",
      status: flag(verdict.kind === "stalled"),
      ...(verdict.kind === "stalled" ? { reason, message } : idle),
    },
  ];
}
