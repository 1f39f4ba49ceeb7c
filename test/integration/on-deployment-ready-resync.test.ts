// The resync event against the real API server and CNF simulators: whatever was missed while the
// controller was down (events are lost: ApiServerSource sends nothing for what changed meanwhile),
// one resync converges every CNF of the scope, releases rules whose CNF is gone, and repairs
// changes made on a CNF by hand.
import { jest } from "@jest/globals";
import { ruleResource } from "../../shared/kube/index.js";
import { requireKind } from "../../shared/kinds/index.js";
import { sampleRules, type Cnf, type CnfPod } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };
const ruleSpec = (subnet: string, port: string) => ({
  policy: "policy1",
  src_ip: subnet,
  dest_ip: "0.0.0.0/0",
  dest_port: port,
  proto: "tcp",
});

const pair = (cnf: Cnf): [CnfPod, CnfPod] => cnf.pods as [CnfPod, CnfPod];

describe("controller down -> CNF pod restart -> controller up: one resync", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    await world.createRule("Mwan3Rule", "rule1", PURPOSE, ruleSpec("10.0.1.0/24", "80"));
    await world.createRule("Mwan3Rule", "rule2", PURPOSE, ruleSpec("10.0.2.0/24", "443"));
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "3 created" });
  });
  afterEach(() => world.close());

  it("re-applies, updates and deletes on both pods, and every status tells the truth", async () => {
    // Controller down: nothing below is delivered.
    const [pod1] = pair(cnf);
    await world.restartPod(pod1);
    await world.deleteRule("Mwan3Rule", "rule1");
    await world.createRule("Mwan3Rule", "rule3", PURPOSE, ruleSpec("10.0.3.0/24", "22"));
    await world.patchRuleSpec("Mwan3Rule", "rule2", ruleSpec("10.0.2.0/24", "8443"));

    // Controller up: one resync event.
    const outcome = await world.resyncCnfs();
    expect(outcome).toMatchObject({ kind: "done" });
    const desired = { "mwan3/policies": ["policy1"], "mwan3/rules": ["rule2", "rule3"] };
    expect(world.holdings(cnf)).toEqual([desired, desired]);
    expect(world.heldObjects(cnf, "mwan3/rules", "rule2").map((o) => o?.["dest_port"])).toEqual([
      "8443",
      "8443",
    ]);
    expect(await world.readRule("Mwan3Rule", "rule1")).toBeUndefined();
    for (const name of ["rule2", "rule3"]) {
      expect(await world.ruleView("Mwan3Rule", name)).toMatchObject({
        inSync: true,
        appliedCurrent: true,
        observedCurrent: true,
        finalizers: [requireKind("Mwan3Rule").finalizer],
        condition: { type: "Ready", message: `applied on every ready pod of CNF ${cnf.name}` },
      });
    }
    // The pod lost policy1 in its restart, after policy1 was applied: written back as a
    // re-seed, not drift, and its status is left as it was (ADR 0016).
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      inSync: true,
      condition: { type: "Ready", reason: "Applied" },
    });
  });
});

describe("a namespace resync also settles rules whose CNF does not exist", () => {
  let world: SyncWorld;

  beforeEach(async () => {
    world = await SyncWorld.create();
  });
  afterEach(() => world.close());

  it("two CNFs converge in one call; orphan rules say no CNF; a deleting orphan is released", async () => {
    const cnf1 = await world.createCnf("cnf1", { pods: 1 });
    const cnf2 = await world.createCnf("cnf2", { pods: 1 });
    await world.createRule("Mwan3Policy", "policy1", "cnf1", POLICY);
    await world.createRule("Mwan3Policy", "policy1b", "cnf2", POLICY);
    await world.createRule("Mwan3Policy", "ghost", "nocnf", POLICY);
    await world.createRule("Mwan3Policy", "leaving", "nocnf", POLICY);
    // As if it had been applied to a CNF that is gone since, then deleted.
    const entry = requireKind("Mwan3Policy");
    const key = { namespace: world.namespace, name: "leaving" };
    await world.kube.addFinalizer(ruleResource(entry), key, entry.finalizer);
    await world.deleteRule("Mwan3Policy", "leaving");

    expect(await world.resyncCnfs()).toEqual({
      kind: "done",
      result: "2 created, 1 no CNF, 1 released (no CNF)",
    });
    expect(world.held(cnf1, "mwan3/policies")).toEqual([["policy1"]]);
    expect(world.held(cnf2, "mwan3/policies")).toEqual([["policy1b"]]);
    expect(await world.readRule("Mwan3Policy", "leaving")).toBeUndefined();
    expect(await world.ruleView("Mwan3Policy", "ghost")).toMatchObject({
      inSync: false,
      condition: {
        type: "Reconciling",
        reason: "NoCNF",
        message: `no CNF Deployment with sdewanPurpose=nocnf in namespace ${world.namespace}`,
      },
    });
  });

  it("a resync of one namespace and purpose touches only that CNF", async () => {
    const cnf1 = await world.createCnf("cnf1", { pods: 1 });
    const cnf2 = await world.createCnf("cnf2", { pods: 1 });
    await world.createRule("Mwan3Policy", "policy1", "cnf1", POLICY);
    await world.createRule("Mwan3Policy", "policy1b", "cnf2", POLICY);

    expect(await world.resyncCnfs({ namespace: world.namespace, purpose: "cnf2" })).toEqual({
      kind: "done",
      result: "created",
    });
    expect(world.held(cnf1, "mwan3/policies")).toEqual([[]]);
    expect(world.held(cnf2, "mwan3/policies")).toEqual([["policy1b"]]);
  });
});

describe("a restarted CNF receives dependencies first (the simulator refuses the wrong order)", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    for (const sample of sampleRules()) {
      await world.createRule(sample.kind, sample.name, PURPOSE, structuredClone(sample.spec));
    }
    expect(await world.resyncCnfs()).toMatchObject({ kind: "done" });
  });
  afterEach(() => world.close());

  it("policies before mwan3 rules, zones before redirects, rules and forwardings, proposals before remotes", async () => {
    for (const pod of cnf.pods) {
      pod.sim.restartCnf();
      pod.sim.resetCounters();
    }
    expect(await world.resyncCnfs()).toEqual({ kind: "done", result: "12 updated" });

    for (const pod of cnf.pods) {
      const writes = pod.sim
        .requests()
        .filter((r) => r.method !== "GET" && r.path.includes("/sdewan/"))
        .map((r) => ({ path: r.path, status: r.status }));
      expect(writes.every((w) => w.status !== null && w.status < 300)).toBe(true);
      const first = (part: string) => writes.findIndex((w) => w.path.includes(part));
      const last = (part: string) => writes.map((w) => w.path.includes(part)).lastIndexOf(true);
      expect(last("/mwan3/v1/policies")).toBeLessThan(first("/mwan3/v1/rules"));
      for (const dependant of [
        "/firewall/v1/redirects",
        "/firewall/v1/rules",
        "/firewall/v1/forwardings",
      ]) {
        expect(last("/firewall/v1/zones")).toBeLessThan(first(dependant));
      }
      expect(last("/ipsec/v1/proposals")).toBeLessThan(first("/ipsec/v1/remotes"));
    }
    expect(world.serviceRestarts(cnf).map((services) => services.sort())).toEqual([
      ["firewall", "ipsec", "mwan3"],
      ["firewall", "ipsec", "mwan3"],
    ]);
  });
});
