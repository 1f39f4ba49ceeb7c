// The seed's "Unusual Cases" 1-4 (sdewan-crd-controller-design): a CNF with two pods, one
// Mwan3Policy and two Mwan3Rules applied; then an outage of a pod or of the controller while
// rule1 is deleted, rule3 added and rule2 updated (Case 4: left alone). "Controller down" means
// no event is delivered; "controller up" delivers what a resync sends: one event per rule.
// Every case ends with both pods holding exactly the desired objects and honest statuses.
import { jest } from "@jest/globals";
import type { Cnf, CnfPod } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

// Dozens of events against a real API server on a shared machine.
jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const FINALIZER = "rule.finalizers.sdewan.akraino.org";
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };
const ruleSpec = (subnet: string, port: string) => ({
  policy: "policy1",
  src_ip: subnet,
  dest_ip: "0.0.0.0/0",
  dest_port: port,
  proto: "tcp",
});

/** Policy1, rule1 and rule2 created and applied on both pods while everything runs. */
async function startWithPolicyAndTwoRules(world: SyncWorld): Promise<Cnf> {
  const cnf = await world.createCnf(PURPOSE, { pods: 2 });
  await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
  await world.createRule("Mwan3Rule", "rule1", PURPOSE, ruleSpec("10.0.1.0/24", "80"));
  await world.createRule("Mwan3Rule", "rule2", PURPOSE, ruleSpec("10.0.2.0/24", "443"));
  for (const outcome of (await world.resyncRules()).values()) {
    expect(outcome).toMatchObject({ kind: "done" });
  }
  expect(world.holdings(cnf)).toEqual([
    { "mwan3/policies": ["policy1"], "mwan3/rules": ["rule1", "rule2"] },
    { "mwan3/policies": ["policy1"], "mwan3/rules": ["rule1", "rule2"] },
  ]);
  return cnf;
}

/** The three changes every case makes while something is down. */
async function deleteRule1AddRule3UpdateRule2(world: SyncWorld): Promise<void> {
  await world.deleteRule("Mwan3Rule", "rule1");
  await world.createRule("Mwan3Rule", "rule3", PURPOSE, ruleSpec("10.0.3.0/24", "22"));
  await world.patchRuleSpec("Mwan3Rule", "rule2", ruleSpec("10.0.2.0/24", "8443"));
}

/** Both pods hold exactly policy1, rule2 (`rule2Port`) and rule3; rule1 is gone; all in sync. */
async function expectConverged(world: SyncWorld, cnf: Cnf, rule2Port: string): Promise<void> {
  const desired = { "mwan3/policies": ["policy1"], "mwan3/rules": ["rule2", "rule3"] };
  expect(world.holdings(cnf)).toEqual([desired, desired]);
  expect(world.heldObjects(cnf, "mwan3/rules", "rule2").map((o) => o?.["dest_port"])).toEqual([
    rule2Port,
    rule2Port,
  ]);
  expect(await world.readRule("Mwan3Rule", "rule1")).toBeUndefined();
  for (const [kind, name] of [
    ["Mwan3Policy", "policy1"],
    ["Mwan3Rule", "rule2"],
    ["Mwan3Rule", "rule3"],
  ] as const) {
    expect(await world.ruleView(kind, name)).toMatchObject({
      inSync: true,
      appliedCurrent: true,
      observedCurrent: true,
      finalizers: [FINALIZER],
      condition: { type: "Ready", message: `applied on every ready pod of CNF ${cnf.name}` },
    });
  }
}

/** Every live rule's status says it is on every ready pod while one pod is down (ADR 0016). */
async function expectWaitingForPods(world: SyncWorld, cnf: Cnf): Promise<void> {
  for (const rule of await world.listRules()) {
    const view = await world.ruleView(rule.kind, rule.name);
    // A rule being deleted waits until every pod is rid of it (PodsNotReady, finalizer kept).
    if (view?.deleting === true) continue;
    expect(view).toMatchObject({ inSync: true, condition: { type: "Ready" } });
    expect(view?.message).toBe(`applied on every ready pod of CNF ${cnf.name}`);
  }
}

