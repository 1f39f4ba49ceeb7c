// The restart pacer: a burst of writes to one service on one pod restarts it a few times, every
// write is loaded by a restart begun after it, and a lone change is never deferred.
import { CnfRestartPacer, type RestartOptions } from "../../../shared/cnf/index.js";

const POD = "http://127.0.0.1:1/";

function world() {
  let now = 0;
  const pacer = new CnfRestartPacer(() => now);
  const restarts: number[] = [];
  const restart = () => {
    restarts.push(now);
    return Promise.resolve();
  };
  const options = (mode: RestartOptions["mode"] = "coalesce"): RestartOptions => ({
    mode,
    minIntervalMs: 5000,
    quietMs: 1000,
  });
  return {
    pacer,
    restarts,
    advance: (ms: number) => (now += ms),
    /** One sync: writes `keys`, then settles their restart. */
    sync: async (keys: string[], mode: RestartOptions["mode"] = "coalesce") => {
      for (const key of keys) pacer.wrote(POD, "firewall", key);
      return pacer.settle(POD, "firewall", keys, options(mode), restart);
    },
    /** A redelivery that finds the objects held: no write, only the owed restart. */
    redeliver: (keys: string[]) => pacer.settle(POD, "firewall", keys, options(), restart),
  };
}

describe("a lone change restarts at once", () => {
  it("restarts for each of two edits further apart than minIntervalMs", async () => {
    const w = world();
    expect(await w.sync(["zone/a"])).toEqual({ kind: "paid", restarted: true });
    w.advance(6000);
    expect(await w.sync(["zone/b"])).toEqual({ kind: "paid", restarted: true });
    expect(w.restarts).toEqual([0, 6000]);
  });

  it("a second rule changed 2 s after another waits until minIntervalMs after its restart", async () => {
    const w = world();
    await w.sync(["zone/a"]);
    w.advance(2000);
    expect(await w.sync(["zone/b"])).toEqual({ kind: "deferred", dueInMs: 3000 });
    w.advance(3000);
    expect(await w.redeliver(["zone/b"])).toEqual({ kind: "paid", restarted: true });
  });

  it("quick edits of one rule are not a burst: each restarts", async () => {
    const w = world();
    for (let i = 0; i < 5; i++) {
      expect(await w.sync(["zone/a"])).toEqual({ kind: "paid", restarted: true });
      w.advance(20);
    }
    expect(w.restarts).toHaveLength(5);
  });
});

describe("a burst defers, and its redeliveries restart once for all", () => {
  it("100 writes 10 ms apart: the first restarts, the rest defer, one redelivery pays them all", async () => {
    const w = world();
    const keys = Array.from({ length: 100 }, (_, i) => `zone/z${i}`);
    const verdicts = [];
    for (const key of keys) {
      verdicts.push(await w.sync([key]));
      w.advance(10);
    }
    expect(verdicts[0]).toEqual({ kind: "paid", restarted: true });
    expect(verdicts.slice(1).every((v) => v.kind === "deferred")).toBe(true);
    // Redelivered when due: minIntervalMs after the first restart, the first of them restarts.
    w.advance(4000);
    const redelivered = [];
    for (const key of keys.slice(1)) redelivered.push(await w.redeliver([key]));
    expect(redelivered[0]).toEqual({ kind: "paid", restarted: true });
    expect(redelivered.slice(1)).toEqual(
      Array.from({ length: 98 }, () => ({ kind: "paid", restarted: false })),
    );
    expect(w.restarts).toHaveLength(2);
  });

  it("a long burst still restarts every minIntervalMs, so nothing waits for its end", async () => {
    const w = world();
    for (let i = 0; i < 1200; i++) {
      await w.sync([`zone/z${i}`]);
      w.advance(10);
    }
    // 12 s of writes: at 0, then each time 5 s have passed.
    expect(w.restarts).toEqual([0, 5000, 10000]);
  });

  it("a slow burst (writes 1.5 s apart, gaps longer than quietMs) restarts every minIntervalMs, not at each gap", async () => {
    const w = world();
    const verdicts = [];
    for (let i = 0; i < 8; i++) {
      verdicts.push(await w.sync([`zone/z${i}`]));
      w.advance(1500);
    }
    // Writes at 0 .. 10.5 s: at 0, then at the first write 5 s or more after the last restart.
    expect(w.restarts).toEqual([0, 6000]);
    // A deferral says when the restart is due, so its redelivery comes once.
    expect(verdicts[1]).toEqual({ kind: "deferred", dueInMs: 3500 });
  });

  it("a write after a restart began is not paid by it", async () => {
    const w = world();
    await w.sync(["zone/a"]);
    w.advance(10);
    expect((await w.sync(["zone/b"])).kind).toBe("deferred");
    // zone/a's ticket is paid; zone/b's is not, and a redelivery in the burst defers again.
    expect(await w.redeliver(["zone/a"])).toEqual({ kind: "paid", restarted: false });
    w.advance(10);
    await w.sync(["zone/c"]);
    expect((await w.redeliver(["zone/b"])).kind).toBe("deferred");
  });

  it("mode now never defers", async () => {
    const w = world();
    await w.sync(["zone/a"]);
    w.advance(10);
    await w.sync(["zone/b"]);
    expect(await w.sync(["zone/c"], "now")).toEqual({ kind: "paid", restarted: true });
  });

  it("a rule this process has no ticket for is restarted (another process wrote it)", async () => {
    const w = world();
    await w.sync(["zone/a"]);
    w.advance(6000);
    expect(await w.redeliver(["zone/unknown"])).toEqual({ kind: "paid", restarted: true });
  });
});

describe("a failed restart pays nothing", () => {
  it("reports the failure, and the next settle restarts again", async () => {
    let now = 0;
    const pacer = new CnfRestartPacer(() => now);
    pacer.wrote(POD, "mwan3", "rule/a");
    const options = { mode: "coalesce", minIntervalMs: 5000, quietMs: 1000 } as const;
    const failed = await pacer.settle(POD, "mwan3", ["rule/a"], options, () =>
      Promise.reject(new Error("boom")),
    );
    expect(failed).toMatchObject({ kind: "failed" });
    now += 10;
    const again = await pacer.settle(POD, "mwan3", ["rule/a"], options, () => Promise.resolve());
    expect(again).toEqual({ kind: "paid", restarted: true });
  });

  it("concurrent settles share one restart begun after their writes", async () => {
    const pacer = new CnfRestartPacer(() => 0);
    let calls = 0;
    let release: () => void = () => undefined;
    const slow = () => {
      calls += 1;
      return new Promise<void>((resolve) => (release = resolve));
    };
    pacer.wrote(POD, "mwan3", "rule/a");
    pacer.wrote(POD, "mwan3", "rule/b");
    const now = { mode: "now", minIntervalMs: 0, quietMs: 0 } as const;
    const first = pacer.settle(POD, "mwan3", ["rule/a"], now, slow);
    const second = pacer.settle(POD, "mwan3", ["rule/b"], now, slow);
    release();
    expect(await first).toEqual({ kind: "paid", restarted: true });
    expect(await second).toEqual({ kind: "paid", restarted: false });
    expect(calls).toBe(1);
  });
});
