// Issue 28 §2: a CNF pod's restart costs O(1) API writes, not O(rules). A pod's readiness is a
// fact about the CNF: a pod going not ready leaves every rule held by every ready pod in sync, and
// a pod coming back empty is written again without rewriting the status of the rules it had.
// Rule status stays honest: what changed for a rule, or failed on the returning pod, shows.
import { jest } from "@jest/globals";
import { randomBytes } from "node:crypto";
import { sampleRule, sampleRules, type Cnf, type CnfPod } from "../../dev/world/index.js";
import { createOnDeploymentReady } from "../../functions/on-deployment-ready/index.js";
import type { Outcome } from "../../shared/core/outcome.js";
import type { IntakeEvent } from "../../shared/events/types.js";
import type { KubeClient } from "../../shared/kube/index.js";
import { intercepting } from "./support/acting-before.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(120_000);

const PURPOSE = "cnf1";

/** Rule status writes (patchStatus of anything but Pods) made through the wrapped client. */
class StatusWrites {
  count = 0;
  wrap(real: KubeClient): KubeClient {
    return intercepting(real, ["patchStatus"], (_, args, call) => {
      if ((args[0] as { plural?: string } | undefined)?.plural !== "pods") this.count += 1;
      return call();
    });
  }
}

describe("a CNF pod that goes not ready and comes back", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  const writes = new StatusWrites();

  /** A Pod event to on-deployment-ready, whose status writes are counted. */
  async function podEvent(pod: CnfPod): Promise<Outcome> {
    const fn = createOnDeploymentReady({ kube: () => writes.wrap(world.kube), env: world.env });
    const event: IntakeEvent = {
      type: "object",
      id: randomBytes(8).toString("hex"),
      action: "update",
      ref: { apiVersion: "v1", kind: "Pod", namespace: world.namespace, name: pod.name },
    };
    return fn.handle(event, world.context());
  }

  async function restart(pod: CnfPod): Promise<{ down: Outcome; up: Outcome }> {
    await world.crashPod(pod);
    const down = await podEvent(pod);
    await world.setPodReady(pod, true);
    const up = await podEvent(pod);
    return { down, up };
  }

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    writes.count = 0;
  });
  afterEach(() => world.close());

  it.each([12, 200])(
    "with %i rules writes no rule status, and every rule stays in sync and held by both pods",
    async (n) => {
      const policy = sampleRule("Mwan3Policy");
      for (let i = 0; i < n; i += 1) {
        await world.createRule("Mwan3Policy", `policy${i}`, PURPOSE, structuredClone(policy.spec));
      }
      expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: `${n} created` });
      const before = await world.ruleView("Mwan3Policy", "policy0");

      const { down, up } = await restart(cnf.pods[1] as CnfPod);

      expect(writes.count).toBe(0);
      expect(down).toMatchObject({ kind: "done" });
      expect(up).toEqual({ kind: "done", result: `${n} re-applied` });
      expect(await world.ruleView("Mwan3Policy", "policy0")).toEqual(before);
      expect(before).toMatchObject({ inSync: true, condition: { type: "Ready" } });
      for (const held of world.held(cnf, "mwan3/policies")) expect(held).toHaveLength(n);
    },
  );

  it("a rule whose spec changed while the pod was down is applied, and only its status says so", async () => {
    for (const sample of sampleRules()) {
      await world.createRule(sample.kind, sample.name, PURPOSE, structuredClone(sample.spec));
    }
    await world.resyncRules({ order: "apply" });
    const pod = cnf.pods[1] as CnfPod;
    await world.crashPod(pod);
    await podEvent(pod);
    const policy = sampleRule("Mwan3Policy");
    await world.patchRuleSpec("Mwan3Policy", policy.name, {
      ...structuredClone(policy.spec),
      members: [{ network: "ovn-net1", metric: 3, weight: 3 }],
    });
    await world.setPodReady(pod, true);
    writes.count = 0;

    expect(await podEvent(pod)).toMatchObject({ kind: "done" });

    // Its Applying mark (issue 17) and its Applied status: the changed rule's, no other's.
    expect(writes.count).toBe(2);
    expect(await world.ruleView("Mwan3Policy", policy.name)).toMatchObject({
      inSync: true,
      status: { observedGeneration: 2, appliedGeneration: 2 },
    });
  });

  it("a rule the returning pod refuses says so on its status; the others write nothing", async () => {
    for (const sample of sampleRules()) {
      await world.createRule(sample.kind, sample.name, PURPOSE, structuredClone(sample.spec));
    }
    await world.resyncRules({ order: "apply" });
    const pod = cnf.pods[1] as CnfPod;
    await world.crashPod(pod);
    await podEvent(pod);
    pod.sim.failNext({
      kind: "status",
      status: 400,
      method: "PUT",
      message: "rule refused",
      collection: "mwan3/rules",
      count: 100,
    });
    await world.setPodReady(pod, true);
    writes.count = 0;

    await podEvent(pod);

    const refused = sampleRule("Mwan3Rule");
    expect(writes.count).toBe(1);
    const view = await world.ruleView("Mwan3Rule", refused.name);
    expect(view).toMatchObject({ inSync: false, condition: { type: "Stalled" } });
    expect(view?.message).toContain(`on pod ${pod.name}`);
    expect(view?.message).toContain("rule refused");
  });
});
