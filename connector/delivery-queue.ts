/**
 * The connector's work queue, as a pure state machine: every method takes `now` and nothing runs
 * by itself. It guarantees
 * - per-key ordering: at most one delivery per key is in flight, the next waits for its outcome;
 * - coalescing: an event pushed behind a waiting one for the same key may merge into it (the
 *   `merge` rule decides; the merged entry keeps its place, attempt count and age);
 * - a global bound on deliveries in flight;
 * - delayed retries: a failed head stays at the front of its key until its `notBefore`.
 * Keys become ready in FIFO order; delayed keys wait in a min-heap by time.
 */

export interface Delivery<E> {
  readonly key: string;
  readonly event: E;
  /** 1 for the first attempt. */
  readonly attempt: number;
  /** When the (possibly merged) entry was first queued: the start of its age budget. */
  readonly enqueuedAt: number;
}

export type Settlement =
  { readonly kind: "done" } | { readonly kind: "retry"; readonly at: number };

export interface QueueStats {
  /** Entries waiting (ready or delayed), not counting those in flight. */
  readonly waiting: number;
  /** Keys whose head waits for a retry time. */
  readonly delayedKeys: number;
  readonly inFlight: number;
}

export type PushResult = "queued" | "coalesced";

interface Entry<E> {
  event: E;
  readonly enqueuedAt: number;
  attempts: number;
  notBefore: number;
}

interface KeyState<E> {
  readonly entries: Entry<E>[];
  inFlight: boolean;
  /** Where the key sits while its head waits: in the ready FIFO, in the delayed heap, or nowhere. */
  slot: "ready" | "delayed" | undefined;
}

export interface DeliveryQueueOptions<E> {
  readonly maxInFlight: number;
  /** Merge `incoming` into `queued` (same key), or undefined to keep both in order. */
  readonly merge: (queued: E, incoming: E) => E | undefined;
}

export class DeliveryQueue<E> {
  private readonly keys = new Map<string, KeyState<E>>();
  private readonly ready: string[] = [];
  private readyHead = 0;
  private readonly delayed = new MinHeap();
  private inFlightCount = 0;
  private waitingCount = 0;

  constructor(private readonly options: DeliveryQueueOptions<E>) {
    if (!(options.maxInFlight >= 1)) throw new RangeError("maxInFlight must be at least 1");
  }

  push(key: string, event: E, now: number): PushResult {
    let state = this.keys.get(key);
    if (state === undefined) {
      state = { entries: [], inFlight: false, slot: undefined };
      this.keys.set(key, state);
    }
    const tailIndex = state.entries.length - 1;
    const tail = state.entries[tailIndex];
    // The in-flight head is being sent as it is: never merge into it.
    const tailIsSending = tailIndex === 0 && state.inFlight;
    if (tail !== undefined && !tailIsSending) {
      const merged = this.options.merge(tail.event, event);
      if (merged !== undefined) {
        tail.event = merged;
        return "coalesced";
      }
    }
    state.entries.push({ event, enqueuedAt: now, attempts: 0, notBefore: now });
    this.waitingCount += 1;
    this.schedule(key, state, now);
    return "queued";
  }

  /** Starts as many deliveries as the bound allows, oldest-ready key first. */
  take(now: number): Delivery<E>[] {
    this.promoteDue(now);
    const started: Delivery<E>[] = [];
    while (this.inFlightCount < this.options.maxInFlight && this.readyHead < this.ready.length) {
      const key = this.ready[this.readyHead] as string;
      this.readyHead += 1;
      const state = this.keys.get(key);
      const head = state?.entries[0];
      if (state === undefined || head === undefined || state.slot !== "ready") continue;
      state.slot = undefined;
      state.inFlight = true;
      head.attempts += 1;
      this.inFlightCount += 1;
      this.waitingCount -= 1;
      started.push({ key, event: head.event, attempt: head.attempts, enqueuedAt: head.enqueuedAt });
    }
    this.compactReady();
    return started;
  }

