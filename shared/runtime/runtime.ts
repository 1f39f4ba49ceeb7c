/**
 * State one process shares across its apps: logger, metrics, the requests in flight, and the
 * shutdown switch (readiness goes 503, then in-flight work drains, then handlers are aborted).
 */
import { DEFAULT_MAX_BODY_BYTES } from "../events/parse.js";
import { createLogger, type Logger } from "./log.js";
import { RuntimeMetrics } from "./metrics.js";

export interface RuntimeOptions {
  readonly logger?: Logger;
  /** Larger request bodies are answered 413. Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Also export process metrics (CPU, memory, event loop). Default false. */
  readonly defaultMetrics?: boolean;
  /** Extra readiness condition for GET /_/ready; the runtime is never ready while shutting down. */
  readonly isReady?: () => boolean | Promise<boolean>;
}

export class Runtime {
  readonly logger: Logger;
  readonly metrics: RuntimeMetrics;
  readonly maxBodyBytes: number;
  private readonly readiness: () => boolean | Promise<boolean>;
  private readonly abortController = new AbortController();
  private inFlight = 0;
  private idleWaiters: Array<() => void> = [];
  private shuttingDown = false;

  constructor(options: RuntimeOptions = {}) {
    this.logger = options.logger ?? createLogger();
    this.metrics = new RuntimeMetrics({ defaultMetrics: options.defaultMetrics ?? false });
    this.maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
    this.readiness = options.isReady ?? (() => true);
  }

  /** Aborted when shutdown gives up waiting for in-flight work. */
  get signal(): AbortSignal {
    return this.abortController.signal;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  async isReady(): Promise<boolean> {
    return !this.shuttingDown && (await this.readiness());
  }

  /** Counts `work` as in flight until it settles. */
  async track<T>(work: () => Promise<T>): Promise<T> {
    this.inFlight += 1;
    this.metrics.inFlight.inc();
    try {
      return await work();
    } finally {
      this.inFlight -= 1;
      this.metrics.inFlight.dec();
      if (this.inFlight === 0) this.wakeIdleWaiters();
    }
  }

  get requestsInFlight(): number {
    return this.inFlight;
  }

  /** Readiness goes 503 from now on; work already accepted goes on. */
  beginShutdown(): void {
    this.shuttingDown = true;
  }

  /**
   * Resolves true once nothing is in flight, or false at the deadline, after aborting the
   * handlers still running (their HandlerContext.signal).
   */
  async drain(timeoutMs: number): Promise<boolean> {
    if (this.inFlight === 0) return true;
    let timer: NodeJS.Timeout | undefined;
    const idle = new Promise<true>((resolve) => this.idleWaiters.push(() => resolve(true)));
    const deadline = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), timeoutMs);
    });
    const drained = await Promise.race([idle, deadline]);
    clearTimeout(timer);
    if (!drained) this.abortController.abort(new Error("shutting down"));
    return drained;
  }

  private wakeIdleWaiters(): void {
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }
}
