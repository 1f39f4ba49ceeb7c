/**
 * The function-memory row (bench/rows/memory.ts): every function of the catalog, each with the CPU
 * its work used, and an error rather than a number when a function did no work. The last quiet
 * table measured 4 of the 9 and printed egress-group-sync's "after" (a resync of a cluster with
 * no Egress, 0 ms of CPU) as if it had worked.
 */
import { memoryRow, type Measured } from "../../../bench/rows/memory.js";
import { verdict } from "../../../bench/lib/report.js";
import { FUNCTION_CATALOG } from "../../../functions/catalog.js";

const worked = (fn: string, cpuMs = 120): Measured => ({
  fn,
  idleMb: 58,
  afterMb: 70,
  peakMb: 72,
  cpuMs,
  work: { did: `${fn}'s work`, failures: 0 },
});

const everyFunction = (): Measured[] => FUNCTION_CATALOG.map((f) => worked(f.name));

describe("the function-memory row", () => {
  it("measures every function of the catalog and prints the CPU each used", () => {
    const row = memoryRow(everyFunction(), "node server.js", 54);
    expect(row.error).toBeUndefined();
    expect(verdict(row)).toBe("pass");
    for (const f of FUNCTION_CATALOG) {
      expect(row.counts).toContain(`${f.name}: ${f.name}'s work, 120 ms of CPU`);
      expect(row.values[`${f.name}.cpuMs`]).toBe(120);
    }
  });

  it("holds every idle RSS to 1.15x the floor measured in the same run", () => {
    const results = everyFunction().map((r) =>
      r.fn === "clusterlink-authz" ? { ...r, idleMb: 63 } : r,
    );
    const row = memoryRow(results, "node server.js", 54);
    expect(row.measured).toContain("floor 54 MiB, so idle <= 62.1 MiB");
    expect(row.measured).toContain("clusterlink-authz 63 (1.17x)");
    expect(verdict(row)).toBe("MISS (idle RSS vs floor)");
    expect(verdict(memoryRow(results, "node server.js", 56))).toBe("pass");
    expect(row.values["floorMb"]).toBe(54);
  });

  it("is an error naming the function that used no CPU for its work", () => {
    const results = everyFunction().map((r) =>
      r.fn === "egress-group-sync" ? worked(r.fn, 0) : r,
    );
    const row = memoryRow(results, "node server.js", 54);
    expect(verdict(row)).toBe("ERROR");
    expect(row.error).toBe("egress-group-sync did no work (0 ms of CPU)");
  });

  it("is an error when a function's work did not leave its end state", () => {
    const results = everyFunction().map((r) =>
      r.fn === "clusterlink-import"
        ? { ...r, work: { did: "imports", failures: 2, example: "1 distinct leased ports for 3" } }
        : r,
    );
    expect(memoryRow(results, "node server.js", 54).error).toBe(
      "clusterlink-import: 2 checks of its work failed (e.g. 1 distinct leased ports for 3)",
    );
  });

  it("is an error naming the functions it did not measure", () => {
    const four = [
      "reconcile-rule",
      "on-deployment-ready",
      "validate-admission",
      "egress-group-sync",
    ];
    const row = memoryRow(
      four.map((fn) => worked(fn)),
      "node server.js",
      54,
    );
    expect(row.metric).toContain("4 of 9");
    expect(row.error).toBe(
      FUNCTION_CATALOG.map((f) => f.name)
        .filter((name) => !four.includes(name))
        .map((name) => `${name} not measured`)
        .join("; "),
    );
  });
});
