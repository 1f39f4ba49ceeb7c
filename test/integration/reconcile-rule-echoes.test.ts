// Every status write of reconcile-rule causes an update event for the rule: the echo of its own
// write. Upstream filters those with a generation predicate. Ours skips the CNF reads only when
// the rule is exactly as its last in-sync status write left it (the same resourceVersion), so
// any change the predicate would miss (a label moving the rule to another CNF) is still synced.
import { jest } from "@jest/globals";
import { Watch } from "@kubernetes/client-node";
import { ruleResource } from "../../shared/kube/index.js";
import { RULE_GROUP, RULE_VERSION, requireKind } from "../../shared/kinds/index.js";
import type { Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";
import { adminKubeConfig } from "./support/cluster.js";
import { waitUntil } from "./support/wait.js";

jest.setTimeout(60_000);

const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };

/** CNF requests (reads included) each pod handled. */
const cnfRequests = (cnf: Cnf) =>
  cnf.pods.map((p) => {
    const c = p.sim.counters();
    return Object.values(c.collections).reduce((n, e) => n + e.reads + e.writes, 0);
  });

type Watched = { type: string; object: Record<string, unknown> };

/** Every watch event of the namespace's Mwan3Policies from now on, as the connector sees them. */
async function watchPolicies(world: SyncWorld): Promise<{ seen: Watched[]; stop: () => void }> {
  const seen: Watched[] = [];
  const plural = requireKind("Mwan3Policy").plural;
  const path = `/apis/${RULE_GROUP}/${RULE_VERSION}/namespaces/${world.namespace}/${plural}`;
  const request = await new Watch(adminKubeConfig()).watch(
    path,
    {},
    (type: string, object: Record<string, unknown>) => seen.push({ type, object }),
    () => undefined,
  );
  // The first ADDED arrives once the watch is open; the rule is created after this returns.
  return { seen, stop: () => request.abort() };
}

const statusOf = (w: Watched) => w.object["status"] as { inSync?: boolean } | undefined;

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

  it("in Resource mode, the echoes of its claim and its status write cost no request at all; someone else's change is synced", async () => {
    world = await SyncWorld.create();
    const one = await world.createCnf("one", { pods: 2 });
    const two = await world.createCnf("two", { pods: 1 });
    const watch = await watchPolicies(world);
    try {
      await world.createRule("Mwan3Policy", "policy1", "one", POLICY);
      expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
        kind: "done",
        result: "created",
      });
      await waitUntil("the status write's watch event", () =>
        watch.seen.some((w) => statusOf(w)?.inSync === true),
      );
      // The claim (finalizer) and the in-sync status: two versions this delivery wrote.
      const echoes = watch.seen.filter((w) => w.type === "MODIFIED");
      expect(echoes).toHaveLength(2);

      world.resetObservations();
      world.calls.ownEchoesSkipped = 0;
      for (const echo of echoes) {
        const event = { ...world.ruleEvent("Mwan3Policy", "policy1"), object: echo.object };
        expect(await world.reconcileRule.handle(event, world.context())).toEqual({
          kind: "done",
          result: "unchanged",
        });
      }
      expect(world.calls.ownEchoesSkipped).toBe(2);
      expect(world.calls.api).toBe(0);
      expect(cnfRequests(one)).toEqual([0, 0]);

      // A label change by someone else: its event carries a version we did not write.
      await world.kube.mergePatch(
        ruleResource(requireKind("Mwan3Policy")),
        { namespace: world.namespace, name: "policy1" },
        { metadata: { labels: { sdewanPurpose: "two" } } },
      );
      await waitUntil("the label change's watch event", () => watch.seen.length > 3);
      const moved = watch.seen[3] as Watched;
      const event = { ...world.ruleEvent("Mwan3Policy", "policy1"), object: moved.object };
      expect(await world.reconcileRule.handle(event, world.context())).toMatchObject({
        kind: "done",
      });
      expect(world.holdings(two)).toEqual([{ "mwan3/policies": ["policy1"] }]);
      expect(world.calls.ownEchoesSkipped).toBe(2);
    } finally {
      watch.stop();
    }
  });
});
