// Writes racing a rule's deletion. The finalizer is claimed before anything is written for a
// rule (ADR 0003), and an event that wrote for a rule which was deleted meanwhile removes what
// it wrote: however the two interleave, a deleted rule leaves nothing on any pod, and nothing
// left behind blocks the policy or zone it used.
import { jest } from "@jest/globals";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import { requireKind } from "../../shared/kinds/index.js";
import type { Cnf, CnfPod } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";
import { actingBefore } from "./support/acting-before.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const FINALIZER = "rule.finalizers.sdewan.akraino.org";
const RULES = requireKind("Mwan3Rule").cnf;
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };
const RULE = {
  policy: "policy1",
  src_ip: "10.0.1.0/24",
  dest_ip: "0.0.0.0/0",
  dest_port: "80",
  proto: "tcp",
};

describe("writes racing a rule's deletion", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let pod2: CnfPod;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    pod2 = cnf.pods[1] as CnfPod;
  });
  afterEach(() => world.close());

  it("first apply fails on one pod, then the rule is deleted: both pods end up empty", async () => {
    pod2.sim.failNext({
      kind: "status",
      status: 503,
      method: "PUT",
      collection: "mwan3/policies",
      count: 1000,
    });
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);

    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "retry" });
    expect(world.held(cnf, "mwan3/policies")).toEqual([["policy1"], []]);
    // The object reached pod1: the rule is already guarded by its finalizer.
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      finalizers: [FINALIZER],
      inSync: false,
    });

    await world.deleteRule("Mwan3Policy", "policy1");
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    expect(world.holdings(cnf)).toEqual([{}, {}]);
    expect(await world.readRule("Mwan3Policy", "policy1")).toBeUndefined();
  });

  it("a rule deleted before its claim: nothing is written, and its policy can still go", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    await world.createRule("Mwan3Rule", "rule1", PURPOSE, RULE);
    world.resetObservations();

    // The rule is observed live, then deleted by an operator before the function claims it.
    const racing = createReconcileRule({
      kube: () =>
        actingBefore(world.kube, "addFinalizer", () => world.deleteRule("Mwan3Rule", "rule1")),
      env: world.env,
    });
    const outcome = await racing.handle(world.ruleEvent("Mwan3Rule", "rule1"), world.context());

    expect(outcome).toMatchObject({ kind: "done" });
    expect(await world.readRule("Mwan3Rule", "rule1")).toBeUndefined();
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
    // Nothing left behind holds the policy: deleting it finishes on the first delivery.
    await world.deleteRule("Mwan3Policy", "policy1");
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    expect(world.holdings(cnf)).toEqual([{}, {}]);
    expect(await world.readRule("Mwan3Policy", "policy1")).toBeUndefined();
  });

  it("a rule that can never be written (unknown network) gets no finalizer and deletes at once", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, {
      members: [{ network: "no-such-net", metric: 1, weight: 2 }],
    });
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "permanent" });
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({ finalizers: [] });
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);

    await world.deleteRule("Mwan3Policy", "policy1");
    expect(await world.readRule("Mwan3Policy", "policy1")).toBeUndefined();
  });

  it("a rule deleted and released while its update was written: the update is removed again", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    await world.patchRuleSpec("Mwan3Policy", "policy1", {
      members: [{ network: "ovn-net2", metric: 1, weight: 3 }],
    });
    world.resetObservations();

    // The update is observed and written. Before its status is written, the rule is deleted and
    // a concurrent delivery of the deletion, having read the pods before the update landed,
    // releases it (played here by stripping the finalizer by hand).
    const racing = createReconcileRule({
      kube: () =>
        actingBefore(world.kube, "patchStatus", async () => {
          await world.deleteRule("Mwan3Policy", "policy1");
          await world.forceDeleteRule("Mwan3Policy", "policy1");
        }),
      env: world.env,
    });
    const outcome = await racing.handle(world.ruleEvent("Mwan3Policy", "policy1"), world.context());

    expect(outcome).toEqual({ kind: "done", result: "deleted while applied; removed again" });
    expect(world.holdings(cnf)).toEqual([{}, {}]);
    expect(world.serviceRestarts(cnf)).toEqual([
      ["mwan3", "mwan3"],
      ["mwan3", "mwan3"],
    ]);
  });

  it("a rule replaced by a new one of the same name while written: retried, then the new spec holds", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    const replacement = { members: [{ network: "ovn-net2", metric: 2, weight: 5 }] };

    const racing = createReconcileRule({
      kube: () =>
        actingBefore(world.kube, "patchStatus", async () => {
          await world.forceDeleteRule("Mwan3Policy", "policy1");
          await world.createRule("Mwan3Policy", "policy1", PURPOSE, replacement);
        }),
      env: world.env,
    });
    const outcome = await racing.handle(world.ruleEvent("Mwan3Policy", "policy1"), world.context());
    expect(outcome).toMatchObject({ kind: "retry" });

    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    const replaced = { members: [expect.objectContaining({ interface: "net2", weight: "5" })] };
    expect(world.heldObjects(cnf, "mwan3/policies", "policy1")).toEqual([
      expect.objectContaining(replaced),
      expect.objectContaining(replaced),
    ]);
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      inSync: true,
      finalizers: [FINALIZER],
    });
  });

  it("the rule's deletion finishes between the policy's refusal and the lookup of its users: the policy goes too", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    await world.createRule("Mwan3Rule", "rule1", PURPOSE, RULE);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    expect(await world.reconcile("Mwan3Rule", "rule1")).toMatchObject({ kind: "done" });
    await world.deleteRule("Mwan3Rule", "rule1");
    await world.deleteRule("Mwan3Policy", "policy1");

    // The policy's delete is refused on the pods (rule1 still uses it there); just before the
    // function looks up which rules use it, rule1's own deletion event completes.
    const isRuleList = (type: unknown): boolean =>
      (type as { kind?: string } | undefined)?.kind === "Mwan3Rule";
    const racing = createReconcileRule({
      kube: () =>
        actingBefore(
          world.kube,
          "list",
          async () => {
            expect(await world.reconcile("Mwan3Rule", "rule1")).toMatchObject({ kind: "done" });
          },
          isRuleList,
        ),
      env: world.env,
    });
    const outcome = await racing.handle(world.ruleEvent("Mwan3Policy", "policy1"), world.context());

    // Not a permanent InUseByUndeclaredObject: nothing undeclared ever used the policy.
    expect(outcome).toEqual({ kind: "done", result: "deleted" });
    expect(world.holdings(cnf)).toEqual([{}, {}]);
    expect(await world.readRule("Mwan3Policy", "policy1")).toBeUndefined();
    expect(await world.readRule("Mwan3Rule", "rule1")).toBeUndefined();
  });
});

