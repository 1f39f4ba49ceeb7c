// Which CNF a rule belongs to and which of its pods count: a Deployment rollout (two
// ReplicaSets), two Deployments claiming one purpose, no Deployment at all, and a CNF of the
// same purpose in another namespace.
import { jest } from "@jest/globals";
import type { Cnf, CnfPod } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const FINALIZER = "rule.finalizers.sdewan.akraino.org";
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };
const HELD = { "mwan3/policies": ["policy1"] };

describe("which CNF and which pods a rule is applied to", () => {
  let world: SyncWorld;

  beforeEach(async () => {
    world = await SyncWorld.create();
  });
  afterEach(() => world.close());

  it("a rollout: the old ReplicaSet at 0 with a pod still Ready and the new one's pod both get the rule", async () => {
    const cnf = await world.createCnf(PURPOSE, { pods: 1 });
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    const oldPod = cnf.pods[0] as CnfPod;

    await world.startRollout(cnf);
    expect(cnf.pods).toHaveLength(2);
    // The new pod's event (on-deployment-ready) brings it in; the old one stays untouched.
    world.resetObservations();
    expect(await world.syncCnf(cnf)).toMatchObject({ kind: "done" });
    expect(world.holdings(cnf)).toEqual([HELD, HELD]);
    expect(world.cnfWrites(cnf)).toEqual([0, 1]);
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      inSync: true,
      condition: { type: "Ready", message: `applied on every ready pod of CNF ${cnf.name}` },
    });

    // A rule created mid-rollout lands on both.
    await world.createRule("Mwan3Policy", "policy2", PURPOSE, POLICY);
    expect(await world.reconcile("Mwan3Policy", "policy2")).toEqual({
      kind: "done",
      result: "created",
    });
    expect(world.held(cnf, "mwan3/policies")).toEqual([
      ["policy1", "policy2"],
      ["policy1", "policy2"],
    ]);

    // The rollout finishes: the old pod goes (its event reaches on-deployment-ready), the rule
    // stays in sync on the new one.
    await world.deletePod(cnf, oldPod);
    expect(await world.syncCnf(cnf)).toMatchObject({ kind: "done" });
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      inSync: true,
      condition: { type: "Ready", message: `applied on every ready pod of CNF ${cnf.name}` },
    });
  });

  it("two CNF Deployments for one purpose in a namespace: 422 Stalled MultipleCNFs, nothing written", async () => {
    const a = await world.createCnf(PURPOSE, { name: "cnf-a", pods: 1 });
    const b = await world.createCnf(PURPOSE, { name: "cnf-b", pods: 1 });
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);

    const outcome = await world.reconcile("Mwan3Policy", "policy1");
    expect(outcome).toMatchObject({ kind: "permanent", code: "MultipleCNFs" });
    const view = await world.ruleView("Mwan3Policy", "policy1");
    expect(view).toMatchObject({
      inSync: false,
      finalizers: [],
      condition: { type: "Stalled", reason: "MultipleCNFs" },
    });
    expect(view?.message).toContain("cnf-a, cnf-b");
    expect([...world.cnfWrites(a), ...world.cnfWrites(b)]).toEqual([0, 0]);

    // An operator removes one; the Deployment event (or a resync) redelivers the rule.
    await world.deleteDeployment(b);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
      kind: "done",
      result: "created",
    });
    expect(world.holdings(a)).toEqual([HELD]);
    expect(world.holdings(b)).toEqual([{}]);
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      inSync: true,
      condition: { type: "Ready" },
    });
  });

  it("no CNF Deployment yet: 202 and a status that says so; applied once the CNF exists", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
      kind: "done",
      result: "no CNF",
    });
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      inSync: false,
      finalizers: [],
      condition: { type: "Reconciling", reason: "NoCNF" },
      message: `no CNF Deployment with sdewanPurpose=${PURPOSE} in namespace ${world.namespace}`,
    });

    const cnf: Cnf = await world.createCnf(PURPOSE, { pods: 2 });
    expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
      kind: "done",
      result: "created",
    });
    expect(world.holdings(cnf)).toEqual([HELD, HELD]);
  });

  it("the CNF Deployment is gone: deleting the rule releases its finalizer", async () => {
    const cnf = await world.createCnf(PURPOSE, { pods: 1 });
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    await world.reconcile("Mwan3Policy", "policy1");
    expect((await world.ruleView("Mwan3Policy", "policy1"))?.finalizers).toEqual([FINALIZER]);
    await world.deleteDeployment(cnf);
    await world.deleteRule("Mwan3Policy", "policy1");

    expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
      kind: "done",
      result: "released (no CNF)",
    });
    expect(await world.readRule("Mwan3Policy", "policy1")).toBeUndefined();
  });

  it("a CNF with the same purpose in another namespace is not this rule's CNF", async () => {
    const elsewhere = await SyncWorld.create();
    try {
      const foreign = await elsewhere.createCnf(PURPOSE, { pods: 1 });
      await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
      expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
        kind: "done",
        result: "no CNF",
      });
      expect(elsewhere.holdings(foreign)).toEqual([{}]);
      expect(foreign.pods[0]?.sim.requests()).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });
});
