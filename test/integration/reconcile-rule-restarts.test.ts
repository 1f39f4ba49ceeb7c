// After a change the CNF's service must be restarted, or the running service never uses it.
// When that restart fails the object is already on the pod, so a redelivery finds it "held":
// the rule's status carries a RestartPending marker until a delivery has restarted the service.
import { jest } from "@jest/globals";
import type { Cnf, CnfPod } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };
/** More failures than the client's in-process retries, so the restart really fails. */
const RESTART_FAILS = { kind: "status", status: 500, collection: "restart", count: 5 } as const;

describe("a failed service restart is owed until a delivery makes it", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let pod2: CnfPod;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    pod2 = cnf.pods[1] as CnfPod;
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
  });
  afterEach(() => world.close());

  it("the redelivery restarts the service even though the policy is already held", async () => {
    pod2.sim.failNext(RESTART_FAILS);
    const first = await world.reconcile("Mwan3Policy", "policy1");
    expect(first).toMatchObject({ kind: "retry" });
    expect(world.holdings(cnf)).toEqual([
      { "mwan3/policies": ["policy1"] },
      { "mwan3/policies": ["policy1"] },
    ]);
    expect(world.serviceRestarts(cnf)).toEqual([["mwan3"], []]);
    const owed = await world.ruleView("Mwan3Policy", "policy1");
    expect(owed).toMatchObject({
      inSync: false,
      condition: { type: "Reconciling", reason: "RestartFailed" },
    });
    expect(owed?.message).toContain(`restarting mwan3 failed`);
    expect(owed?.status?.conditions?.[1]).toMatchObject({
      type: "Ready",
      status: "False",
      reason: "RestartPending",
    });

    pod2.sim.clearFaults();
    world.resetObservations();
    expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
      kind: "done",
      result: "unchanged",
    });
    // Nothing written again; the owed restart happens on pod2 only: this process remembers that
    // pod1's restart began after the write (shared/cnf/restarts.ts).
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
    expect(world.serviceRestarts(cnf)).toEqual([[], ["mwan3"]]);
    const ready = await world.ruleView("Mwan3Policy", "policy1");
    expect(ready).toMatchObject({ inSync: true, appliedCurrent: true });
    expect(ready?.status?.conditions).toHaveLength(1);

    // Paid once: the next re-delivery restarts nothing.
    world.resetObservations();
    await world.reconcile("Mwan3Policy", "policy1");
    expect(world.serviceRestarts(cnf)).toEqual([[], []]);
  });

  it("the owed restart survives the CNF going not-ready and back with its state", async () => {
    pod2.sim.failNext(RESTART_FAILS);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "retry" });
    pod2.sim.clearFaults();
    for (const pod of cnf.pods) await world.setPodReady(pod, false);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
      kind: "done",
      result: "waiting for CNF",
    });
    const down = await world.ruleView("Mwan3Policy", "policy1");
    expect(down?.condition).toMatchObject({ reason: "CNFNotReady" });
    expect(down?.status?.conditions?.[1]).toMatchObject({ reason: "RestartPending" });

    for (const pod of cnf.pods) await world.setPodReady(pod, true);
    world.resetObservations();
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    expect(world.serviceRestarts(cnf)[1]).toEqual(["mwan3"]);
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({ inSync: true });
  });

  it("a deletion whose restart failed keeps the finalizer until the restart is made", async () => {
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    await world.deleteRule("Mwan3Policy", "policy1");
    pod2.sim.failNext(RESTART_FAILS);
    world.resetObservations();
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "retry" });
    expect(world.holdings(cnf)).toEqual([{}, {}]);
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      deleting: true,
      finalizers: ["rule.finalizers.sdewan.akraino.org"],
      condition: { reason: "RestartFailed" },
    });

    pod2.sim.clearFaults();
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    expect(world.serviceRestarts(cnf)[1]).toEqual(["mwan3"]);
    expect(await world.readRule("Mwan3Policy", "policy1")).toBeUndefined();
  });
});
