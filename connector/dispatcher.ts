/**
 * Runs the pure DeliveryQueue against a real (or fake) clock and sender: starts deliveries, applies
 * the retry policy to each answer, arms one timer for the next delayed retry, and drains on
 * shutdown. Logging and metrics hang off the observer, so this file knows neither pino nor prom.
 */
import { DeliveryQueue, type Delivery, type QueueStats } from "./delivery-queue.js";
import { coalesce, eventKey, type PendingEvent } from "./pending-event.js";
import {
  classifySendResult,
  planAfterFailure,
  type DeadLetterReason,
  type RetryPolicy,
  type SendResult,
} from "./retry-policy.js";
import { messageOf } from "../shared/core/error-message.js";

export interface Clock {
  now(): number;
  /** Calls `fn` after `ms`; the returned function cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimer(ms, fn) {
    const timer = setTimeout(fn, ms);
    return () => clearTimeout(timer);
  },
};

export interface Sender {
  send(event: PendingEvent, signal: AbortSignal): Promise<SendResult>;
}

export interface DispatcherObserver {
  queued?(event: PendingEvent, how: "queued" | "coalesced"): void;
  delivered?(delivery: Delivery<PendingEvent>, result: SendResult, durationMs: number): void;
  retrying?(delivery: Delivery<PendingEvent>, result: SendResult, delayMs: number): void;
  deadLettered?(
    delivery: Delivery<PendingEvent>,
    reason: DeadLetterReason,
    result: SendResult,
    ageMs: number,
  ): void;
}

export interface DispatcherOptions {
  readonly maxInFlight: number;
  readonly policy: RetryPolicy;
  readonly sender: Sender;
  readonly clock?: Clock;
  readonly random?: () => number;
  readonly observer?: DispatcherObserver;
}

export interface HandedBack {
  readonly key: string;
  readonly event: PendingEvent;
  /** Attempts already made (0 = never sent). */
  readonly attempts: number;
  readonly why: "not-started" | "retry-after-deadline" | "aborted-in-flight";
}

export interface DrainReport {
  /** Deliveries that finished (sent or dead-lettered) while draining. */
  readonly finished: number;
  readonly handedBack: readonly HandedBack[];
}

export class Dispatcher {
  private readonly queue: DeliveryQueue<PendingEvent>;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly observer: DispatcherObserver;
  private readonly inFlight = new Map<string, AbortController>();
  private cancelTimer: (() => void) | undefined;
  private timerAt: number | undefined;
  private drain: DrainState | undefined;

  constructor(private readonly options: DispatcherOptions) {
    this.queue = new DeliveryQueue<PendingEvent>({
      maxInFlight: options.maxInFlight,
      merge: coalesce,
    });
    this.clock = options.clock ?? systemClock;
    this.random = options.random ?? Math.random;
    this.observer = options.observer ?? {};
  }

  /** Queues an event; ignored (and reported by the caller's drain report) once draining. */
  enqueue(event: PendingEvent): boolean {
    if (this.drain !== undefined) return false;
    const how = this.queue.push(eventKey(event), event, this.clock.now());
    this.observer.queued?.(event, how);
    this.pump();
    return true;
  }

  stats(): QueueStats {
    return this.queue.stats();
  }

  /**
   * Stops intake, keeps delivering (retries included) until the queue is empty or `deadlineMs`
   * from now, then aborts what is still in flight and hands back everything undelivered.
   */
  async shutdown(deadlineMs: number): Promise<DrainReport> {
    if (this.drain !== undefined) return this.drain.done;
    const deadline = this.clock.now() + deadlineMs;
    let resolve!: (report: DrainReport) => void;
    const done = new Promise<DrainReport>((r) => (resolve = r));
    this.drain = { deadline, finished: 0, handedBack: [], resolve, done, expired: false };
    const cancelDeadline = this.clock.setTimer(deadlineMs, () => this.expireDrain());
    void done.then(cancelDeadline);
    this.pump();
    this.checkDrained();
    return done;
  }

