// on-deployment-ready against the real API server and one CNF simulator per pod: a CNF Deployment
// or Pod event converges every rule of that CNF in one call, whatever happened to its pods.
import { jest } from "@jest/globals";
import { ALL_RULE_KINDS, requireKind } from "../../shared/kinds/index.js";
import { holdingsOf, sampleRules, type Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";

/** Every sample rule of manifests/samples (at least one of every kind), created for PURPOSE. */
async function createAllSamples(world: SyncWorld): Promise<void> {
  for (const sample of sampleRules()) {
    await world.createRule(sample.kind, sample.name, PURPOSE, structuredClone(sample.spec));
  }
}

/** How many sample rules there are, as the function's result line counts them. */
const SAMPLES = sampleRules().length;

/** Every rule of the namespace matches `expected`; `finalized`: each carries its kind's finalizer. */
async function expectEveryRule(
  world: SyncWorld,
  expected: Record<string, unknown>,
  finalized?: boolean,
): Promise<void> {
  for (const rule of await world.listRules()) {
    const finalizers = finalized ? { finalizers: [requireKind(rule.kind).finalizer] } : {};
    expect({ rule, view: await world.ruleView(rule.kind, rule.name) }).toMatchObject({
      rule,
      view: { ...expected, ...finalizers },
    });
  }
}

describe("a CNF event converges every rule of the CNF in one call", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await createAllSamples(world);
  });
  afterEach(() => world.close());

  it("applies every sample rule on both pods, then an unchanged repeat writes nothing", async () => {
    expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: `${SAMPLES} created` });
    expect(world.holdings(cnf)).toEqual([holdingsOf(), holdingsOf()]);
    await expectEveryRule(
      world,
      {
        inSync: true,
        appliedCurrent: true,
        condition: { type: "Ready", reason: "Applied" },
      },
      true,
    );

    world.resetObservations();
    expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: `${SAMPLES} unchanged` });
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
    expect(world.serviceRestarts(cnf)).toEqual([[], []]);
    // 1 Deployment get + 1 Deployment list + 1 Pod list + 1 list per rule kind, + the CNF's sync
    // Lease taken and released (ADR 0008); no status write.
    expect(world.calls.api).toBe(3 + ALL_RULE_KINDS.length + 2);
  });

  it("a restarted pod gets every rule back in one call; the other pod sees zero writes", async () => {
    await world.syncCnf(cnf);
    const [restarted, healthy] = cnf.pods as [Cnf["pods"][0], Cnf["pods"][0]];

    await world.crashPod(restarted);
    expect(await world.cnfObjectEvent("Pod", restarted.name)).toMatchObject({ kind: "done" });
    // Every ready pod still holds every rule: in sync, as before (ADR 0016).
    await expectEveryRule(world, {
      inSync: true,
      appliedCurrent: true,
      condition: { type: "Ready", reason: "Applied" },
    });

    world.resetObservations();
    await world.setPodReady(restarted, true);
    expect(await world.cnfObjectEvent("Pod", restarted.name)).toEqual({
      kind: "done",
      result: `${SAMPLES} re-applied`,
    });
    expect(world.holdings(cnf)).toEqual([holdingsOf(), holdingsOf()]);
    expect(world.cnfWrites(cnf)[cnf.pods.indexOf(healthy)]).toBe(0);
    expect(healthy.sim.serviceActions()).toEqual([]);
    expect(restarted.sim.serviceActions().map((a) => a.service)).toEqual([
      "firewall",
      "ipsec",
      "mwan3",
    ]);
    await expectEveryRule(world, {
      inSync: true,
      appliedCurrent: true,
      condition: { type: "Ready", reason: "Applied" },
    });
  });

  it("with one pod not ready, the ready pod gets everything and statuses say so; then the second catches up", async () => {
    const [ready, late] = cnf.pods as [Cnf["pods"][0], Cnf["pods"][0]];
    await world.setPodReady(late, false);

    expect(await world.syncCnf(cnf)).toMatchObject({ kind: "done" });
    const byPod = world.holdings(cnf);
    expect(byPod[cnf.pods.indexOf(ready)]).toEqual(holdingsOf());
    expect(late.sim.requests()).toEqual([]);
    await expectEveryRule(world, {
      inSync: true,
      condition: { type: "Ready", reason: "Applied" },
      message: `applied on every ready pod of CNF ${cnf.name}`,
    });

    world.resetObservations();
    await world.setPodReady(late, true);
    expect(await world.cnfObjectEvent("Pod", late.name)).toMatchObject({ kind: "done" });
    expect(world.holdings(cnf)).toEqual([holdingsOf(), holdingsOf()]);
    expect(world.cnfWrites(cnf)[cnf.pods.indexOf(ready)]).toBe(0);
    await expectEveryRule(
      world,
      {
        inSync: true,
        appliedCurrent: true,
        condition: { type: "Ready", message: `applied on every ready pod of CNF ${cnf.name}` },
      },
      true,
    );
  });

  it("a CNF with no ready pod: every rule inSync=false, appliedVersion cleared, Reconciling; 202", async () => {
    await world.syncCnf(cnf);
    for (const pod of cnf.pods) await world.setPodReady(pod, false);

    expect(await world.syncCnf(cnf)).toEqual({
      kind: "done",
      result: `${SAMPLES} waiting for CNF`,
    });
    await expectEveryRule(
      world,
      {
        inSync: false,
        appliedCurrent: false,
        appliedVersion: undefined,
        condition: {
          type: "Reconciling",
          reason: "CNFNotReady",
          message: `CNF ${cnf.name} has 0/2 pods ready`,
        },
      },
      true,
    );
    const policy = await world.readRule("Mwan3Policy", "balance-1");
    expect(policy?.status?.appliedTime).toBeUndefined();
    expect(policy?.status?.appliedGeneration).toBeUndefined();
  });

  it("Deployment deleted (Reference mode): rules being deleted lose their finalizer, the others say no CNF", async () => {
    await world.syncCnf(cnf);
    await world.deleteRule("Mwan3Rule", "http-rule");
    await world.deleteDeployment(cnf);

    expect(await world.cnfObjectEvent("Deployment", cnf.name, { action: "delete" })).toMatchObject({
      kind: "done",
    });
    expect(await world.readRule("Mwan3Rule", "http-rule")).toBeUndefined();
    await expectEveryRule(
      world,
      {
        inSync: false,
        appliedVersion: undefined,
        condition: { type: "Reconciling", reason: "NoCNF" },
      },
      true,
    );
  });

  it("Deployment deleted (Resource mode): the event's last state names the purpose", async () => {
    await world.syncCnf(cnf);
    await world.deleteDeployment(cnf);
    const object = { metadata: { name: cnf.name, labels: { sdewanPurpose: PURPOSE } } };

    world.resetObservations();
    const outcome = await world.cnfObjectEvent("Deployment", cnf.name, {
      action: "delete",
      object,
    });
    expect(outcome).toEqual({ kind: "done", result: `${SAMPLES} no CNF` });
    await expectEveryRule(world, { condition: { reason: "NoCNF" } });
  });
});

