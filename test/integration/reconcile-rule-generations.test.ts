// Issue 17 item 6: a rule must never show inSync=true while observedGeneration is behind
// generation. Two ways it did: the spec changed and the status kept saying inSync for the old
// generation while the new one was being written (seconds in a large resync); and a status
// computed for generation N was written after N+1 existed. The real API server and simulator,
// with the function's client wrapped to look (or act) at the exact moment of its status writes.
import { jest } from "@jest/globals";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import type { KubeClient } from "../../shared/kube/index.js";
import type { Outcome } from "../../shared/core/outcome.js";
import { SyncWorld } from "./sync-harness.js";
import { beforeStatusWrites } from "./support/acting-before.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const POLICY = (metric: number) => ({
  members: [{ network: "ovn-net1", metric, weight: 2 }],
});

describe("inSync and observedGeneration", () => {
  let world: SyncWorld;
  beforeEach(async () => {
    world = await SyncWorld.create();
    await world.createCnf(PURPOSE, { pods: 2 });
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY(1));
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      inSync: true,
      generation: 1,
    });
  });
  afterEach(() => world.close());

  const reconcileWith = async (kube: KubeClient): Promise<Outcome> => {
    await world.watchCacheCaughtUp();
    const fn = createReconcileRule({ kube: () => kube, env: world.env });
    return fn.handle(world.ruleEvent("Mwan3Policy", "policy1"), world.context());
  };

  it("while a new generation is written to the CNF, the rule no longer says inSync", async () => {
    await world.patchRuleSpec("Mwan3Policy", "policy1", POLICY(2));
    // What anyone reads at each status write: the last one comes after the CNF writes.
    const seen: unknown[] = [];
    const kube = beforeStatusWrites(world.kube, async () => {
      const view = await world.ruleView("Mwan3Policy", "policy1");
      seen.push({ inSync: view?.inSync, observedCurrent: view?.observedCurrent });
    });
    expect(await reconcileWith(kube)).toEqual({ kind: "done", result: "updated" });
    // Before the Applying mark: still the old claim (nothing written yet). Before the final
    // write, after the CNF writes: not in sync (observedGeneration stays behind until the end).
    expect(seen).toEqual([
      { inSync: true, observedCurrent: false },
      { inSync: false, observedCurrent: false },
    ]);
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      inSync: true,
      observedCurrent: true,
      generation: 2,
      condition: { type: "Ready" },
    });
  });

  it("a status for generation N is never written once N+1 exists: N+1 is applied instead (issue 25)", async () => {
    await world.patchRuleSpec("Mwan3Policy", "policy1", POLICY(2));
    let changed = false;
    const kube = beforeStatusWrites(world.kube, async (status) => {
      // The spec changes again just before the write that says inSync for generation 2.
      if (!changed && status["inSync"] === true) {
        changed = true;
        await world.patchRuleSpec("Mwan3Policy", "policy1", POLICY(3));
      }
    });
    // The write carries the resourceVersion read: refused, re-read, and generation 3 applied.
    expect(await reconcileWith(kube)).toEqual({ kind: "done", result: "updated" });
    expect(changed).toBe(true);
    const after = await world.ruleView("Mwan3Policy", "policy1");
    expect(after).toMatchObject({
      generation: 3,
      inSync: true,
      observedCurrent: true,
      appliedCurrent: true,
      condition: { type: "Ready" },
    });
  });
});
