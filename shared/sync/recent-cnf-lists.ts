/**
 * The CNF lists reconcile-rule last read from the API server's watch cache, per namespace, kept
 * per process and safe to lose (ADR 0020). A rule event may act on them instead of listing
 * again when they were served at a resourceVersion no older than the rule's own: they then
 * show every Deployment and Pod change made before the rule was last written, which is all a
 * list made for this event could be relied on to show (ADR 0004).
 */
import type { Deployment, Pod } from "../kube/index.js";
import { writtenBefore } from "./plan-cnf-lease.js";

export interface CnfLists {
  /** The namespace's CNF Deployments (label sdewanPurpose present). */
  readonly deployments: readonly Deployment[];
  /** The Pods of `selector`, when they were listed with the Deployments. */
  readonly pods: { readonly selector: string; readonly items: readonly Pod[] } | undefined;
  /** The older of the lists' resourceVersions. */
  readonly version: string;
}

interface Remembered extends CnfLists {
  readonly at: number;
}

/** Lists older than this are never reused, whatever their version says. */
export const RECENT_LISTS_MAX_AGE_MS = 5_000;
const MAX_NAMESPACES = 4096;

export class RecentCnfLists {
  private readonly byNamespace = new Map<string, Remembered>();

  constructor(
    private readonly maxAgeMs = RECENT_LISTS_MAX_AGE_MS,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  private young(namespace: string): Remembered | undefined {
    const lists = this.byNamespace.get(namespace);
    if (lists === undefined) return undefined;
    if (this.clock() - lists.at <= this.maxAgeMs) return lists;
    this.byNamespace.delete(namespace);
    return undefined;
  }

  /** Whether lists of `namespace` were read lately: a rule event there reads its rule first. */
  has(namespace: string): boolean {
    return this.young(namespace) !== undefined;
  }

  /** The lists of `namespace` if they show every change up to `version`; unknown means no. */
  covering(namespace: string, version: string | undefined): CnfLists | undefined {
    const lists = this.young(namespace);
    if (lists === undefined || version === undefined) return undefined;
    return writtenBefore(lists.version, version) === false ? lists : undefined;
  }

  /** Keeps `lists` unless newer ones of the namespace are kept already. */
  remember(namespace: string, lists: CnfLists): void {
    const kept = this.young(namespace);
    if (kept !== undefined && writtenBefore(lists.version, kept.version) === true) return;
    this.byNamespace.delete(namespace);
    if (this.byNamespace.size >= MAX_NAMESPACES) {
      const oldest = this.byNamespace.keys().next().value;
      if (oldest !== undefined) this.byNamespace.delete(oldest);
    }
    this.byNamespace.set(namespace, { ...lists, at: this.clock() });
  }

  forget(namespace: string): void {
    this.byNamespace.delete(namespace);
  }
}
