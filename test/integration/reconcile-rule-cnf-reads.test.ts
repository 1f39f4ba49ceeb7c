// reconcile-rule reads a rule's CNF Deployment and Pods from the API server's watch cache, the
// Pods with the selector last seen for the namespace's CNF, before the Deployment has answered.
// These scenarios are the ones where that early guess is wrong: it must never pick the pods.
import { jest } from "@jest/globals";
import { PODS } from "../../shared/kube/index.js";
import type { Cnf, CnfPod } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };

describe("reconcile-rule finds its CNF's pods when the namespace's last-seen selector is wrong", () => {
  let world: SyncWorld;

  beforeEach(async () => {
    world = await SyncWorld.create();
  });
  afterEach(() => world.close());

  /** One reconcile-rule event, with the API requests it made. */
  async function reconcileCounted(kind: string, name: string) {
    world.calls.api = 0;
    const outcome = await world.reconcile(kind, name);
    return { outcome, api: world.calls.api };
  }

  it("two CNFs in one namespace: each rule reaches its own CNF, and a re-delivery costs 3 API requests at most", async () => {
    const one = await world.createCnf("one", { pods: 1 });
    const two = await world.createCnf("two", { pods: 2 });
    await world.createRule("Mwan3Policy", "policyone", "one", POLICY);
    await world.createRule("Mwan3Policy", "policytwo", "two", POLICY);

    expect(await world.reconcile("Mwan3Policy", "policyone")).toEqual({
      kind: "done",
      result: "created",
    });
    // The namespace's only known CNF is "one": its selector is the guess, and it is wrong here.
    expect(await world.reconcile("Mwan3Policy", "policytwo")).toEqual({
      kind: "done",
      result: "created",
    });
    expect(world.held(one, "mwan3/policies")).toEqual([["policyone"]]);
    expect(world.held(two, "mwan3/policies")).toEqual([["policytwo"], ["policytwo"]]);

    // The rule, the Deployments and the Pods; fewer when lists read for an earlier event of
    // the namespace already cover the rule's version (ADR 0020).
    for (const name of ["policyone", "policytwo"]) {
      const { outcome, api } = await reconcileCounted("Mwan3Policy", name);
      expect(outcome).toEqual({ kind: "done", result: "unchanged" });
      expect(api).toBeLessThanOrEqual(3);
    }
  });

  it("the CNF Deployment recreated under its name with another selector: the left-over pod of the old one gets nothing", async () => {
    const old = await world.createCnf("one", { name: "cnf-x", pods: 1 });
    await world.createRule("Mwan3Policy", "policy1", "one", POLICY);
    expect(await world.reconcile("Mwan3Policy", "policy1")).toMatchObject({ kind: "done" });
    const leftOver = old.pods[0] as CnfPod;

    // Same name, a narrower selector. Nothing collects the old pod here (no garbage
    // collector), so it stays Ready, keeps app=cnf-x and its owner's "cnf-x-<hash>" name.
    const current = await world.apps.readNamespacedDeployment({
      namespace: world.namespace,
      name: "cnf-x",
    });
    await world.deleteDeployment(old);
    const v2 = { app: "cnf-x", release: "v2" };
    const recreated = await world.apps.createNamespacedDeployment({
      namespace: world.namespace,
      body: {
        metadata: {
          name: "cnf-x",
          labels: current.metadata?.labels ?? {},
          annotations: current.metadata?.annotations ?? {},
        },
        spec: {
          replicas: 1,
          selector: { matchLabels: v2 },
          template: {
            metadata: {
              labels: { ...current.spec?.template.metadata?.labels, ...v2 },
              annotations: current.spec?.template.metadata?.annotations ?? {},
            },
            spec: { containers: [{ name: "sdewan", image: "openwrt:test" }] },
          },
        },
      },
    });
    const cnf: Cnf = { ...old, uid: recreated.metadata?.uid ?? "", hash: "b2b2b2b2", pods: [] };
    await world.createReplicaSet(cnf, cnf.hash);
    const fresh = await world.addPod(cnf, cnf.hash);
    await world.kube.mergePatch(
      PODS,
      { namespace: world.namespace, name: fresh.name },
      { metadata: { labels: { release: "v2" } } },
    );

    await world.createRule("Mwan3Policy", "policy2", "one", POLICY);
    expect(await world.reconcile("Mwan3Policy", "policy2")).toEqual({
      kind: "done",
      result: "created",
    });
    expect(world.held(cnf, "mwan3/policies")).toEqual([["policy2"]]);
    expect(leftOver.sim.state().collections["mwan3/policies"]?.map((o) => o["name"])).toEqual([
      "policy1",
    ]);
    expect(await world.ruleView("Mwan3Policy", "policy2")).toMatchObject({
      inSync: true,
      condition: { type: "Ready", message: "applied on every ready pod of CNF cnf-x" },
    });
  });
});
