import type { Labels } from "../../../shared/core/labels.js";
import type { AppliedTo, PodSnapshot } from "../../../shared/egress/membership.js";
import type { EgressSnapshot } from "../../../shared/egress/plan-group.js";

/** A scheduled, running Pod with one IP unless told otherwise. */
export function pod(
  namespace: string,
  name: string,
  labels: Labels = {},
  overrides: Partial<PodSnapshot> = {},
): PodSnapshot {
  return {
    name,
    namespace,
    labels,
    nodeName: "node-1",
    hostNetwork: false,
    phase: "Running",
    ips: ["10.0.0.1"],
    ...overrides,
  };
}

export function egress(name: string, appliedTo: AppliedTo, generation = 1): EgressSnapshot {
  return { name, uid: `uid-${name}`, generation, appliedTo };
}

export const namespaces = (entries: Record<string, Labels>): ReadonlyMap<string, Labels> =>
  new Map(Object.entries(entries));