  /** Records the outcome of the key's in-flight delivery. */
  settle(key: string, settlement: Settlement, now: number): void {
    const state = this.keys.get(key);
    if (state === undefined || !state.inFlight) {
      throw new Error(`settle: no delivery in flight for ${key}`);
    }
    state.inFlight = false;
    this.inFlightCount -= 1;
    if (settlement.kind === "done") {
      state.entries.shift();
    } else {
      const head = state.entries[0] as Entry<E>;
      head.notBefore = settlement.at;
      this.waitingCount += 1;
      this.mergeBehindHead(state);
    }
    if (state.entries.length === 0) {
      this.keys.delete(key);
      return;
    }
    this.schedule(key, state, now);
  }

  /** The earliest time a delayed key becomes ready, if any. */
  nextWakeAt(): number | undefined {
    for (;;) {
      const top = this.delayed.peek();
      if (top === undefined) return undefined;
      if (this.isLiveDelay(top)) return top.at;
      this.delayed.pop();
    }
  }

  stats(): QueueStats {
    let delayedKeys = 0;
    for (const state of this.keys.values()) if (state.slot === "delayed") delayedKeys += 1;
    return { waiting: this.waitingCount, delayedKeys, inFlight: this.inFlightCount };
  }

  /** Removes and returns everything not in flight (shutdown hands these back). */
  drainWaiting(): Array<{ key: string; event: E; attempts: number }> {
    const drained: Array<{ key: string; event: E; attempts: number }> = [];
    for (const [key, state] of this.keys) {
      const keep = state.inFlight ? 1 : 0;
      for (const entry of state.entries.splice(keep)) {
        drained.push({ key, event: entry.event, attempts: entry.attempts });
      }
      state.slot = undefined;
      if (state.entries.length === 0) this.keys.delete(key);
    }
    this.waitingCount = 0;
    this.ready.length = 0;
    this.readyHead = 0;
    this.delayed.clear();
    return drained;
  }

  /** After a failed attempt, newer events for the key fold into the retry (later data wins). */
  private mergeBehindHead(state: KeyState<E>): void {
    const head = state.entries[0] as Entry<E>;
    for (;;) {
      const next = state.entries[1];
      if (next === undefined) return;
      const merged = this.options.merge(head.event, next.event);
      if (merged === undefined) return;
      head.event = merged;
      state.entries.splice(1, 1);
      this.waitingCount -= 1;
    }
  }

  private schedule(key: string, state: KeyState<E>, now: number): void {
    const head = state.entries[0];
    if (head === undefined || state.inFlight || state.slot !== undefined) return;
    if (head.notBefore <= now) {
      state.slot = "ready";
      this.ready.push(key);
    } else {
      state.slot = "delayed";
      this.delayed.push({ at: head.notBefore, key });
    }
  }

  private promoteDue(now: number): void {
    for (;;) {
      const top = this.delayed.peek();
      if (top === undefined || top.at > now) return;
      this.delayed.pop();
      if (!this.isLiveDelay(top)) continue;
      const state = this.keys.get(top.key) as KeyState<E>;
      state.slot = "ready";
      this.ready.push(top.key);
    }
  }

  /** Heap items can outlive their key (drained or settled); skip those. */
  private isLiveDelay(item: DelayItem): boolean {
    const state = this.keys.get(item.key);
    return state?.slot === "delayed" && state.entries[0]?.notBefore === item.at;
  }

  private compactReady(): void {
    if (this.readyHead > 1024 && this.readyHead * 2 > this.ready.length) {
      this.ready.splice(0, this.readyHead);
      this.readyHead = 0;
    }
  }
}

interface DelayItem {
  readonly at: number;
  readonly key: string;
}

/** Binary min-heap by `at`. */
class MinHeap {
  private readonly items: DelayItem[] = [];

  peek(): DelayItem | undefined {
    return this.items[0];
  }

  clear(): void {
    this.items.length = 0;
  }

  push(item: DelayItem): void {
    const items = this.items;
    items.push(item);
    let i = items.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if ((items[parent] as DelayItem).at <= item.at) break;
      items[i] = items[parent] as DelayItem;
      i = parent;
    }
    items[i] = item;
  }

  pop(): DelayItem | undefined {
    const items = this.items;
    const top = items[0];
    const last = items.pop();
    if (top === undefined || last === undefined || items.length === 0) return top;
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child =
        right < items.length && (items[right] as DelayItem).at < (items[left] as DelayItem).at
          ? right
          : left;
      if ((items[child] as DelayItem).at >= last.at) break;
      items[i] = items[child] as DelayItem;
      i = child;
    }
    items[i] = last;
    return top;
  }
}
