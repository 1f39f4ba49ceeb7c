// Names as users write them: the CNF stores mwan3 and ipsec names as UCI section names (letters,
// digits, _), so "http-rule" reaches it as "http_rule", and references map the same way. The
// simulator keeps upstream's UCI validation, so a name sent unmapped would be refused.
import type { Cnf } from "../../dev/world/index.js";
import { requireKind } from "../../shared/kinds/index.js";
import { PRUNE_ANNOTATION } from "../../shared/sync/index.js";
import { SyncWorld } from "./sync-harness.js";

const PURPOSE = "cnf1";
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };
const HTTP_RULE = { policy: "balance-1", dest_ip: "0.0.0.0/0", dest_port: "80", proto: "tcp" };

describe("a Mwan3Rule named http-rule with policy balance-1", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
  });
  afterEach(() => world.close());

  it("converges on both pods as http_rule -> balance_1, is left alone by pruning, and deletes cleanly", async () => {
    await world.annotateCnf(cnf, { [PRUNE_ANNOTATION]: "true" });
    await world.createRule("Mwan3Policy", "balance-1", PURPOSE, POLICY);
    await world.createRule("Mwan3Rule", "http-rule", PURPOSE, HTTP_RULE);
    expect(await world.reconcile("Mwan3Policy", "balance-1")).toMatchObject({ kind: "done" });
    expect(await world.reconcile("Mwan3Rule", "http-rule")).toMatchObject({ kind: "done" });

    expect(world.held(cnf, "mwan3/policies")).toEqual([["balance_1"], ["balance_1"]]);
    expect(world.held(cnf, "mwan3/rules")).toEqual([["http_rule"], ["http_rule"]]);
    expect(world.heldObjects(cnf, "mwan3/rules", "http_rule")).toEqual([
      expect.objectContaining({ policy: "balance_1" }),
      expect.objectContaining({ policy: "balance_1" }),
    ]);
    expect(await world.ruleView("Mwan3Rule", "http-rule")).toMatchObject({ inSync: true });

    // A CNF-wide sync of a pruning CNF finds both objects declared: nothing written or removed.
    world.resetObservations();
    expect(await world.syncCnf(cnf)).toMatchObject({ kind: "done" });
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
    expect(world.held(cnf, "mwan3/rules")).toEqual([["http_rule"], ["http_rule"]]);

    await world.deleteRule("Mwan3Rule", "http-rule");
    expect(await world.reconcile("Mwan3Rule", "http-rule")).toMatchObject({ kind: "done" });
    await world.deleteRule("Mwan3Policy", "balance-1");
    expect(await world.reconcile("Mwan3Policy", "balance-1")).toMatchObject({ kind: "done" });
    expect(world.holdings(cnf)).toEqual([{}, {}]);
  });

  it("the CNF itself still refuses an unmapped name (the simulator keeps UCI's rules)", async () => {
    const pod = cnf.pods[0];
    if (pod === undefined) throw new Error("no pod");
    const policies = requireKind("Mwan3Policy").cnf;
    const refused = await world
      .cnfClient(pod)
      .update(policies, {
        name: "balance-1",
        members: [{ interface: "net1", metric: "1", weight: "2" }],
      })
      .then(
        () => "accepted",
        (error: unknown) => (error instanceof Error ? error.message : String(error)),
      );
    expect(refused).not.toBe("accepted");
  });

  it("a name with '.' cannot be stored: Stalled with the reason, nothing written", async () => {
    await world.createRule("Mwan3Policy", "balance.1", PURPOSE, POLICY);
    expect(await world.reconcile("Mwan3Policy", "balance.1")).toMatchObject({
      kind: "permanent",
    });
    const view = await world.ruleView("Mwan3Policy", "balance.1");
    expect(view?.condition).toMatchObject({ type: "Stalled" });
    expect(view?.message).toContain("UCI section name");
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
  });
});
