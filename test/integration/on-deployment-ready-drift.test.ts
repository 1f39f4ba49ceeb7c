// Drift repair and pruning, against the real API server and CNF simulators. Someone changes the
// CNF by hand (its REST API): the next resync puts back what the rules declare and says so on
// their status. Objects no rule declares are left alone, unless the CNF Deployment opts in to
// pruning; even then only objects this controller applied are removed, as its ledger (a
// ConfigMap per CNF in a namespace of ledgers) records them (docs/adr/0001).
import { jest } from "@jest/globals";
import { requireKind } from "../../shared/kinds/index.js";
import { PRUNE_ANNOTATION } from "../../shared/sync/plan-prune.js";
import { CONFIG_MAPS, DEPLOYMENTS } from "../../shared/kube/index.js";
import { LEDGER_ANNOTATION, LEDGER_KEY, ledgerName } from "../../shared/sync/prune-ledger.js";
import { newNamespace } from "./support/cluster.js";
import type { Cnf, CnfPod } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const ZONES = requireKind("FirewallZone").cnf;
const RULES = requireKind("Mwan3Rule").cnf;

const pair = (cnf: Cnf): [CnfPod, CnfPod] => cnf.pods as [CnfPod, CnfPod];

async function createRules(world: SyncWorld): Promise<void> {
  await world.createRule("Mwan3Policy", "policy1", PURPOSE, {
    members: [{ network: "ovn-net1", metric: 1, weight: 2 }],
  });
  await world.createRule("Mwan3Rule", "rule1", PURPOSE, { policy: "policy1", src_ip: "10.0.1.2" });
  await world.createRule("FirewallZone", "lan1", PURPOSE, {
    network: ["ovn-net1"],
    input: "ACCEPT",
    output: "ACCEPT",
  });
  await world.createRule("FirewallZone", "wan1", PURPOSE, {
    network: ["ovn-net2"],
    input: "REJECT",
    output: "ACCEPT",
  });
}

/** A zone created on one pod through the CNF's REST API, not by any rule. */
async function addZoneByHand(world: SyncWorld, pod: CnfPod, name: string): Promise<void> {
  const zone = { name, network: ["net0"], input: "ACCEPT", output: "ACCEPT" };
  await world.cnfClient(pod).create(ZONES, zone);
}

describe("drift repair: the next resync restores what someone changed on the CNF", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await createRules(world);
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "4 created" });
  });
  afterEach(() => world.close());

  it("a changed zone on one pod and a deleted rule on the other are put back, and their status says DriftRepaired", async () => {
    const [podA, podB] = pair(cnf);
    const clientA = world.cnfClient(podA);
    const lan1 = await clientA.get(ZONES, "lan1");
    await clientA.update(ZONES, { ...(lan1 as { name: string }), input: "DROP" });
    await world.cnfClient(podB).delete(RULES, "rule1");

    world.resetObservations();
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "2 unchanged, 2 updated" });

    expect(world.heldObjects(cnf, "firewall/zones", "lan1").map((z) => z?.["input"])).toEqual([
      "ACCEPT",
      "ACCEPT",
    ]);
    expect(world.held(cnf, "mwan3/rules")).toEqual([["rule1"], ["rule1"]]);
    // Only the drifted object was written on each pod, and only its service restarted.
    expect(world.cnfWrites(cnf)).toEqual([1, 1]);
    expect(world.serviceRestarts(cnf)).toEqual([["firewall"], ["mwan3"]]);
    for (const [kind, name] of [
      ["FirewallZone", "lan1"],
      ["Mwan3Rule", "rule1"],
    ] as const) {
      expect(await world.ruleView(kind, name)).toMatchObject({
        inSync: true,
        appliedCurrent: true,
        condition: { type: "Ready", reason: "DriftRepaired" },
      });
    }
    expect(await world.ruleView("FirewallZone", "wan1")).toMatchObject({
      condition: { type: "Ready", reason: "Applied" },
    });
  });
});

