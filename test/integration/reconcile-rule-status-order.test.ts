// Issue 25 item 4: a rule's status never goes backwards. A reconcile-rule delivery that read
// generation N and was slow at the CNF came back after the resync had applied N+1 and written
// inSync=true for it, and its status write (no precondition) put generation N back: inSync=false
// with CNFError at N over Ready at N+1, or its late CNF write left the pod holding N while the
// status claimed N+1. Status writes now carry the resourceVersion read; a 409 re-reads the rule,
// and a delivery whose CNF writes were for an older generation applies the current one again.
// Real API server and simulator; the function's client is wrapped to act at its Applying write,
// the moment between its read of the rule and its CNF writes.
import { jest } from "@jest/globals";
import type { Cnf, CnfPod } from "../../dev/world/index.js";
import { randomBytes } from "node:crypto";
import { createOnDeploymentReady } from "../../functions/on-deployment-ready/index.js";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import type { Outcome } from "../../shared/core/outcome.js";
import { SyncWorld } from "./sync-harness.js";
import { beforeStatusWrites } from "./support/acting-before.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const POLICY = (metric: number) => ({
  members: [{ network: "ovn-net1", metric, weight: 2 }],
});

const isApplyingMark = (status: Record<string, unknown>): boolean =>
  Array.isArray(status["conditions"]) &&
  (status["conditions"] as { reason?: string }[])[0]?.reason === "Applying";

describe("a slow reconcile-rule delivery and the resync on the same pod", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let pod: CnfPod;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 1 });
    pod = cnf.pods[0] as CnfPod;
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY(1));
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    await world.patchRuleSpec("Mwan3Policy", "policy1", POLICY(2));
  });
  afterEach(() => world.close());

  const metricHeld = (): unknown =>
    (world.heldObjects(cnf, "mwan3/policies", "policy1")[0]?.["members"] as { metric: string }[])[0]
      ?.metric;

  /**
   * Delivers generation 2's event; just before it writes to the CNF, the spec becomes generation
   * 3 and the resync applies it (inSync=true at 3), then `meanwhile` runs. Returns the delivery's
   * outcome and the observedGeneration stored before each of its later status writes.
   */
  async function slowDeliveryOvertaken(meanwhile: () => void): Promise<{
    outcome: Outcome;
    seen: (number | undefined)[];
  }> {
    let overtaken = false;
    const seen: (number | undefined)[] = [];
    const kube = beforeStatusWrites(world.kube, async (status) => {
      if (overtaken) {
        seen.push((await world.readRule("Mwan3Policy", "policy1"))?.status?.observedGeneration);
        return;
      }
      if (!isApplyingMark(status)) return;
      overtaken = true;
      await world.patchRuleSpec("Mwan3Policy", "policy1", POLICY(3));
      expect(await world.resyncCnfs()).toMatchObject({ kind: "done" });
      expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
        generation: 3,
        inSync: true,
        observedCurrent: true,
      });
      meanwhile();
    });
    await world.watchCacheCaughtUp();
    const fn = createReconcileRule({ kube: () => kube, env: world.env });
    const outcome = await fn.handle(world.ruleEvent("Mwan3Policy", "policy1"), world.context());
    expect(overtaken).toBe(true);
    return {
      outcome,
      seen: [...seen, (await world.ruleView("Mwan3Policy", "policy1"))?.status?.observedGeneration],
    };
  }

  it("its failure at generation 2 does not replace Ready at generation 3", async () => {
    const { outcome, seen } = await slowDeliveryOvertaken(() =>
      pod.sim.failNext({
        kind: "status",
        status: 503,
        method: "PUT",
        collection: "mwan3/policies",
        count: 20,
      }),
    );
    pod.sim.clearFaults();
    expect(seen.filter((g) => g !== 3)).toEqual([]);
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      generation: 3,
      inSync: true,
      observedCurrent: true,
      condition: { type: "Ready" },
    });
    expect(metricHeld()).toBe("3");
    expect(outcome.kind).toBe("done");
  });

  it("its late CNF write of generation 2 is replaced by generation 3 before it answers", async () => {
    const { outcome, seen } = await slowDeliveryOvertaken(() => undefined);
    expect(seen.filter((g) => g !== 3)).toEqual([]);
    expect(metricHeld()).toBe("3");
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      generation: 3,
      inSync: true,
      observedCurrent: true,
      condition: { type: "Ready" },
    });
    expect(outcome).toEqual({ kind: "done", result: "updated" });
  });

  it("a resync that read generation 2 and was overtaken by reconcile-rule applies 3 again", async () => {
    let overtaken = false;
    const seen: (number | undefined)[] = [];
    const kube = beforeStatusWrites(world.kube, async (status) => {
      if (overtaken) {
        seen.push((await world.readRule("Mwan3Policy", "policy1"))?.status?.observedGeneration);
        return;
      }
      if (!isApplyingMark(status)) return;
      overtaken = true;
      await world.patchRuleSpec("Mwan3Policy", "policy1", POLICY(3));
      expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
      expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
        generation: 3,
        inSync: true,
      });
    });
    const fn = createOnDeploymentReady({ kube: () => kube, env: world.env });
    const scope = { namespace: world.namespace };
    const event = { type: "resync", id: randomBytes(8).toString("hex"), scope } as const;
    expect(await fn.handle(event, world.context())).toEqual({ kind: "done", result: "updated" });
    expect(overtaken).toBe(true);
    expect(seen.filter((g) => g !== 3)).toEqual([]);
    expect(metricHeld()).toBe("3");
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      generation: 3,
      inSync: true,
      observedCurrent: true,
      condition: { type: "Ready" },
    });
  });
});
