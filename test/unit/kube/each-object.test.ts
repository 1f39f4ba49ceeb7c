// One object's failure stays that object's: reported on it (a log line, a Warning Event unless it
// passes by itself), turned into its outcome, and never the end of the others.
import {
  eachObject,
  OBJECT_FAILED_REASON,
  settleObject,
} from "../../../shared/kube/each-object.js";
import { KubeError } from "../../../shared/kube/errors.js";
import type { EventRecord } from "../../../shared/kube/event-recorder.js";
import { batchOutcome, done, type Outcome } from "../../../shared/core/outcome.js";

function world() {
  const events: EventRecord[] = [];
  const lines: { level: string; message: string }[] = [];
  const line = (level: string) => (_fields: Record<string, unknown>, message: string) => {
    lines.push({ level, message });
  };
  return {
    events,
    lines,
    recorder: { record: (e: EventRecord) => Promise.resolve(void events.push(e)) },
    log: { info: line("info"), warn: line("warn"), error: line("error"), debug: line("debug") },
  };
}

const regarding = (name: string) => ({
  apiVersion: "clusterlink.net/v1alpha1",
  kind: "Export",
  namespace: "app",
  name,
});

const refused = new KubeError("invalid", "patch Export app/b: 422 Invalid: refused by policy", 422);

describe("eachObject", () => {
  it("handles every object; the one the API server refuses is reported on itself and skipped", async () => {
    const w = world();
    const handled: string[] = [];
    const outcomes = await eachObject(
      ["a", "b", "c"],
      (name) => {
        if (name === "b") return Promise.reject(refused);
        handled.push(name);
        return Promise.resolve(done(`${name} valid`));
      },
      { regarding, log: w.log, events: w.recorder },
    );
    expect(handled).toEqual(["a", "c"]);
    expect(outcomes.map((o) => o.kind)).toEqual(["done", "permanent", "done"]);
    expect(outcomes[1]).toMatchObject({ code: "Rejected" });
    expect(w.events).toEqual([
      expect.objectContaining({
        regarding: regarding("b"),
        type: "Warning",
        reason: OBJECT_FAILED_REASON,
        note: expect.stringMatching(
          /refused by policy.*skipped, the others were handled/,
        ) as unknown,
      }),
    ]);
    expect(w.lines).toEqual([
      { level: "warn", message: expect.stringMatching(/^Export app\/b skipped: /) as unknown },
    ]);
    expect(batchOutcome(outcomes)).toMatchObject({ kind: "done" });
  });

  it("a bug on one object is logged with its error and becomes its own InternalError, not a 500", async () => {
    const w = world();
    const outcomes = await eachObject(
      ["a", "b"],
      (name) =>
        name === "a"
          ? Promise.reject(new TypeError("x is undefined"))
          : Promise.resolve(done("ok")),
      { regarding, log: w.log, events: w.recorder },
    );
    expect(outcomes).toEqual([
      expect.objectContaining({ kind: "permanent", code: "InternalError" }),
      done("ok"),
    ]);
    expect(w.lines.map((l) => l.level)).toEqual(["error"]);
    expect(w.events).toHaveLength(1);
  });

  it("an outage passes by itself: a retry for that object and a log line, no Event", async () => {
    const w = world();
    const outcomes = await eachObject(
      ["a", "b"],
      (name) =>
        name === "a"
          ? Promise.reject(new KubeError("unavailable", "get Service app/a: 503", 503))
          : Promise.resolve(done("ok")),
      { regarding, log: w.log, events: w.recorder },
    );
    expect(outcomes.map((o) => o.kind)).toEqual(["retry", "done"]);
    expect(w.events).toEqual([]);
    expect(batchOutcome(outcomes).kind).toBe("retry");
  });

  it("a failure the caller retries whole is thrown, after the objects started, and no more start", async () => {
    const w = world();
    const started: number[] = [];
    const race = new KubeError("conflict", "409");
    const run = eachObject(
      [1, 2, 3, 4, 5],
      (n) => {
        started.push(n);
        return n === 2 ? Promise.reject(race) : Promise.resolve(done(`${n}`));
      },
      {
        regarding: (n) => regarding(String(n)),
        log: w.log,
        events: w.recorder,
        rethrow: (e) => e === race,
        concurrency: 2,
      },
    );
    await expect(run).rejects.toBe(race);
    expect(started.slice(0, 2)).toEqual([1, 2]);
    expect(started).not.toContain(5);
    expect(w.lines).toEqual([]);
  });

  it("never runs more than `concurrency` objects at once", async () => {
    const w = world();
    let running = 0;
    let most = 0;
    await eachObject(
      Array.from({ length: 20 }, (_, i) => i),
      async (): Promise<Outcome> => {
        running += 1;
        most = Math.max(most, running);
        await Promise.resolve();
        running -= 1;
        return done("ok");
      },
      { regarding: (n) => regarding(String(n)), log: w.log, concurrency: 3 },
    );
    expect(most).toBe(3);
  });
});

describe("settleObject", () => {
  it("tells the object why through onFailure; a failure to tell is logged, not thrown", async () => {
    const w = world();
    const told: Outcome[] = [];
    const result = await settleObject(
      () => Promise.reject(refused),
      (outcome) => ({ outcome }),
      {
        object: "Export app/b",
        regarding: regarding("b"),
        log: w.log,
        onFailure: (outcome) => {
          told.push(outcome);
          return Promise.reject(new Error("status write refused too"));
        },
      },
    );
    expect(result.outcome).toMatchObject({ kind: "permanent", code: "Rejected" });
    expect(told).toEqual([result.outcome]);
    expect(w.lines.map((l) => l.message)).toEqual([
      expect.stringMatching(/skipped/) as unknown,
      "Export app/b: could not record why: status write refused too",
    ]);
  });

  it("the object gone meanwhile is done", async () => {
    const w = world();
    const outcome = await settleObject(
      () => Promise.reject(new KubeError("notFound", "404")),
      (o) => o,
      { object: "Export app/b", log: w.log },
    );
    expect(outcome).toEqual(done("gone"));
  });
});
