/** A manual clock for the dispatcher: time moves only when a test says so. */
import type { Clock } from "../../../connector/dispatcher.js";

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
}

/** Lets promise callbacks (a resolved send, the dispatcher's follow-up) run to completion. */
export const flushPromises = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class FakeClock implements Clock {
  private time = 0;
  private seq = 0;
  private timers: Timer[] = [];

  now(): number {
    return this.time;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer = { at: this.time + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Moves time forward, firing due timers in time order, each at its own instant. */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      await flushPromises();
      const due = this.timers
        .filter((t) => t.at <= until)
        .sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (due === undefined) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.time = due.at;
      due.fn();
    }
    this.time = until;
    await flushPromises();
  }

  pendingTimers(): number {
    return this.timers.length;
  }
}
