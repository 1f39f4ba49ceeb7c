/**
 * An index over the candidate Pods of one event, built once and shared by every group computed
 * for it, so a group only evaluates the Pods that can possibly match instead of every Pod (the
 * same idea as Antrea's grouping index, without keeping it between events):
 * - by Namespace, for an Egress whose namespaceSelector is not empty;
 * - by label key=value, for a podSelector with matchLabels or an In expression.
 * The narrowest of those candidate lists is then checked with the full selector semantics.
 */
import type { CompiledAppliedTo, NamespaceLabels, PodSnapshot } from "./snapshot.js";
import { compareStrings } from "../core/order.js";
import {
  selectorMatches,
  selectsEverything,
  type CompiledSelector,
} from "../core/label-selector.js";

const labelKey = (key: string, value: string): string => `${key}\u0000${value}`;

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

export class PodIndex {
  /** Every Pod once (a later duplicate of namespace/name replaces an earlier one). */
  readonly pods: readonly PodSnapshot[];
  private readonly byNamespace = new Map<string, PodSnapshot[]>();
  private readonly byLabel = new Map<string, PodSnapshot[]>();

  constructor(pods: Iterable<PodSnapshot>) {
    const unique = new Map<string, PodSnapshot>();
    for (const pod of pods) unique.set(`${pod.namespace}/${pod.name}`, pod);
    // Sorted once, so candidate lists come out (mostly) in member order and sorting is cheap.
    this.pods = [...unique.values()].sort(
      (a, b) => compareStrings(a.namespace, b.namespace) || compareStrings(a.name, b.name),
    );
    for (const pod of this.pods) {
      push(this.byNamespace, pod.namespace, pod);
      for (const [key, value] of Object.entries(pod.labels))
        push(this.byLabel, labelKey(key, value), pod);
    }
  }

  static of(pods: PodIndex | Iterable<PodSnapshot>): PodIndex {
    return pods instanceof PodIndex ? pods : new PodIndex(pods);
  }

  private inNamespaces(selector: CompiledSelector, namespaces: NamespaceLabels): PodSnapshot[] {
    const pods: PodSnapshot[] = [];
    for (const [name, inNamespace] of this.byNamespace) {
      const labels = namespaces.get(name);
      // A Namespace not observed matches no non-empty namespaceSelector.
      if (labels !== undefined && selectorMatches(selector, labels)) pods.push(...inNamespace);
    }
    return pods;
  }

  /** Pods having one of the values of the podSelector's narrowest Equals/In requirement, or null. */
  private withLabel(selector: CompiledSelector): PodSnapshot[] | null {
    if (selector.kind !== "requirements") return null;
    let narrowest: PodSnapshot[] | null = null;
    for (const r of selector.requirements) {
      if (r.operator !== "Equals" && r.operator !== "In") continue;
      const pods = r.values.flatMap((v) => this.byLabel.get(labelKey(r.key, v)) ?? []);
      if (narrowest === null || pods.length < narrowest.length) narrowest = pods;
    }
    return narrowest;
  }

  /** A superset of the Pods `appliedTo` selects; callers still check each one. */
  candidates(appliedTo: CompiledAppliedTo, namespaces: NamespaceLabels): readonly PodSnapshot[] {
    if (appliedTo.pods.kind === "nothing") return [];
    const lists = [
      selectsEverything(appliedTo.namespaces)
        ? null
        : this.inNamespaces(appliedTo.namespaces, namespaces),
      this.withLabel(appliedTo.pods),
    ].filter((list): list is PodSnapshot[] => list !== null);
    return lists.reduce<readonly PodSnapshot[]>((a, b) => (b.length < a.length ? b : a), this.pods);
  }
}
