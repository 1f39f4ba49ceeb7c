/**
 * Service restarts per CNF pod, paced (ADR 0007): a burst of rule changes on one CNF restarts each
 * service on each pod a few times, not once per rule. A write takes a ticket; a later restart pays
 * it. A caller that may wait defers during a burst; a lone change or a caller that may not wait
 * restarts now. Per process and safe to lose (the debt is on the API server, ADR 0002).
 * The ticket scheme in full: docs/code-notes.md (cnf/restarts.ts).
 */

export type RestartMode =
  /** Restart unless a restart already paid for the write; for batches that must finish now. */
  | "now"
  /** Like "now", but defer in a burst while the service restarted less than minIntervalMs ago. */
  | "coalesce";

export type RestartVerdict =
  /** A restart begun after the write succeeded: the write is loaded. */
  | { readonly kind: "paid"; readonly restarted: boolean }
  /** Not restarted yet: the caller reports the restart as owed and is redelivered. */
  | { readonly kind: "deferred"; readonly dueInMs: number }
  | { readonly kind: "failed"; readonly error: unknown };

interface ServiceSlot {
  /** Restarts begun so far; a ticket is this number at the time of the write. */
  begun: number;
  /** The highest restart number that succeeded. */
  paidUpTo: number;
  lastBegunAt: number | undefined;
  inFlight: { readonly number: number; readonly done: Promise<unknown> } | undefined;
  /** The ticket of each rule's last write, by rule key. */
  readonly tickets: Map<string, number>;
}

export interface RestartOptions {
  readonly mode: RestartMode;
  /** In a burst, the least time between two restarts of a service on a pod. */
  readonly minIntervalMs: number;
  /**
   * A burst: another rule was written to the pod less than this long ago (rewrites of the same
   * rule, e.g. quick edits or duplicate deliveries, are not a burst).
   */
  readonly quietMs: number;
}

/** Writes older than this never count as a burst, whatever quietMs says. */
const MAX_QUIET_MS = 10_000;

/** Rule tickets kept per slot at most; past it all are forgotten (costing restarts, never a miss). */
const MAX_TICKETS = 10_000;

export class CnfRestartPacer {
  private readonly slots = new Map<string, ServiceSlot>();
  /** Per pod: when each rule was last written there (insertion order = oldest first). */
  private readonly recentWrites = new Map<string, Map<string, number>>();

  constructor(private readonly clock: () => number = () => performance.now()) {}

  private slot(pod: string, service: string): ServiceSlot {
    const key = `${pod}#${service}`;
    let slot = this.slots.get(key);
    if (slot === undefined) {
      slot = {
        begun: 0,
        paidUpTo: 0,
        lastBegunAt: undefined,
        inFlight: undefined,
        tickets: new Map(),
      };
      this.slots.set(key, slot);
    }
    return slot;
  }

  private markWrite(pod: string, ruleKey: string): void {
    const now = this.clock();
    let recent = this.recentWrites.get(pod);
    if (recent === undefined) {
      recent = new Map();
      this.recentWrites.set(pod, recent);
    }
    recent.delete(ruleKey);
    recent.set(ruleKey, now);
    // Oldest first (re-inserted on each write): drop the ones too old to matter.
    for (const [key, at] of recent) {
      if (now - at < MAX_QUIET_MS) break;
      recent.delete(key);
    }
  }

  /** Whether a rule other than `own` was written to `pod` after `since`. */
  private othersWritten(pod: string, own: readonly string[], since: number): boolean {
    for (const [key, at] of this.recentWrites.get(pod) ?? []) {
      if (at > since && !own.includes(key)) return true;
    }
    return false;
  }

  /** Records that `ruleKey`'s object for `service` was just written on `pod`. */
  wrote(pod: string, service: string, ruleKey: string): void {
    this.markWrite(pod, ruleKey);
    const slot = this.slot(pod, service);
    if (slot.tickets.size >= MAX_TICKETS) slot.tickets.clear();
    slot.tickets.delete(ruleKey);
    slot.tickets.set(ruleKey, slot.begun);
  }

  /**
   * Makes sure a restart of `service` on `pod` loads what `ruleKeys` wrote: already paid, joined,
   * begun now, or deferred (mode "coalesce" only). A rule without a ticket (written by another
   * process, or forgotten) counts as written just now.
   */
  async settle(
    pod: string,
    service: string,
    ruleKeys: readonly string[],
    options: RestartOptions,
    restart: () => Promise<void>,
  ): Promise<RestartVerdict> {
    const slot = this.slot(pod, service);
    const ticket = Math.max(...ruleKeys.map((k) => slot.tickets.get(k) ?? slot.begun), 0);
    // Paid tickets stay: a redelivery that finds the object held still knows it was loaded.
    const paid = (): RestartVerdict => ({ kind: "paid", restarted: false });
    if (slot.paidUpTo > ticket) return paid();
    // A restart in flight that began after the writes loads them: wait for it.
    if (slot.inFlight !== undefined && slot.inFlight.number > ticket) {
      await slot.inFlight.done;
      if (slot.paidUpTo > ticket) return paid();
    }
    const now = this.clock();
    const sinceLast = slot.lastBegunAt === undefined ? Infinity : now - slot.lastBegunAt;
    // A burst: other rules were written within quietMs, or within minIntervalMs: a gap in a slow
    // burst (a loaded API server delivers slowly) is not its end (ADR 0020).
    const window = Math.max(options.quietMs, options.minIntervalMs);
    const burst = this.othersWritten(pod, ruleKeys, now - window);
    if (options.mode === "coalesce" && burst && sinceLast < options.minIntervalMs) {
      return { kind: "deferred", dueInMs: Math.ceil(options.minIntervalMs - sinceLast) };
    }
    // One restart at a time per service and pod: the CNF serialises them anyway.
    while (slot.inFlight !== undefined) await slot.inFlight.done;
    if (slot.paidUpTo > ticket) return paid();
    return this.begin(slot, restart);
  }

  private async begin(slot: ServiceSlot, restart: () => Promise<void>): Promise<RestartVerdict> {
    const number = ++slot.begun;
    slot.lastBegunAt = this.clock();
    const run = restart();
    slot.inFlight = { number, done: run.catch(() => undefined) };
    try {
      await run;
      slot.paidUpTo = Math.max(slot.paidUpTo, number);
      return { kind: "paid", restarted: true };
    } catch (error) {
      return { kind: "failed", error };
    } finally {
      if (slot.inFlight?.number === number) slot.inFlight = undefined;
    }
  }
}

/** The process-wide pacer sync uses unless given another (tests pass their own). */
export const processCnfRestarts = new CnfRestartPacer();

/**
 * In a burst, at most one restart of a service on a pod per this long. Off (0) unless configured:
 * pacing needs a delivery layer that redelivers a 503 after a second or more (the connector,
 * Knative Triggers), which the shipped manifests have and set 10000 for; a direct sink that gives
 * up after a few quick retries would leave deferred restarts to the resync.
 */
export const DEFAULT_RESTART_MIN_INTERVAL_MS = 0;
/** Defaults: writes by others within 1 s make a burst (a loaded API server delivers slowly). */
export const DEFAULT_RESTART_QUIET_MS = 1000;