describe("pruning: objects no rule declares", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  let ledgers: string;

  beforeEach(async () => {
    world = await SyncWorld.create();
    ledgers = await newNamespace("ledgers");
    world.env["PRUNE_LEDGER_NAMESPACE"] = ledgers;
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    // The CNF "image" ships a zone "lan" on every pod.
    for (const pod of cnf.pods) await addZoneByHand(world, pod, "lan");
    await createRules(world);
  });
  afterEach(() => world.close());

  async function ledgerConfigMap() {
    const deployment = await world.kube.get(DEPLOYMENTS, {
      namespace: world.namespace,
      name: cnf.name,
    });
    if (deployment === undefined) return undefined;
    return world.kube.get(CONFIG_MAPS, { namespace: ledgers, name: ledgerName(deployment) });
  }

  async function ledger(): Promise<string[] | undefined> {
    return (await ledgerConfigMap())?.data?.[LEDGER_KEY]?.split("\n");
  }

  it("without the opt-in, an orphaned object and a default zone stay; no ledger is kept", async () => {
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "4 created" });
    await world.forceDeleteRule("FirewallZone", "wan1");

    world.resetObservations();
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "3 unchanged" });
    expect(world.held(cnf, "firewall/zones")).toEqual([
      ["lan", "lan1", "wan1"],
      ["lan", "lan1", "wan1"],
    ]);
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
    expect(await ledger()).toBeUndefined();
  });

  it(`with ${PRUNE_ANNOTATION}: "true", an object we applied whose rule vanished is removed; the default zone stays`, async () => {
    await world.annotateCnf(cnf, { [PRUNE_ANNOTATION]: "true" });
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "4 created" });
    expect(await ledger()).toEqual([
      "firewall/zones/lan1",
      "firewall/zones/wan1",
      "mwan3/policies/policy1",
      "mwan3/rules/rule1",
    ]);

    // A rule CR removed without cleanup (finalizer stripped by hand): its objects are orphans.
    await world.forceDeleteRule("FirewallZone", "wan1");
    await world.forceDeleteRule("Mwan3Rule", "rule1");
    // An object someone adds by hand later is not ours either.
    await addZoneByHand(world, pair(cnf)[0], "manual");

    world.resetObservations();
    expect(await world.resyncCnfs()).toEqual({
      kind: "done",
      result: "2 unchanged, 4 pruned",
    });
    expect(world.held(cnf, "firewall/zones")).toEqual([
      ["lan", "lan1", "manual"],
      ["lan", "lan1"],
    ]);
    expect(world.held(cnf, "mwan3/rules")).toEqual([[], []]);
    expect(world.serviceRestarts(cnf).map((s) => s.sort())).toEqual([
      ["firewall", "mwan3"],
      ["firewall", "mwan3"],
    ]);
    expect(await ledger()).toEqual(["firewall/zones/lan1", "mwan3/policies/policy1"]);

    // Nothing left to prune: a repeat writes nothing, not even the ledger.
    world.resetObservations();
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "2 unchanged" });
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
  });

  it("a pod that is not ready is pruned when it comes back; the ledger forgets only then", async () => {
    await world.annotateCnf(cnf, { [PRUNE_ANNOTATION]: "true" });
    await world.resyncCnfs();
    const [podA, podB] = pair(cnf);
    await world.forceDeleteRule("FirewallZone", "wan1");
    await world.setPodReady(podB, false);

    await world.resyncCnfs();
    expect(world.held(cnf, "firewall/zones")).toEqual([
      ["lan", "lan1"],
      ["lan", "lan1", "wan1"],
    ]);
    expect(await ledger()).toContain("firewall/zones/wan1");

    world.resetObservations();
    await world.setPodReady(podB, true);
    expect(await world.cnfObjectEvent("Pod", podB.name)).toMatchObject({ kind: "done" });
    expect(world.held(cnf, "firewall/zones")).toEqual([
      ["lan", "lan1"],
      ["lan", "lan1"],
    ]);
    expect(await ledger()).not.toContain("firewall/zones/wan1");
    expect(world.cnfWrites(cnf)).toEqual([0, 1]);
    expect(podA.sim.serviceActions()).toEqual([]);
  });
});

describe("pruning: the ledger moved from a Deployment annotation to a ConfigMap", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let ledgers: string;

  beforeEach(async () => {
    world = await SyncWorld.create();
    ledgers = await newNamespace("ledgers");
    world.env["PRUNE_LEDGER_NAMESPACE"] = ledgers;
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await createRules(world);
  });
  afterEach(() => world.close());

  const ledgerOfCnf = async (): Promise<string | undefined> => {
    const deployment = await world.kube.get(DEPLOYMENTS, {
      namespace: world.namespace,
      name: cnf.name,
    });
    if (deployment === undefined) return undefined;
    const key = { namespace: ledgers, name: ledgerName(deployment) };
    return (await world.kube.get(CONFIG_MAPS, key))?.data?.[LEDGER_KEY];
  };

  it("an annotation ledger written by an older version is honoured once: its orphans are pruned, then the ConfigMap alone counts", async () => {
    // As an older version left it: everything applied, and the annotation listing it.
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "4 created" });
    await world.annotateCnf(cnf, {
      [PRUNE_ANNOTATION]: "true",
      [LEDGER_ANNOTATION]: "firewall/zones/lan1\nfirewall/zones/wan1\nmwan3/rules/rule1",
    });
    await world.forceDeleteRule("FirewallZone", "wan1");

    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "3 unchanged, 2 pruned" });
    expect(world.held(cnf, "firewall/zones")).toEqual([["lan1"], ["lan1"]]);
    expect(await ledgerOfCnf()).toBe(
      "firewall/zones/lan1\nmwan3/policies/policy1\nmwan3/rules/rule1",
    );

    // From now on the annotation is history: the ConfigMap's rule1 is pruned though the
    // annotation no longer names it, and a hand-made zone the annotation names is left alone.
    for (const pod of cnf.pods) await addZoneByHand(world, pod, "manual");
    await world.annotateCnf(cnf, { [LEDGER_ANNOTATION]: "firewall/zones/manual" });
    await world.forceDeleteRule("Mwan3Rule", "rule1");
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "2 unchanged, 2 pruned" });
    expect(world.held(cnf, "mwan3/rules")).toEqual([[], []]);
    expect(world.held(cnf, "firewall/zones")).toEqual([
      ["lan1", "manual"],
      ["lan1", "manual"],
    ]);
  });

  it("a CNF deleted and created again under the same name starts with an empty ledger", async () => {
    await world.annotateCnf(cnf, { [PRUNE_ANNOTATION]: "true" });
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "4 created" });
    expect(await ledgerOfCnf()).toContain("firewall/zones/wan1");

    await world.deleteDeployment(cnf);
    const again = await world.createCnf(PURPOSE, { pods: 2 });
    expect(again.name).toBe(cnf.name);
    // The new CNF's image happens to ship an object named like one the old ledger lists.
    for (const pod of again.pods) await addZoneByHand(world, pod, "wan1");
    await world.annotateCnf(again, { [PRUNE_ANNOTATION]: "true" });
    await world.forceDeleteRule("FirewallZone", "wan1");

    await world.resyncCnfs();
    expect(world.held(again, "firewall/zones")).toEqual([
      ["lan1", "wan1"],
      ["lan1", "wan1"],
    ]);
    expect(await ledgerOfCnf()).not.toContain("firewall/zones/wan1");
  });
});
