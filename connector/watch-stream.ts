/**
 * One LIST+WATCH loop: one resource of one route, in one namespace or across all of them.
 * LIST (paged) -> emit what changed since the last list -> WATCH from the list's resourceVersion
 * with bookmarks and a server-side timeout -> on a clean server close resume from the last
 * resourceVersion seen; on 410 Gone, an ERROR event, a failed request or a silent stream (no byte,
 * not even a bookmark, within the inactivity deadline) LIST again. Failures back off with jitter.
 */
import type { KubeApi, KubeObject, ResourceInfo, WatchEnd, WatchEvent } from "./kube-api.js";
import {
  applyWatchEvent,
  planRelist,
  type KnownObject,
  type ObservedChange,
} from "./plan-relist.js";
import { backoffDelay, type BackoffBounds } from "./retry-policy.js";

export interface StreamSpec {
  readonly route: string;
  readonly apiVersion: string;
  readonly kind: string;
  /** Undefined: every namespace (or a cluster-scoped kind). */
  readonly namespace: string | undefined;
  readonly labelSelector: string | undefined;
  /** E.g. `spec.nodeName=<node>` (the node agent's Pods); absent: none. */
  readonly fieldSelector?: string | undefined;
  /** Keep whole objects (Resource mode) so deletes found by a re-list carry the last state. */
  readonly keepObjects: boolean;
}

export interface StreamTiming {
  readonly pageSize: number;
  /** Asks the server to end each watch after this long (it then sends a last bookmark). */
  readonly watchTimeoutSeconds: number;
  /**
   * A watch that delivers nothing for this long is dead. (Discovery and LIST requests are
   * abandoned after as long: KubeApi's requestTimeoutMs.)
   */
  readonly inactivityMs: number;
  /** Failed lists and unhealthy watch ends back off like deliveries do (retry-policy.ts). */
  readonly backoff: BackoffBounds;
}

export type RestartReason = "closed" | "expired" | "inactive" | "error" | "forced";

export interface StreamObserver {
  change(spec: StreamSpec, change: ObservedChange): void;
  synced(spec: StreamSpec, objects: number): void;
  restarted(spec: StreamSpec, reason: RestartReason, relist: boolean, detail?: string): void;
  failed(spec: StreamSpec, stage: "discovery" | "list", error: Error, retryInMs: number): void;
}

export class WatchStream {
  private known = new Map<string, KnownObject>();
  private resourceVersion = "";
  private resource: ResourceInfo | undefined;
  private watchHandle: { stop(): void } | undefined;
  private forced: "relist" | "resume" | undefined;
  private stopped = false;
  /** Aborts a LIST or discovery request in progress when the stream stops. */
  private readonly stopSignal = new AbortController();
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private everSynced = false;
  private phase: "listing" | "watching" | "between" = "listing";

  constructor(
    private readonly api: KubeApi,
    readonly spec: StreamSpec,
    private readonly timing: StreamTiming,
    private readonly observer: StreamObserver,
    private readonly random: () => number = Math.random,
  ) {}

  get synced(): boolean {
    return this.everSynced;
  }