  private pump(): void {
    if (this.drain?.expired) return;
    for (const delivery of this.queue.take(this.clock.now())) {
      void this.deliver(delivery);
    }
    this.armTimer();
  }

  private async deliver(delivery: Delivery<PendingEvent>): Promise<void> {
    const abort = new AbortController();
    this.inFlight.set(delivery.key, abort);
    const started = this.clock.now();
    let result: SendResult;
    try {
      result = await this.options.sender.send(delivery.event, abort.signal);
    } catch (error) {
      result = {
        kind: "network-error",
        message: messageOf(error),
      };
    }
    this.inFlight.delete(delivery.key);
    this.settle(delivery, result, started);
    this.pump();
    this.checkDrained();
  }

  private settle(delivery: Delivery<PendingEvent>, result: SendResult, started: number): void {
    const now = this.clock.now();
    if (this.drain?.expired) {
      this.queue.settle(delivery.key, { kind: "done" }, now);
      this.handBack(delivery, "aborted-in-flight");
      return;
    }
    if (classifySendResult(result) === "delivered") {
      this.queue.settle(delivery.key, { kind: "done" }, now);
      this.finished();
      this.observer.delivered?.(delivery, result, now - started);
      return;
    }
    const next = planAfterFailure(
      { attempts: delivery.attempt, observedAt: delivery.enqueuedAt, now, result },
      this.options.policy,
      this.random,
    );
    if (next.kind === "dead-letter") {
      this.queue.settle(delivery.key, { kind: "done" }, now);
      this.finished();
      this.observer.deadLettered?.(delivery, next.reason, result, now - delivery.enqueuedAt);
      return;
    }
    this.queue.settle(delivery.key, { kind: "retry", at: next.at }, now);
    this.observer.retrying?.(delivery, result, next.delayMs);
  }

  private armTimer(): void {
    const at = this.queue.nextWakeAt();
    if (at === undefined || (this.timerAt !== undefined && this.timerAt <= at)) return;
    this.cancelTimer?.();
    this.timerAt = at;
    this.cancelTimer = this.clock.setTimer(Math.max(0, at - this.clock.now()), () => {
      this.cancelTimer = undefined;
      this.timerAt = undefined;
      this.pump();
    });
  }

  private finished(): void {
    if (this.drain !== undefined) this.drain.finished += 1;
  }

  private handBack(delivery: Delivery<PendingEvent>, why: HandedBack["why"]): void {
    this.drain?.handedBack.push({
      key: delivery.key,
      event: delivery.event,
      attempts: delivery.attempt,
      why,
    });
  }

  private expireDrain(): void {
    const drain = this.drain;
    if (drain === undefined || drain.expired) return;
    drain.expired = true;
    this.cancelTimer?.();
    for (const abort of this.inFlight.values()) abort.abort(new Error("connector shutting down"));
    this.checkDrained();
  }

  private checkDrained(): void {
    const drain = this.drain;
    if (drain === undefined) return;
    const stats = this.queue.stats();
    if (stats.inFlight > 0) return;
    if (stats.waiting > 0 && !drain.expired) {
      // Only delayed retries are left; if none can run before the deadline, stop waiting now.
      const wake = this.queue.nextWakeAt();
      if (wake !== undefined && wake <= drain.deadline) return;
    }
    for (const left of this.queue.drainWaiting()) {
      drain.handedBack.push({
        key: left.key,
        event: left.event,
        attempts: left.attempts,
        why: left.attempts === 0 ? "not-started" : "retry-after-deadline",
      });
    }
    this.cancelTimer?.();
    drain.resolve({ finished: drain.finished, handedBack: drain.handedBack });
  }
}

interface DrainState {
  readonly deadline: number;
  finished: number;
  readonly handedBack: HandedBack[];
  readonly resolve: (report: DrainReport) => void;
  readonly done: Promise<DrainReport>;
  expired: boolean;
}
