// Rules remembered as deferred per CNF (deferred-rules.ts) and read-backs shared in a burst
// (read-back-batches.ts): who is redelivered first, and which reads answer whom (ADR 0021).
import { DeferredRules } from "../../../shared/sync/deferred-rules.js";
import { SharedReadBacks } from "../../../shared/sync/read-back-batches.js";

const rule = (name: string) => ({ kind: "Mwan3Rule", name });

describe("rules whose restart was deferred", () => {
  it("names the first of a CNF since its last paid restart, the one redelivered first", () => {
    const deferred = new DeferredRules();
    expect(deferred.defer("ns/cnf#u", rule("a"))).toBe(true);
    expect(deferred.defer("ns/cnf#u", rule("a"))).toBe(true);
    expect(deferred.defer("ns/cnf#u", rule("b"))).toBe(false);
    expect(deferred.defer("ns/other#v", rule("c"))).toBe(true);
    expect(deferred.take("ns/cnf#u")).toEqual([rule("a"), rule("b")]);
    expect(deferred.take("ns/cnf#u")).toEqual([]);
    expect(deferred.defer("ns/cnf#u", rule("b"))).toBe(true);
  });

  it("lets a redelivery wait for the batch syncing its rule, however the batch ends", async () => {
    const deferred = new DeferredRules();
    let fail: (error: Error) => void = () => undefined;
    const batch = new Promise<void>((_, reject) => (fail = reject));
    const tracked = deferred.track("ns", [rule("a")], batch).catch(() => "failed");
    let waited = false;
    const redelivery = deferred.settled("ns", rule("a")).then(() => (waited = true));
    await deferred.settled("ns", rule("other"));
    expect(waited).toBe(false);
    fail(new Error("API server unavailable"));
    await redelivery;
    expect(await tracked).toBe("failed");
    expect(waited).toBe(true);
  });
});

describe("read-backs shared in a burst", () => {
  it("answers every rule that asked before the read began with one read, later ones with the next", async () => {
    const reads = new SharedReadBacks<string>();
    const runs: string[][] = [];
    const run = (names: readonly string[]) => {
      runs.push([...names]);
      const found = names
        .filter((n) => n !== "gone")
        .map((n) => [n, `${n}@${runs.length}`] as const);
      return Promise.resolve(new Map(found));
    };
    const first = await Promise.all([
      reads.read("Mwan3Rule/ns", "a", 5, run),
      reads.read("Mwan3Rule/ns", "b", 5, run),
      reads.read("Mwan3Rule/ns", "gone", 5, run),
      reads.read("Mwan3Policy/ns", "p", 5, run),
    ]);
    expect(first).toEqual(["a@1", "b@1", undefined, "p@2"]);
    expect(await reads.read("Mwan3Rule/ns", "c", 5, run)).toBe("c@3");
    expect(runs).toEqual([["a", "b", "gone"], ["p"], ["c"]]);
  });
});
