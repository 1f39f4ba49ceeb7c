import { DeliveryQueue } from "../../../connector/delivery-queue.js";

/** Events are strings "<action>:<version>"; "d" (delete) is a barrier, others merge (later wins). */
const merge = (queued: string, incoming: string): string | undefined =>
  queued.startsWith("d") && !incoming.startsWith("d") ? undefined : incoming;

const queueOf = (maxInFlight = 8) => new DeliveryQueue<string>({ maxInFlight, merge });
const taken = (q: DeliveryQueue<string>, now = 0) =>
  q.take(now).map((d) => `${d.key}=${d.event}#${d.attempt}`);

describe("DeliveryQueue: per-key ordering", () => {
  it("sends one event per key at a time; the next waits for the outcome", () => {
    const q = queueOf();
    q.push("a", "d:1", 0);
    q.push("a", "u:2", 0);
    expect(taken(q)).toEqual(["a=d:1#1"]);
    expect(taken(q)).toEqual([]);
    q.settle("a", { kind: "done" }, 0);
    expect(taken(q)).toEqual(["a=u:2#1"]);
  });

  it("never merges into the event being sent; later events merge among themselves", () => {
    const q = queueOf();
    q.push("a", "u:1", 0);
    expect(taken(q)).toEqual(["a=u:1#1"]);
    expect(q.push("a", "u:2", 0)).toBe("queued");
    expect(q.push("a", "u:3", 0)).toBe("coalesced");
    q.settle("a", { kind: "done" }, 0);
    expect(taken(q)).toEqual(["a=u:3#1"]);
    q.settle("a", { kind: "done" }, 0);
    expect(q.stats()).toEqual({ waiting: 0, delayedKeys: 0, inFlight: 0 });
  });

  it("coalesces a burst for one object into the newest state", () => {
    const q = queueOf();
    for (let v = 1; v <= 5; v += 1) q.push("a", `u:${v}`, 0);
    expect(q.stats().waiting).toBe(1);
    expect(taken(q)).toEqual(["a=u:5#1"]);
  });

  it("keeps a delete barrier: delete then re-add of the same name are both delivered, in order", () => {
    const q = queueOf();
    q.push("a", "u:1", 0);
    q.push("a", "d:2", 0);
    q.push("a", "a:3", 0);
    q.push("a", "u:4", 0);
    expect(taken(q)).toEqual(["a=d:2#1"]);
    q.settle("a", { kind: "done" }, 0);
    expect(taken(q)).toEqual(["a=u:4#1"]);
  });
});

describe("DeliveryQueue: global concurrency bound", () => {
  it("starts at most maxInFlight deliveries, oldest key first, and refills as they settle", () => {
    const q = queueOf(3);
    for (const key of ["k1", "k2", "k3", "k4", "k5"]) q.push(key, "u:1", 0);
    expect(taken(q)).toEqual(["k1=u:1#1", "k2=u:1#1", "k3=u:1#1"]);
    expect(taken(q)).toEqual([]);
    q.settle("k2", { kind: "done" }, 0);
    expect(taken(q)).toEqual(["k4=u:1#1"]);
    expect(q.stats()).toEqual({ waiting: 1, delayedKeys: 0, inFlight: 3 });
  });

  it("rejects a bound below one", () => {
    expect(() => queueOf(0)).toThrow(RangeError);
  });
});

describe("DeliveryQueue: retries", () => {
  it("holds a failed event at the front of its key until its retry time", () => {
    const q = queueOf();
    q.push("a", "u:1", 0);
    q.push("b", "u:1", 0);
    taken(q);
    q.settle("a", { kind: "retry", at: 1_000 }, 10);
    expect(q.nextWakeAt()).toBe(1_000);
    expect(q.stats().delayedKeys).toBe(1);
    expect(taken(q, 999)).toEqual([]);
    expect(taken(q, 1_000)).toEqual(["a=u:1#2"]);
  });

  it("folds events that arrived during the failed attempt into the retry, keeping its age", () => {
    const q = queueOf();
    q.push("a", "u:1", 5);
    taken(q, 5);
    q.push("a", "u:2", 20);
    q.push("a", "u:3", 30);
    q.settle("a", { kind: "retry", at: 500 }, 40);
    expect(q.stats().waiting).toBe(1);
    const [retry] = q.take(500);
    expect(retry).toEqual({ key: "a", event: "u:3", attempt: 2, enqueuedAt: 5 });
  });

  it("lets a newer event merge into a waiting retry without moving its retry time", () => {
    const q = queueOf();
    q.push("a", "u:1", 0);
    taken(q);
    q.settle("a", { kind: "retry", at: 300 }, 0);
    expect(q.push("a", "u:2", 100)).toBe("coalesced");
    expect(taken(q, 200)).toEqual([]);
    expect(taken(q, 300)).toEqual(["a=u:2#2"]);
  });

  it("orders delayed keys by their retry time", () => {
    const q = queueOf();
    for (const key of ["a", "b", "c"]) q.push(key, "u:1", 0);
    taken(q);
    q.settle("a", { kind: "retry", at: 300 }, 0);
    q.settle("b", { kind: "retry", at: 100 }, 0);
    q.settle("c", { kind: "retry", at: 200 }, 0);
    expect(q.nextWakeAt()).toBe(100);
    expect(taken(q, 250)).toEqual(["b=u:1#2", "c=u:1#2"]);
    expect(q.nextWakeAt()).toBe(300);
  });
});

describe("DeliveryQueue: drain on shutdown", () => {
  it("hands back everything not in flight and leaves in-flight deliveries to settle", () => {
    const q = queueOf(1);
    q.push("a", "d:1", 0);
    q.push("a", "u:2", 0);
    q.push("b", "u:1", 0);
    expect(taken(q)).toEqual(["a=d:1#1"]);
    expect(q.drainWaiting()).toEqual([
      { key: "a", event: "u:2", attempts: 0 },
      { key: "b", event: "u:1", attempts: 0 },
    ]);
    expect(q.stats()).toEqual({ waiting: 0, delayedKeys: 0, inFlight: 1 });
    q.settle("a", { kind: "done" }, 0);
    expect(q.stats()).toEqual({ waiting: 0, delayedKeys: 0, inFlight: 0 });
    expect(q.nextWakeAt()).toBeUndefined();
  });

  it("refuses to settle a key with nothing in flight", () => {
    expect(() => queueOf().settle("nope", { kind: "done" }, 0)).toThrow(/no delivery in flight/);
  });
});
