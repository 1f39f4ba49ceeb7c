/**
 * The facts Egress membership is computed from (a Pod's snapshot, Namespace labels, a compiled
 * appliedTo): the types shared by membership.ts and pod-index.ts, so neither imports the other.
 */
import type { Labels } from "../core/labels.js";
import type { CompiledSelector, LabelSelector } from "../core/label-selector.js";

/** Egress spec.appliedTo (the CRD only exposes these two selectors). */
export interface AppliedTo {
  readonly podSelector?: LabelSelector | null;
  readonly namespaceSelector?: LabelSelector | null;
}

/** The facts about a Pod that membership depends on. */
export interface PodSnapshot {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Labels;
  /** "" when not scheduled. */
  readonly nodeName: string;
  readonly hostNetwork: boolean;
  /** status.phase, "" when unknown. */
  readonly phase: string;
  /** status.podIPs (or status.podIP), primary first; [] before the Pod has an IP. */
  readonly ips: readonly string[];
}

/** Namespace labels by Namespace name. A Namespace missing here matches no non-empty namespaceSelector. */
export type NamespaceLabels = ReadonlyMap<string, Labels>;

/**
 * A validated appliedTo. An absent selector is `everything` here, because in appliedTo it means
 * "no constraint on that side"; appliedTo: {} is `pods: nothing`.
 */
export interface CompiledAppliedTo {
  readonly pods: CompiledSelector;
  readonly namespaces: CompiledSelector;
}
