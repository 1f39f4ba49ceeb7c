// Every status write of reconcile-rule causes an update event for the rule: the echo of its own
// write. Upstream filters those with a generation predicate. Ours skips the CNF reads only when
// the rule is exactly as its last in-sync status write left it (the same resourceVersion), so
// any change the predicate would miss (a label moving the rule to another CNF) is still synced.
import { jest } from "@jest/globals";
import { ruleResource } from "../../shared/kube/index.js";
import { requireKind } from "../../shared/rules/index.js";
import type { Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };

/** CNF requests (reads included) each pod handled. */
const cnfRequests = (cnf: Cnf) =>
  cnf.pods.map((p) => {
    const c = p.sim.counters();
    return Object.values(c.collections).reduce((n, e) => n + e.reads + e.writes, 0);
  });

describe("the echo of reconcile-rule's own status write", () => {
  let world: SyncWorld;
  afterEach(() => world.close());

  it("costs no CNF request; a label change of the same generation is synced in full", async () => {
    world = await SyncWorld.create();
    const one = await world.createCnf("one", { pods: 2 });
    const two = await world.createCnf("two", { pods: 1 });
    await world.createRule("Mwan3Policy", "policy1", "one", POLICY);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
      kind: "done",
      result: "created",
    });

    world.resetObservations();
    world.calls.ownEchoesSkipped = 0;
    expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
      kind: "done",
      result: "unchanged",
    });
    expect(cnfRequests(one)).toEqual([0, 0]);
    expect(world.calls.ownEchoesSkipped).toBe(1);

    // Moved to CNF "two" by a label: the generation stays, the resourceVersion does not.
    await world.kube.mergePatch(
      ruleResource(requireKind("Mwan3Policy")),
      { namespace: world.namespace, name: "policy1" },
      { metadata: { labels: { sdewanPurpose: "two" } } },
    );
    world.resetObservations();
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    expect(world.holdings(two)).toEqual([{ "mwan3/policies": ["policy1"] }]);
    expect(world.calls.ownEchoesSkipped).toBe(1);
  });
});
