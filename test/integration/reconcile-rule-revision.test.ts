// The four cases the seed's revision adds: the controller or the CNF goes away and comes back.
// Here every sample rule of manifests/samples (at least one of every kind) lives on a two-pod CNF.
// "Controller down": no event is delivered. "Up": one event per rule, as a resync sends them.
import { jest } from "@jest/globals";
import { requireKind } from "../../shared/kinds/index.js";
import { holdingsOf, sampleRules, type Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

// Dozens of events against a real API server on a shared machine.
jest.setTimeout(60_000);

const PURPOSE = "cnf-1";
const SAMPLES = sampleRules();

/** What each pod must hold for `rules`: collection -> sorted object names. */
async function createSamples(world: SyncWorld): Promise<void> {
  for (const rule of SAMPLES) {
    await world.createRule(rule.kind, rule.name, PURPOSE, structuredClone(rule.spec));
  }
}

async function expectAllDone(world: SyncWorld, order?: "apply" | "reverse"): Promise<void> {
  const outcomes = await world.resyncRules({ order });
  expect(outcomes.size).toBeGreaterThan(0);
  for (const [rule, outcome] of outcomes) {
    expect({ rule, outcome }).toMatchObject({ rule, outcome: { kind: "done" } });
  }
}

/** Both pods hold every sample exactly once, and every status says so. */
async function expectSamplesInSync(world: SyncWorld, cnf: Cnf): Promise<void> {
  const desired = holdingsOf(SAMPLES);
  expect(world.holdings(cnf)).toEqual([desired, desired]);
  for (const rule of SAMPLES) {
    expect({ rule: rule.name, view: await world.ruleView(rule.kind, rule.name) }).toMatchObject({
      rule: rule.name,
      view: {
        inSync: true,
        appliedCurrent: true,
        observedCurrent: true,
        finalizers: [requireKind(rule.kind).finalizer],
        condition: { type: "Ready", message: `applied on every ready pod of CNF ${cnf.name}` },
      },
    });
  }
}

describe("the revision's cases: controller or CNF down and back, every sample kind", () => {
  let world: SyncWorld;

  beforeEach(async () => {
    world = await SyncWorld.create();
  });
  afterEach(() => world.close());

  it("controller down -> CNF Deployment and rule CRs created -> up: every rule is applied", async () => {
    const cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await createSamples(world);
    for (const rule of SAMPLES) {
      const view = await world.ruleView(rule.kind, rule.name);
      expect(view).toMatchObject({ finalizers: [], status: undefined });
    }
    expect(world.holdings(cnf)).toEqual([{}, {}]);

    // Dependants arrive before what they need: redelivery heals the order.
    await expectAllDone(world, "reverse");
    await expectSamplesInSync(world, cnf);
  });

  it("controller down -> rule CRs deleted -> up: removed from both pods, finalizers released", async () => {
    const cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await createSamples(world);
    await expectAllDone(world);
    for (const rule of SAMPLES) await world.deleteRule(rule.kind, rule.name);
    // The finalizers keep every CR, and the CNF still holds every rule.
    expect(await world.listRules()).toHaveLength(SAMPLES.length);
    expect(world.holdings(cnf)).toEqual([holdingsOf(SAMPLES), holdingsOf(SAMPLES)]);

    // Zones and proposals arrive before the rules still using them: "in use" heals too.
    await expectAllDone(world, "apply");
    expect(world.holdings(cnf)).toEqual([{}, {}]);
    expect(await world.listRules()).toEqual([]);
  });

  it("CNF not-ready -> ready: statuses cleared while down, re-applied when back", async () => {
    const cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await createSamples(world);
    await expectAllDone(world);
    for (const pod of cnf.pods) await world.setPodReady(pod, false);

    // Every rule's event while down: recorded on status (inSync false, appliedVersion cleared)
    // and answered done; the readiness event brings them back, not a redelivery.
    const whileDown = await world.resyncRules({ rounds: 1 });
    for (const outcome of whileDown.values()) {
      expect(outcome).toEqual({ kind: "done", result: "waiting for CNF" });
    }
    for (const rule of SAMPLES) {
      expect(await world.ruleView(rule.kind, rule.name)).toMatchObject({
        inSync: false,
        appliedVersion: undefined,
        condition: { type: "Reconciling", reason: "CNFNotReady" },
        message: `CNF ${cnf.name} has 0/2 pods ready`,
      });
    }

    for (const pod of cnf.pods) await world.setPodReady(pod, true);
    world.resetObservations();
    await expectAllDone(world);
    await expectSamplesInSync(world, cnf);
    // The pods kept their configuration: nothing had to be written again.
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
  });

  it("controller down -> CNF pods restart -> up: every rule is re-created on both pods", async () => {
    const cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await createSamples(world);
    await expectAllDone(world);
    for (const pod of cnf.pods) await world.restartPod(pod);
    // The statuses cannot know: they still say applied. Reconcile must ask the CNF.
    for (const rule of SAMPLES) {
      expect(await world.ruleView(rule.kind, rule.name)).toMatchObject({ inSync: true });
    }
    expect(world.holdings(cnf)).toEqual([{}, {}]);

    await expectAllDone(world);
    await expectSamplesInSync(world, cnf);
  });
});
