import { Dispatcher, type DispatcherObserver, type Sender } from "../../../connector/dispatcher.js";
import type { PendingEvent } from "../../../connector/pending-event.js";
import type { RetryPolicy, SendResult } from "../../../connector/retry-policy.js";
import type { WatchAction } from "../../../shared/events/types.js";
import { FakeClock, flushPromises } from "./fake-clock.js";

const policy: RetryPolicy = {
  initialDelayMs: 100,
  maxDelayMs: 1_000,
  maxAttempts: 4,
  maxAgeMs: 60_000,
  retryAfterMaxMs: 30_000,
};

const event = (
  name: string,
  action: WatchAction = "update",
  id = `${name}-${action}`,
): PendingEvent => ({
  route: "fn",
  action,
  ref: { apiVersion: "v1", kind: "Pod", namespace: "ns", name },
  id,
});

const ok: SendResult = { kind: "response", status: 202 };
const unavailable = (retryAfter?: string): SendResult =>
  retryAfter === undefined
    ? { kind: "response", status: 503 }
    : { kind: "response", status: 503, retryAfter };

interface Call {
  readonly id: string;
  readonly at: number;
  readonly signal: AbortSignal;
  answer(result: SendResult): void;
}

/** A sink whose answers the test gives: scripted ones at once, or by hand via `calls`. */
class ScriptedSink implements Sender {
  readonly calls: Call[] = [];
  constructor(
    private readonly clock: FakeClock,
    private readonly script: SendResult[] = [],
  ) {}

  send(e: PendingEvent, signal: AbortSignal): Promise<SendResult> {
    return new Promise((resolve) => {
      this.calls.push({ id: e.id, at: this.clock.now(), signal, answer: resolve });
      const scripted = this.script.shift();
      if (scripted !== undefined) resolve(scripted);
      signal.addEventListener("abort", () =>
        resolve({ kind: "network-error", message: "aborted" }),
      );
    });
  }

  open(): Call[] {
    return this.calls.filter((c) => !c.signal.aborted);
  }
}

function recorder() {
  const log: string[] = [];
  const observer: DispatcherObserver = {
    queued: (e, how) => log.push(`${how} ${e.id}`),
    delivered: (d) => log.push(`delivered ${d.event.id} after ${d.attempt}`),
    retrying: (d, r, delayMs) =>
      log.push(
        `retry ${d.event.id} (${r.kind === "response" ? r.status : "network"}) in ${delayMs}`,
      ),
    deadLettered: (d, reason, _r, ageMs) =>
      log.push(`dead-letter ${d.event.id} ${reason} after ${d.attempt} attempts, ${ageMs} ms`),
  };
  return { log, observer };
}

function setup(script: SendResult[] = [], maxInFlight = 4) {
  const clock = new FakeClock();
  const sink = new ScriptedSink(clock, script);
  const { log, observer } = recorder();
  const dispatcher = new Dispatcher({
    maxInFlight,
    policy,
    sender: sink,
    clock,
    random: () => 0.5,
    observer,
  });
  return { clock, sink, log, dispatcher };
}

describe("Dispatcher: a sink answering 503 then 202 gets a redelivery", () => {
  it("redelivers the same event (same CloudEvent id) after the backoff", async () => {
    const { clock, sink, log, dispatcher } = setup([unavailable(), ok]);
    dispatcher.enqueue(event("p1"));
    await clock.advance(0);
    expect(sink.calls.map((c) => [c.id, c.at])).toEqual([["p1-update", 0]]);
    await clock.advance(74);
    expect(sink.calls).toHaveLength(1);
    await clock.advance(1);
    expect(sink.calls.map((c) => [c.id, c.at])).toEqual([
      ["p1-update", 0],
      ["p1-update", 75],
    ]);
    expect(log).toEqual([
      "queued p1-update",
      "retry p1-update (503) in 75",
      "delivered p1-update after 2",
    ]);
  });

  it("honours Retry-After: nothing is sent before the sink asked", async () => {
    const { clock, sink, dispatcher } = setup([unavailable("7"), ok]);
    dispatcher.enqueue(event("p1"));
    await clock.advance(6_999);
    expect(sink.calls).toHaveLength(1);
    await clock.advance(1);
    expect(sink.calls.map((c) => c.at)).toEqual([0, 7_000]);
  });
});