describe("a deletion blocked by an object no rule declares", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
  });
  afterEach(() => world.close());

  it("a policy still used by an orphaned mwan3 rule is Stalled, then deleted once the orphan goes", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    await world.createRule("Mwan3Rule", "rule1", PURPOSE, RULE);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    expect(await world.reconcile("Mwan3Rule", "rule1")).toMatchObject({ kind: "done" });
    // rule1's CR vanishes without its cleanup: its object stays on both pods, declared by nobody.
    await world.forceDeleteRule("Mwan3Rule", "rule1");

    await world.deleteRule("Mwan3Policy", "policy1");
    const stalled = await world.reconcile("Mwan3Policy", "policy1");
    expect(stalled).toMatchObject({ kind: "permanent", code: "InUseByUndeclaredObject" });
    const view = await world.ruleView("Mwan3Policy", "policy1");
    expect(view).toMatchObject({
      deleting: true,
      finalizers: [FINALIZER],
      condition: { type: "Stalled", reason: "InUseByUndeclaredObject" },
    });
    expect(view?.message).toMatch(/^an object on the CNF that no rule declares still uses it/);

    for (const pod of cnf.pods) await world.cnfClient(pod).delete(RULES, "rule1");
    expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
      kind: "done",
      result: "deleted",
    });
    expect(world.holdings(cnf)).toEqual([{}, {}]);
    expect(await world.readRule("Mwan3Policy", "policy1")).toBeUndefined();
  });
});
