// 300 rules over every kind on a CNF whose two pods restarted while no event was delivered:
// one on-deployment-ready call converges it. Per pod the CNF is read once per collection and
// each touched service restarts once. Prints the time and request counts of that call.
import { jest } from "@jest/globals";
import pLimit from "p-limit";
import { ALL_RULE_KINDS, exampleRules } from "../../shared/kinds/index.js";
import type { Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(180_000);

const PURPOSE = "big";

/** 300 rules: every kind, with references between them (the registry's examples). */
const RULES = exampleRules(300);

/** Every CNF collection rules live in (e.g. "mwan3/rules"), and the services they restart. */
const COLLECTIONS = [...new Set(ALL_RULE_KINDS.map((e) => `${e.cnf.module}/${e.cnf.collection}`))];
const RESTARTED = [
  ...new Set(ALL_RULE_KINDS.flatMap((e) => (e.cnf.restartService ? [e.cnf.restartService] : []))),
].sort();

describe("300 rules over all kinds on a restarted CNF", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  const rules = RULES;

  beforeAll(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    const limit = pLimit(8);
    await Promise.all(
      rules.map((r) => limit(() => world.createRule(r.kind, r.name, PURPOSE, r.spec))),
    );
  });
  afterAll(() => world.close());

  it("one call applies them all, then both pods restart unseen and one call converges the CNF again", async () => {
    expect(rules).toHaveLength(300);
    expect(new Set(rules.map((r) => r.kind)).size).toBe(ALL_RULE_KINDS.length);
    world.resetObservations();
    const first = performance.now();
    expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: "300 created" });
    console.log(
      `300-rule first apply (finalizers + statuses): ${Math.round(performance.now() - first)} ms; API requests ${world.calls.api}, CNF requests ${world.calls.cnf}`,
    );

    // Both CNF pods restart (state dropped, readiness flips) while no event is delivered.
    for (const pod of cnf.pods) await world.restartPod(pod);
    world.resetObservations();
    const started = performance.now();
    const outcome = await world.syncCnf(cnf);
    const ms = Math.round(performance.now() - started);

    // Pods that turned Ready after the rules were applied are re-seeded: no status write (ADR 0016).
    expect(outcome).toEqual({ kind: "done", result: "300 re-applied" });
    // The 14 reads, a list per rule kind (no rule was deleted while written: nothing wrote a
    // status whose answer says so) and the CNF's sync Lease, taken and released (ADR 0008).
    expect(world.calls.api).toBe(14 + ALL_RULE_KINDS.length + 2);
    const total = (collections: Record<string, string[]>) =>
      Object.values(collections).reduce((n, names) => n + names.length, 0);
    expect(world.holdings(cnf).map(total)).toEqual([300, 300]);
    const perPod = cnf.pods.map((pod) => {
      const counters = pod.sim.counters();
      const reads = Object.values(counters.collections).reduce((n, c) => n + c.reads, 0);
      return { reads, writes: world.cnfWrites(cnf)[cnf.pods.indexOf(pod)], counters };
    });
    for (const { reads, writes, counters } of perPod) {
      expect(reads).toBeLessThanOrEqual(COLLECTIONS.length);
      for (const collection of COLLECTIONS) {
        expect(counters.collections[collection]?.reads).toBe(1);
      }
      expect(writes).toBe(300);
    }
    expect(world.serviceRestarts(cnf).map((services) => services.sort())).toEqual([
      RESTARTED,
      RESTARTED,
    ]);
    for (const rule of [rules[0], rules[150], rules[299]]) {
      expect(await world.ruleView(rule?.kind ?? "", rule?.name ?? "")).toMatchObject({
        inSync: true,
        appliedCurrent: true,
        condition: { type: "Ready", reason: "Applied" },
      });
    }

    const line =
      `300-rule convergence of a restarted 2-pod CNF: ${ms} ms in one call; ` +
      `API requests ${world.calls.api}, CNF requests ${world.calls.cnf} ` +
      `(per pod: ${perPod.map((p) => `${p.reads} reads + ${p.writes} writes + ${p.counters.logins} login + ${RESTARTED.length} restarts`).join("; ")})`;
    console.log(line);

    // The CNFs lose everything again while their pods stay Ready, soon after they came back
    // (RESEED_WINDOW_MS): put down to the restart too, written back with no status write; drift
    // on a pod this fresh is not counted (ADR 0016).
    for (const pod of cnf.pods) pod.sim.restartCnf();
    world.resetObservations();
    const cnfOnly = performance.now();
    expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: "300 re-applied" });
    console.log(
      `300-rule re-apply on both restarted pods: ${Math.round(performance.now() - cnfOnly)} ms; API requests ${world.calls.api}, CNF requests ${world.calls.cnf}`,
    );
    expect(world.calls.api).toBe(14 + ALL_RULE_KINDS.length + 2);
    expect(world.cnfWrites(cnf)).toEqual([300, 300]);
    expect(await world.ruleView(rules[0]?.kind ?? "", rules[0]?.name ?? "")).toMatchObject({
      condition: { reason: "Applied" },
    });

    // Nothing changed since: a repeat call only reads each collection once per pod.
    world.resetObservations();
    const again = performance.now();
    expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: "300 unchanged" });
    console.log(
      `300-rule no-op sync: ${Math.round(performance.now() - again)} ms; API requests ${world.calls.api}, CNF requests ${world.calls.cnf}`,
    );
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
    expect(world.calls.cnf).toBeLessThanOrEqual(2 * (COLLECTIONS.length + 1));
  });
});