describe("Dispatcher: dead letter after the budget", () => {
  it("gives up after maxAttempts with backoff 75, 150, 300 ms between attempts", async () => {
    const { clock, sink, log, dispatcher } = setup(Array.from({ length: 10 }, () => unavailable()));
    dispatcher.enqueue(event("p1"));
    await clock.advance(10_000);
    expect(sink.calls.map((c) => c.at)).toEqual([0, 75, 225, 525]);
    expect(log.at(-1)).toBe("dead-letter p1-update attempts-exhausted after 4 attempts, 525 ms");
    expect(dispatcher.stats()).toEqual({ waiting: 0, delayedKeys: 0, inFlight: 0 });
  });

  it("dead-letters a rejected event (422) at once, without retry", async () => {
    const { clock, sink, log, dispatcher } = setup([{ kind: "response", status: 422 }]);
    dispatcher.enqueue(event("p1"));
    await clock.advance(10_000);
    expect(sink.calls).toHaveLength(1);
    expect(log.at(-1)).toBe("dead-letter p1-update rejected after 1 attempts, 0 ms");
  });

  it("moves on to the object's next event after dead-lettering one", async () => {
    const { clock, sink, dispatcher } = setup([{ kind: "response", status: 400 }, ok]);
    dispatcher.enqueue(event("p1", "delete"));
    dispatcher.enqueue(event("p1", "add"));
    await clock.advance(0);
    expect(sink.calls.map((c) => c.id)).toEqual(["p1-delete", "p1-add"]);
  });
});

describe("Dispatcher: ordering and concurrency", () => {
  it("keeps one delivery per object in flight and sends the newest state next", async () => {
    const { clock, sink, dispatcher } = setup();
    dispatcher.enqueue(event("p1", "add", "v1"));
    await clock.advance(0);
    dispatcher.enqueue(event("p1", "update", "v2"));
    dispatcher.enqueue(event("p1", "update", "v3"));
    await clock.advance(0);
    expect(sink.calls.map((c) => c.id)).toEqual(["v1"]);
    sink.calls[0]?.answer(ok);
    await flushPromises();
    expect(sink.calls.map((c) => c.id)).toEqual(["v1", "v3"]);
  });

  it("never has more than maxInFlight deliveries open", async () => {
    const { clock, sink, dispatcher } = setup([], 2);
    for (const name of ["a", "b", "c", "d", "e"]) dispatcher.enqueue(event(name));
    await clock.advance(0);
    expect(sink.open().map((c) => c.id)).toEqual(["a-update", "b-update"]);
    sink.calls[1]?.answer(ok);
    await flushPromises();
    expect(sink.calls.map((c) => c.id)).toEqual(["a-update", "b-update", "c-update"]);
    expect(dispatcher.stats()).toEqual({ waiting: 2, delayedKeys: 0, inFlight: 2 });
  });

  it("does not let one failing object hold up the others", async () => {
    const { clock, sink, dispatcher } = setup([unavailable(), ok, ok], 1);
    dispatcher.enqueue(event("bad"));
    dispatcher.enqueue(event("good"));
    await clock.advance(0);
    expect(sink.calls.map((c) => [c.id, c.at])).toEqual([
      ["bad-update", 0],
      ["good-update", 0],
    ]);
    await clock.advance(75);
    expect(sink.calls.map((c) => [c.id, c.at]).at(-1)).toEqual(["bad-update", 75]);
  });
});

describe("Dispatcher: shutdown", () => {
  it("finishes in-flight and queued deliveries within the deadline", async () => {
    const { clock, sink, dispatcher } = setup([], 1);
    dispatcher.enqueue(event("a"));
    dispatcher.enqueue(event("b"));
    await clock.advance(0);
    const report = dispatcher.shutdown(5_000);
    expect(dispatcher.enqueue(event("late"))).toBe(false);
    sink.calls[0]?.answer(ok);
    await flushPromises();
    sink.calls[1]?.answer(ok);
    await expect(report).resolves.toEqual({ finished: 2, handedBack: [] });
    expect(clock.pendingTimers()).toBe(0);
  });

  it("aborts what is still in flight at the deadline and hands it back with the queue", async () => {
    const { clock, sink, dispatcher } = setup([], 1);
    dispatcher.enqueue(event("stuck"));
    dispatcher.enqueue(event("waiting"));
    await clock.advance(0);
    const report = dispatcher.shutdown(2_000);
    await clock.advance(2_000);
    const { finished, handedBack } = await report;
    expect(sink.calls[0]?.signal.aborted).toBe(true);
    expect(finished).toBe(0);
    expect(handedBack.map((h) => [h.event.id, h.why, h.attempts])).toEqual([
      ["stuck-update", "aborted-in-flight", 1],
      ["waiting-update", "not-started", 0],
    ]);
  });

  it("hands back a retry that could only happen after the deadline, without waiting for it", async () => {
    const { clock, dispatcher } = setup([unavailable("60")]);
    dispatcher.enqueue(event("p1"));
    await clock.advance(0);
    const { handedBack } = await dispatcher.shutdown(5_000);
    expect(clock.now()).toBe(0);
    expect(handedBack.map((h) => [h.event.id, h.why])).toEqual([
      ["p1-update", "retry-after-deadline"],
    ]);
  });

  it("still retries during the drain when the retry fits before the deadline", async () => {
    const { clock, sink, dispatcher } = setup([unavailable("1"), ok]);
    dispatcher.enqueue(event("p1"));
    await clock.advance(0);
    const report = dispatcher.shutdown(5_000);
    await clock.advance(1_000);
    await expect(report).resolves.toEqual({ finished: 1, handedBack: [] });
    expect(sink.calls.map((c) => c.at)).toEqual([0, 1_000]);
  });
});
