import type { Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

describe("reconcile-rule applies a rule to every pod of its CNF", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf("cnf1");
  });
  afterEach(() => world.close());

  it("creates a policy and a rule on both pods, then an unchanged re-delivery writes nothing", async () => {
    await world.createRule("Mwan3Policy", "balance1", "cnf1", {
      members: [{ network: "ovn-net1", metric: 1, weight: 2 }],
    });
    await world.createRule("Mwan3Rule", "rule1", "cnf1", {
      policy: "balance1",
      src_ip: "10.10.1.0/24",
    });

    expect(await world.reconcile("Mwan3Policy", "balance1")).toEqual({
      kind: "done",
      result: "created",
    });
    expect(await world.reconcile("Mwan3Rule", "rule1")).toEqual({
      kind: "done",
      result: "created",
    });
    expect(world.held(cnf, "mwan3/policies")).toEqual([["balance1"], ["balance1"]]);
    expect(world.held(cnf, "mwan3/rules")).toEqual([["rule1"], ["rule1"]]);

    const rule = await world.readRule("Mwan3Rule", "rule1");
    expect(rule?.metadata.finalizers).toEqual(["rule.finalizers.sdewan.akraino.org"]);
    expect(rule?.status).toMatchObject({ inSync: true, appliedGeneration: 1 });
    expect(rule?.status?.conditions?.[0]).toMatchObject({ type: "Ready", status: "True" });

    for (const pod of cnf.pods) pod.sim.resetCounters();
    world.calls.api = 0;
    world.calls.cnf = 0;
    expect(await world.reconcile("Mwan3Rule", "rule1")).toEqual({
      kind: "done",
      result: "unchanged",
    });
    const writes = cnf.pods.map((p) =>
      Object.values(p.sim.counters().collections).reduce((n, c) => n + c.writes, 0),
    );
    expect(writes).toEqual([0, 0]);
    expect(world.calls.api).toBeLessThanOrEqual(3);
    const again = await world.readRule("Mwan3Rule", "rule1");
    expect(again?.metadata.resourceVersion).toBe(rule?.metadata.resourceVersion);
  });

  it("deletes the rule from both pods and then releases the finalizer", async () => {
    await world.createRule("Mwan3Policy", "balance1", "cnf1", {
      members: [{ network: "ovn-net1", metric: 1, weight: 2 }],
    });
    await world.reconcile("Mwan3Policy", "balance1");
    await world.deleteRule("Mwan3Policy", "balance1");
    const deleting = await world.readRule("Mwan3Policy", "balance1");
    expect(deleting?.metadata.deletionTimestamp).toBeDefined();

    expect(await world.reconcile("Mwan3Policy", "balance1")).toEqual({
      kind: "done",
      result: "deleted",
    });
    expect(world.held(cnf, "mwan3/policies")).toEqual([[], []]);
    expect(await world.readRule("Mwan3Policy", "balance1")).toBeUndefined();
  });
});