describe("events on-deployment-ready does nothing with", () => {
  let world: SyncWorld;

  beforeEach(async () => {
    world = await SyncWorld.create();
  });
  afterEach(() => world.close());

  it("a Deployment without the sdewanPurpose label: 202, nothing done", async () => {
    await world.apps.createNamespacedDeployment({
      namespace: world.namespace,
      body: {
        metadata: { name: "web" },
        spec: {
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: { containers: [{ name: "web", image: "nginx" }] },
          },
        },
      },
    });
    world.resetObservations();
    const outcome = await world.cnfObjectEvent("Deployment", "web");
    expect(outcome).toEqual({
      kind: "done",
      result: `ignored: Deployment ${world.namespace}/web has no sdewanPurpose`,
    });
    expect(world.calls.api).toBe(1);
  });

  it("a rule kind: 400, it belongs to reconcile-rule", async () => {
    const outcome = await world.onDeploymentReady.handle(
      world.ruleEvent("Mwan3Rule", "r1"),
      world.context(),
    );
    expect(outcome).toMatchObject({ kind: "malformed", code: "UnknownKind" });
  });

  it("a resync whose namespace cannot exist: 400", async () => {
    expect(await world.resyncCnfs({ namespace: "Not_A_Namespace" })).toMatchObject({
      kind: "malformed",
      code: "BadResyncScope",
    });
  });
});
