/**
 * When the node agent syncs (issue 31): at start, on every hint that concerns its node
 * (plan-agent-hint.ts), and on a period, which loads the ruleset even when it has not changed
 * (the kernel's copy is what the node enforces, and it is re-asserted). One sync at a time; hints
 * that arrive meanwhile fold into one more sync after it (while a sync runs every hint counts: its
 * scope is not known yet). A failed sync is tried again with backoff; what the kernel holds stays
 * as last loaded meanwhile, and a Pod that starts meanwhile is dropped by the guard.
 */
import type { Log } from "../core/context.js";
import { planAgentHint, type AgentHint, type NodeScope } from "./plan-agent-hint.js";
import type { NodeSyncResult } from "./agent-sync.js";

export type SyncTrigger = "start" | "hint" | "resync" | "retry";

export interface AgentLoopOptions {
  /** One sync; `force`: load the ruleset even if it equals the last one loaded. */
  readonly sync: (force: boolean) => Promise<NodeSyncResult>;
  /** Period of the forced resync. */
  readonly resyncMs: number;
  readonly backoff?: { readonly initialMs: number; readonly maxMs: number };
  readonly log: Log;
  readonly onSynced?: (result: NodeSyncResult, trigger: SyncTrigger) => void;
  readonly onFailed?: (error: unknown, trigger: SyncTrigger) => void;
}

const DEFAULT_BACKOFF = { initialMs: 500, maxMs: 30_000 };

export class NodeAgentLoop {
  private scope: NodeScope | null = null;
  private running: Promise<void> | null = null;
  /** A sync is owed after the running one (or the backoff): forced if any asker forced it. */
  private owed: { force: boolean; trigger: SyncTrigger } | null = null;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | undefined;
  private resyncTimer: NodeJS.Timeout | undefined;
  private stopped = false;
  private loaded = false;

  constructor(private readonly options: AgentLoopOptions) {}

  /** Whether a ruleset has been loaded since start. */
  get ready(): boolean {
    return this.loaded;
  }

  start(): void {
    this.request(true, "start");
    this.resyncTimer = setInterval(() => this.request(true, "resync"), this.options.resyncMs);
  }

  /** A watched object changed: sync if it concerns this node (or a sync is running). */
  hint(hint: AgentHint): void {
    if (this.running === null) {
      const decision = planAgentHint(hint, this.scope);
      if (!decision.sync) return;
    }
    this.request(false, "hint");
  }

  /** Asks for a sync now (or after the running one, or after the backoff). */
  request(force: boolean, trigger: SyncTrigger): void {
    if (this.stopped) return;
    this.owed = { force: force || (this.owed?.force ?? false), trigger };
    if (this.running === null && this.retryTimer === undefined) this.runOwed();
  }

  /** Waits for the running sync; no sync starts after. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.resyncTimer);
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    await this.running;
  }

  private runOwed(): void {
    const owed = this.owed;
    if (owed === null || this.stopped) return;
    this.owed = null;
    this.running = this.runOnce(owed.force, owed.trigger).finally(() => {
      this.running = null;
      if (this.retryTimer === undefined) this.runOwed();
    });
  }

  private async runOnce(force: boolean, trigger: SyncTrigger): Promise<void> {
    try {
      const result = await this.options.sync(force);
      this.failures = 0;
      this.scope = result.scope;
      if (result.applied) this.loaded = true;
      this.options.onSynced?.(result, trigger);
    } catch (error) {
      this.failures += 1;
      this.options.onFailed?.(error, trigger);
      const { initialMs, maxMs } = this.options.backoff ?? DEFAULT_BACKOFF;
      const delay = Math.min(maxMs, initialMs * 2 ** (this.failures - 1));
      // The failed sync is owed again (forced if it was), with whatever was asked meanwhile.
      this.owed = { force: force || (this.owed?.force ?? false), trigger: "retry" };
      this.retryTimer = setTimeout(() => {
        this.retryTimer = undefined;
        if (this.running === null) this.runOwed();
      }, delay);
      this.options.log.warn(
        { failures: this.failures, retryInMs: delay, trigger },
        "netpol node agent: sync failed; the packet filter keeps the ruleset last loaded",
      );
    }
  }
}
