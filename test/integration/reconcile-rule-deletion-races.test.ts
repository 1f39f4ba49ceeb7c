// A rule's first apply racing its deletion (ADR 0003). The finalizer is claimed before anything
// is written for a rule, so however the first apply ends, a deleted rule's objects are removed
// from every pod before the rule disappears, and never block the policy or zone they use.
import { jest } from "@jest/globals";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import type { KubeClient } from "../../shared/kube/index.js";
import { CnfWorld, type Cnf, type CnfPod } from "./cnf-world.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const FINALIZER = "rule.finalizers.sdewan.akraino.org";
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };
const RULE = {
  policy: "policy1",
  src_ip: "10.0.1.0/24",
  dest_ip: "0.0.0.0/0",
  dest_port: "80",
  proto: "tcp",
};

/** The real client, except that `beforeClaim` runs (on the real API server) before each claim. */
function claimingAfter(real: KubeClient, beforeClaim: () => Promise<void>): KubeClient {
  return new Proxy(real, {
    get(target, property) {
      if (property === "addFinalizer") {
        return async (...args: Parameters<KubeClient["addFinalizer"]>) => {
          await beforeClaim();
          return target.addFinalizer(...args);
        };
      }
      if (property === "withCalls") {
        return (calls: Parameters<KubeClient["withCalls"]>[0]) =>
          claimingAfter(target.withCalls(calls), beforeClaim);
      }
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === "function" ? (value as () => unknown).bind(target) : value;
    },
  });
}

describe("a rule's first apply racing its deletion", () => {
  let world: CnfWorld;
  let cnf: Cnf;
  let pod2: CnfPod;

  beforeEach(async () => {
    world = await CnfWorld.create();
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
      kube: () => claimingAfter(world.kube, () => world.deleteRule("Mwan3Rule", "rule1")),
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
});