describe("the seed's unusual cases: a two-pod CNF, policy1, rule1 and rule2", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let pod1: CnfPod;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await startWithPolicyAndTwoRules(world);
    pod1 = cnf.pods[0] as CnfPod;
  });
  afterEach(() => world.close());

  it("Case 1: CNF pod stopped while rules change, back after a long outage", async () => {
    await pod1.sim.refuseConnections();
    await world.setPodReady(pod1, false);
    // The CNF event: every rule of the CNF is reconciled; pod2, the only ready pod, holds them,
    // so they stay in sync (ADR 0016); pod1's readiness event brings them to pod1.
    for (const outcome of (await world.resyncRules({ rounds: 1 })).values()) {
      expect(outcome).toEqual({ kind: "done", result: "unchanged" });
    }
    await expectWaitingForPods(world, cnf);

    await deleteRule1AddRule3UpdateRule2(world);
    for (const name of ["rule1", "rule3", "rule2"]) {
      expect(await world.reconcile("Mwan3Rule", name)).toMatchObject({ kind: "done" });
    }
    // rule1 is kept by its finalizer until pod1 is cleaned too.
    expect(await world.ruleView("Mwan3Rule", "rule1")).toMatchObject({
      deleting: true,
      finalizers: [FINALIZER],
      inSync: false,
    });
    await expectWaitingForPods(world, cnf);

    // Ten minutes later the pod is back: a new container with no configuration.
    pod1.sim.restartCnf();
    await pod1.sim.acceptConnections();
    await world.setPodReady(pod1, true);
    world.resetObservations();
    for (const outcome of (await world.resyncRules()).values()) {
      expect(outcome).toMatchObject({ kind: "done" });
    }
    await expectConverged(world, cnf, "8443");
    // The re-created configuration is live: mwan3 was restarted on the returning pod.
    expect(world.serviceRestarts(cnf)[0]).toContain("mwan3");
  });

  it("Case 2: CNF pod disconnected but running, reconnected with its old configuration", async () => {
    await pod1.sim.refuseConnections();
    // Until its readiness probe fails, the pod still counts: the CNF error is on the status.
    for (const outcome of (await world.resyncRules({ rounds: 1 })).values()) {
      expect(outcome).toMatchObject({ kind: "retry" });
    }
    const unreachable = await world.ruleView("Mwan3Rule", "rule2");
    expect(unreachable).toMatchObject({
      inSync: false,
      appliedVersion: undefined,
      condition: { type: "Reconciling", reason: "CNFError" },
    });
    expect(unreachable?.message).toContain(`on pod ${pod1.name}`);
    expect(unreachable?.message).toContain("unreachable");

    await world.setPodReady(pod1, false);
    await world.resyncRules({ rounds: 1 });
    await expectWaitingForPods(world, cnf);
    await deleteRule1AddRule3UpdateRule2(world);
    for (const name of ["rule1", "rule3", "rule2"]) {
      expect(await world.reconcile("Mwan3Rule", name)).toMatchObject({ kind: "done" });
    }

    // Reconnected: pod1 still holds rule1 and the old rule2.
    await pod1.sim.acceptConnections();
    await world.setPodReady(pod1, true);
    expect(world.holdings(cnf)[0]).toEqual({
      "mwan3/policies": ["policy1"],
      "mwan3/rules": ["rule1", "rule2"],
    });
    for (const outcome of (await world.resyncRules()).values()) {
      expect(outcome).toMatchObject({ kind: "done" });
    }
    await expectConverged(world, cnf, "8443");
  });

  it("Case 3: controller down while rules change, then up", async () => {
    await deleteRule1AddRule3UpdateRule2(world);
    // No events: the API server records the changes, the CNF and the statuses do not move.
    expect(await world.ruleView("Mwan3Rule", "rule1")).toMatchObject({ deleting: true });
    expect((await world.ruleView("Mwan3Rule", "rule3"))?.status).toBeUndefined();
    expect(await world.ruleView("Mwan3Rule", "rule2")).toMatchObject({
      generation: 2,
      observedCurrent: false,
      appliedCurrent: false,
    });
    expect(world.heldObjects(cnf, "mwan3/rules", "rule2").map((o) => o?.["dest_port"])).toEqual([
      "443",
      "443",
    ]);

    for (const outcome of (await world.resyncRules()).values()) {
      expect(outcome).toMatchObject({ kind: "done" });
    }
    await expectConverged(world, cnf, "8443");
  });

  it("Case 4: controller down and CNF pod restarted meanwhile, then up", async () => {
    // The pod restarts with no configuration; its readiness flips, but nobody is listening.
    await world.restartPod(pod1);
    await world.deleteRule("Mwan3Rule", "rule1");
    await world.createRule("Mwan3Rule", "rule3", PURPOSE, ruleSpec("10.0.3.0/24", "22"));
    // rule2 is unchanged, and its status still claims it is applied: only the CNF knows better.
    expect(await world.ruleView("Mwan3Rule", "rule2")).toMatchObject({
      inSync: true,
      appliedCurrent: true,
    });
    expect(world.holdings(cnf)[0]).toEqual({});

    world.resetObservations();
    for (const outcome of (await world.resyncRules()).values()) {
      expect(outcome).toMatchObject({ kind: "done" });
    }
    await expectConverged(world, cnf, "443");
    expect(world.serviceRestarts(cnf)[0]).toContain("mwan3");
  });
});
