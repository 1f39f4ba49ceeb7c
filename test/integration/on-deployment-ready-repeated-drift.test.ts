// Issue 25 item 4: a CNF that answers 200 and stores nothing. Each resync finds the rule missing
// on the pod, writes it again (the CNF says yes and keeps nothing), and the rule stayed Ready
// with reason DriftRepaired: the only sign was the DriftRepaired Event count climbing. A rule
// repaired again and again after it was applied must say so: not Ready, RepeatedDrift, with the
// count and the window kept in its status (the functions keep no memory).
import { jest } from "@jest/globals";
import type { Cnf, CnfPod } from "../../dev/world/index.js";
import { requireKind } from "../../shared/kinds/index.js";
import { REPEATED_DRIFT_REPAIRS } from "../../shared/sync/plan-status.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const POLICIES = requireKind("Mwan3Policy").cnf;

describe("a CNF that keeps accepting a rule and losing it", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let pod: CnfPod;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 1 });
    pod = cnf.pods[0] as CnfPod;
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, {
      members: [{ network: "ovn-net1", metric: 1, weight: 2 }],
    });
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "created" });
    // The policy is lost on the pod, and from now on the CNF answers every write of policies
    // as if it stored it, and keeps nothing.
    await world.cnfClient(pod).delete(POLICIES, "policy1");
    pod.sim.failNext({ kind: "lie", collection: "mwan3/policies", count: 1000 });
  });
  afterEach(() => world.close());

  it("is Ready with DriftRepaired at first, then RepeatedDrift and not in sync", async () => {
    for (let repair = 1; repair < REPEATED_DRIFT_REPAIRS; repair += 1) {
      expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "updated" });
      expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
        inSync: true,
        condition: { type: "Ready", reason: "DriftRepaired" },
        status: { driftRepairs: repair },
      });
    }
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "repeated drift" });
    const view = await world.ruleView("Mwan3Policy", "policy1");
    expect(view).toMatchObject({
      inSync: false,
      condition: { type: "Reconciling", reason: "RepeatedDrift" },
      status: { driftRepairs: REPEATED_DRIFT_REPAIRS },
    });
    expect(view?.message).toContain(`repaired ${REPEATED_DRIFT_REPAIRS} times since`);
    expect(view?.status?.driftSince).toEqual(expect.any(String));
    expect(world.held(cnf, "mwan3/policies")).toEqual([[]]);

    // The CNF keeps its writes again: one more repair, and the resync after it finds the rule.
    pod.sim.clearFaults();
    await world.resyncCnfs();
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "unchanged" });
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      inSync: true,
      condition: { type: "Ready" },
    });
    expect(world.held(cnf, "mwan3/policies")).toEqual([["policy1"]]);
  });
});
