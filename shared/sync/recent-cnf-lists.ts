/**
 * The CNF lists reconcile-rule read from the API server's watch cache, per namespace, kept per
 * process and safe to lose (ADR 0020). A rule event may act on lists whose request began at or
 * after the event's own start, in flight or answered: they are exactly as fresh as lists it
 * would have started itself alongside its rule read (ADR 0004), so in a burst one list pair
 * serves every event that began before it.
 */
import type { Deployment, Pod } from "../kube/index.js";

export interface CnfLists {
  /** The namespace's CNF Deployments (label sdewanPurpose present). */
  readonly deployments: readonly Deployment[];
  /** The Pods of `selector`, when they were listed with the Deployments. */
  readonly pods: { readonly selector: string; readonly items: readonly Pod[] } | undefined;
}

interface Read {
  /** When the requests began (the clock's time). */
  readonly startedAt: number;
  readonly lists: Promise<CnfLists>;
}

/** After this long without a list in a namespace, a rule event there reads its lists alongside its rule. */
export const BURST_WINDOW_MS = 2_000;
const MAX_NAMESPACES = 4096;

export class RecentCnfLists {
  private readonly byNamespace = new Map<string, Read>();
  private readonly eventsInFlight = new Map<string, number>();

  constructor(readonly clock: () => number = () => performance.now()) {}

  /**
   * A rule event of `namespace` began; call the answer when it ends. Waiting to share a list pays
   * only while other events are in flight: a stream of events one after another has no one to
   * share with, however close together.
   */
  eventBegan(namespace: string): () => void {
    this.eventsInFlight.set(namespace, (this.eventsInFlight.get(namespace) ?? 0) + 1);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      const left = (this.eventsInFlight.get(namespace) ?? 1) - 1;
      if (left <= 0) this.eventsInFlight.delete(namespace);
      else this.eventsInFlight.set(namespace, left);
    };
  }

  /** Rule events of `namespace` in flight besides the caller's own. */
  othersInFlight(namespace: string): number {
    return Math.max(0, (this.eventsInFlight.get(namespace) ?? 0) - 1);
  }

  /** Whether lists of `namespace` were begun lately: a rule event there reads its rule first. */
  inBurst(namespace: string): boolean {
    const read = this.byNamespace.get(namespace);
    if (read === undefined) return false;
    if (this.clock() - read.startedAt <= BURST_WINDOW_MS) return true;
    this.byNamespace.delete(namespace);
    return false;
  }

  /** The newest lists of `namespace` begun at or after `since`, answered or in flight. */
  since(namespace: string, since: number): Promise<CnfLists> | undefined {
    const read = this.byNamespace.get(namespace);
    return read !== undefined && read.startedAt >= since ? read.lists : undefined;
  }

  /**
   * Begins `read` in `delayMs` (now by default) and keeps it as the namespace's newest, so events
   * that begin before it may join it; a failed read is forgotten.
   */
  begin(namespace: string, read: () => Promise<CnfLists>, delayMs = 0): Promise<CnfLists> {
    const lists = delayMs <= 0 ? read() : new Promise((ok) => setTimeout(ok, delayMs)).then(read);
    const entry = { startedAt: this.clock() + Math.max(0, delayMs), lists };
    this.byNamespace.delete(namespace);
    if (this.byNamespace.size >= MAX_NAMESPACES) {
      const oldest = this.byNamespace.keys().next().value;
      if (oldest !== undefined) this.byNamespace.delete(oldest);
    }
    this.byNamespace.set(namespace, entry);
    entry.lists.catch(() => {
      if (this.byNamespace.get(namespace) === entry) this.byNamespace.delete(namespace);
    });
    return entry.lists;
  }

  /** Lists that led to a consistent re-read are not offered again. */
  forget(namespace: string): void {
    this.byNamespace.delete(namespace);
  }
}