  /** Where the loop is: listing (incl. discovery and backoff before it), watching, or in between. */
  get state(): "listing" | "watching" | "between" | "stopped" {
    return this.stopped ? "stopped" : this.phase;
  }

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.stopSignal.abort();
    this.watchHandle?.stop();
    this.wake?.();
    await this.loop;
  }

  /**
   * Ends the open watch; the loop lists again (relist) or resumes from its resourceVersion.
   * Returns false (and does nothing) when no watch is open, e.g. while listing.
   */
  restart(how: "relist" | "resume"): boolean {
    if (this.watchHandle === undefined) return false;
    this.forced = how;
    this.watchHandle.stop();
    return true;
  }

  /** Test and ops hook: pretend the last resourceVersion was `rv` (an old one provokes 410). */
  rewindResourceVersion(rv: string): void {
    this.resourceVersion = rv;
  }

  private async run(): Promise<void> {
    let failures = 0;
    let needList = true;
    while (!this.stopped) {
      if (needList) {
        const listed = await this.tryList(failures);
        if (!listed) {
          failures += 1;
          continue;
        }
      }
      const outcome = await this.watchOnce();
      if (this.stopped) return;
      needList = outcome.relist;
      failures = outcome.healthy ? 0 : failures + 1;
      this.observer.restarted(this.spec, outcome.reason, outcome.relist, outcome.detail);
      if (!outcome.healthy) await this.pause(this.backoff(failures));
    }
  }

  /** Returns false after logging and pausing when discovery or the list failed. */
  private async tryList(failures: number): Promise<boolean> {
    let stage: "discovery" | "list" = "discovery";
    try {
      this.resource ??= await this.api.discover(
        this.spec.apiVersion,
        this.spec.kind,
        this.stopSignal.signal,
      );
      stage = "list";
      await this.relist(this.resource);
      return true;
    } catch (error) {
      if (this.stopped) return false;
      const delay = this.backoff(failures + 1);
      this.observer.failed(
        this.spec,
        stage,
        error instanceof Error ? error : new Error(String(error)),
        delay,
      );
      await this.pause(delay);
      return false;
    }
  }

  /** The namespace to list and watch in; undefined for every namespace. */
  private namespaceOf(resource: ResourceInfo): string | undefined {
    const { namespace } = this.spec;
    if (!resource.namespaced && namespace !== undefined) {
      throw new Error(`${this.spec.kind} is cluster-scoped: remove "namespaces" from its route`);
    }
    return namespace;
  }

  private async relist(resource: ResourceInfo): Promise<void> {
    this.phase = "listing";
    const namespace = this.namespaceOf(resource);
    const items: KubeObject[] = [];
    let continueToken: string | undefined;
    let resourceVersion = "";
    do {
      const page = await this.api.listPage(
        resource,
        namespace,
        {
          labelSelector: this.spec.labelSelector,
          fieldSelector: this.spec.fieldSelector,
          limit: this.timing.pageSize,
          continue: continueToken,
        },
        this.stopSignal.signal,
      );
      items.push(...page.items);
      // The first page's resourceVersion is the snapshot the whole paged list belongs to.
      if (continueToken === undefined) resourceVersion = page.resourceVersion;
      continueToken = page.continueToken;
    } while (continueToken !== undefined && !this.stopped);
    if (this.stopped) return;
    const plan = planRelist(this.known, items, this.spec.keepObjects);
    this.known = plan.known;
    this.resourceVersion = resourceVersion;
    for (const change of plan.changes) this.observer.change(this.spec, change);
    if (!this.everSynced) {
      this.everSynced = true;
      this.observer.synced(this.spec, items.length);
    }
  }

  private async watchOnce(): Promise<{
    reason: RestartReason;
    relist: boolean;
    healthy: boolean;
    detail?: string;
  }> {
    const resource = this.resource as ResourceInfo;
    let ended: { gone: boolean; detail: string } | undefined;
    let sawEvent = false;
    const timeoutSeconds = Math.max(
      1,
      Math.round(this.timing.watchTimeoutSeconds * (0.9 + 0.2 * this.random())),
    );
    const handle = this.api.watch(
      resource,
      this.namespaceOf(resource),
      {
        resourceVersion: this.resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds,
        labelSelector: this.spec.labelSelector,
        fieldSelector: this.spec.fieldSelector,
      },
      {
        onOpen: () => (this.phase = "watching"),
        onEvent: (event) => {
          if (ended !== undefined) return;
          sawEvent = true;
          ended = this.onWatchEvent(event);
          if (ended !== undefined) handle.stop();
        },
      },
      this.timing.inactivityMs,
    );
    this.watchHandle = handle;
    const end: WatchEnd = await handle.done;
    this.watchHandle = undefined;
    this.phase = "between";
    const forced = this.forced;
    this.forced = undefined;
    if (ended !== undefined) {
      return {
        reason: ended.gone ? "expired" : "error",
        relist: true,
        healthy: ended.gone,
        detail: ended.detail,
      };
    }
    if (forced !== undefined)
      return { reason: "forced", relist: forced === "relist", healthy: true };
    switch (end.kind) {
      case "closed":
        return { reason: "closed", relist: false, healthy: true };
      case "inactive":
        return { reason: "inactive", relist: true, healthy: true };
      case "stopped":
        return { reason: "forced", relist: true, healthy: true };
      case "error": {
        const gone = end.error.status === 410;
        return {
          reason: gone ? "expired" : "error",
          relist: true,
          healthy: gone || sawEvent,
          detail: end.error.message,
        };
      }
    }
  }

  /** Says why when the watch must end and the stream re-list (an ERROR event, a bad object). */
  private onWatchEvent(event: WatchEvent): { gone: boolean; detail: string } | undefined {
    const rv = event.object.metadata?.resourceVersion;
    switch (event.type) {
      case "ERROR": {
        const { code, reason, message } = event.object;
        return { gone: code === 410, detail: `${code ?? "?"} ${reason ?? ""}: ${message ?? ""}` };
      }
      case "BOOKMARK":
        if (rv !== undefined) this.resourceVersion = rv;
        return undefined;
      default: {
        const object = event.object as KubeObject;
        if (typeof object.metadata?.name !== "string") {
          return { gone: false, detail: `${event.type} event without metadata.name` };
        }
        const change = applyWatchEvent(this.known, event.type, object, this.spec.keepObjects);
        if (rv !== undefined) this.resourceVersion = rv;
        this.observer.change(this.spec, change);
        return undefined;
      }
    }
  }

  private backoff(failures: number): number {
    return backoffDelay(failures, this.timing.backoff, this.random);
  }

  /** Waits, but wakes at once on stop(). */
  private pause(ms: number): Promise<void> {
    if (this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wake = done;
    });
  }
}
