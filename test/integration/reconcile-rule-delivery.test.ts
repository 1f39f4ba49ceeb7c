// How reconcile-rule behaves under the delivery layer's habits: the same event many times, the
// same event twice at once, events in the wrong dependency order; and what one event costs.
import { jest } from "@jest/globals";
import { requireKind } from "../../shared/kinds/index.js";
import type { Outcome } from "../../shared/core/outcome.js";
import type { Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf-1";
const POLICY = { members: [{ network: "ovn-net1", metric: 2, weight: 2 }] };
const RULE = { policy: "balance1", src_ip: "192.168.1.2", dest_port: "80", proto: "tcp" };

/** Kinds whose create differs on the CNF: named UCI section, anonymous section, POST only. */
const KINDS = ["Mwan3Policy", "FirewallZone", "CNFService"] as const;

describe("delivery: duplicates, concurrency and order", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
  });
  afterEach(() => world.close());

  it.each(KINDS)("one %s event delivered 10 times: one CNF write per pod", async (kind) => {
    const sample = await world.createSampleRule(PURPOSE, kind);
    const outcomes: Outcome[] = [];
    for (let i = 0; i < 10; i += 1) outcomes.push(await world.reconcile(kind, sample.name));
    expect(outcomes[0]).toEqual({ kind: "done", result: "created" });
    expect(outcomes.slice(1)).toEqual(Array(9).fill({ kind: "done", result: "unchanged" }));
    expect(world.cnfWrites(cnf)).toEqual([1, 1]);
    const service = requireKind(kind).cnf.restartService;
    expect(world.serviceRestarts(cnf)).toEqual(
      service === null ? [[], []] : [[service], [service]],
    );
  });

  it.each(KINDS)(
    "two concurrent deliveries of one %s event: one object per pod, in sync, no 5xx storm",
    async (kind) => {
      const sample = await world.createSampleRule(PURPOSE, kind);
      const entry = requireKind(kind);
      const collection = `${entry.cnf.module}/${entry.cnf.collection}`;
      const both = await Promise.all([
        world.reconcile(kind, sample.name),
        world.reconcile(kind, sample.name),
      ]);
      // Both done: a POST that loses the race (409) finds the object as wanted.
      expect(both.map((o) => o.kind)).toEqual(["done", "done"]);
      expect(await world.reconcile(kind, sample.name)).toEqual({
        kind: "done",
        result: "unchanged",
      });
      const onCnf = entry.cnfObjectName(sample.name);
      expect(world.holdings(cnf)).toEqual([{ [collection]: [onCnf] }, { [collection]: [onCnf] }]);
      expect(await world.ruleView(kind, sample.name)).toMatchObject({
        inSync: true,
        appliedCurrent: true,
        finalizers: [entry.finalizer],
        condition: { type: "Ready" },
      });
    },
  );

  it("a CNFService POST that loses the race (409) finds the object as wanted: both done", async () => {
    const sample = await world.createSampleRule(PURPOSE, "CNFService");
    // The first POST to reach each pod waits, so the other delivery's POST creates the object.
    for (const pod of cnf.pods) {
      pod.sim.failNext({ kind: "delay", ms: 300, method: "POST", collection: "service/services" });
    }
    const both = await Promise.all([
      world.reconcile("CNFService", sample.name),
      world.reconcile("CNFService", sample.name),
    ]);
    expect(both.map((o) => o.kind)).toEqual(["done", "done"]);
    for (const pod of cnf.pods) {
      expect(pod.sim.requests().filter((r) => r.status === 409)).toHaveLength(1);
    }
    expect(world.holdings(cnf)).toEqual([
      { "service/services": [sample.name] },
      { "service/services": [sample.name] },
    ]);
  });

  it("a Mwan3Rule delivered before its policy: 503 naming the policy, then healed by redelivery", async () => {
    await world.createRule("Mwan3Policy", "balance1", PURPOSE, POLICY);
    await world.createRule("Mwan3Rule", "rule1", PURPOSE, RULE);

    const early = await world.reconcile("Mwan3Rule", "rule1");
    expect(early).toMatchObject({ kind: "retry", retryAfterSeconds: 5 });
    const waiting = await world.ruleView("Mwan3Rule", "rule1");
    // Claimed before its first write (ADR 0003), though the CNF refused that write.
    expect(waiting).toMatchObject({
      inSync: false,
      finalizers: [requireKind("Mwan3Rule").finalizer],
      condition: { type: "Reconciling", reason: "DependencyMissing" },
    });
    expect(waiting?.message).toMatch(/^Mwan3Policy balance1 is missing on the CNF, apply it first/);
    expect(world.holdings(cnf)).toEqual([{}, {}]);

    expect(await world.reconcile("Mwan3Policy", "balance1")).toMatchObject({ kind: "done" });
    expect(await world.reconcile("Mwan3Rule", "rule1")).toEqual({
      kind: "done",
      result: "created",
    });
    expect(await world.ruleView("Mwan3Rule", "rule1")).toMatchObject({
      inSync: true,
      condition: { type: "Ready" },
    });
  });

  it("a zone deleted while a forwarding still uses it: 503 'still used', healed once that goes", async () => {
    for (const [kind, name] of [
      ["FirewallZone", "lan1"],
      ["FirewallZone", "wan1"],
      ["FirewallForwarding", "lan1-to-wan1"],
    ] as const) {
      await world.createSampleRule(PURPOSE, kind, name);
      expect(await world.reconcile(kind, name)).toMatchObject({ kind: "done" });
    }
    await world.deleteRule("FirewallZone", "lan1");
    expect(await world.reconcile("FirewallZone", "lan1")).toMatchObject({ kind: "retry" });
    const inUse = await world.ruleView("FirewallZone", "lan1");
    expect(inUse).toMatchObject({ deleting: true, condition: { reason: "StillInUse" } });
    expect(inUse?.message).toMatch(
      /^still used by FirewallForwarding lan1-to-wan1, delete it first: /,
    );

    await world.deleteRule("FirewallForwarding", "lan1-to-wan1");
    expect(await world.reconcile("FirewallForwarding", "lan1-to-wan1")).toMatchObject({
      kind: "done",
    });
    expect(await world.reconcile("FirewallZone", "lan1")).toEqual({
      kind: "done",
      result: "deleted",
    });
    expect(world.holdings(cnf)).toEqual([
      { "firewall/zones": ["wan1"] },
      { "firewall/zones": ["wan1"] },
    ]);
  });
});

describe("what one event for one rule on a two-pod CNF costs", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    // Warm: CNF sessions exist (a login per pod is paid once per process, not per event).
    await world.createRule("Mwan3Policy", "warmup", PURPOSE, POLICY);
    await world.reconcile("Mwan3Policy", "warmup");
    await world.createRule("Mwan3Policy", "balance1", PURPOSE, POLICY);
  });
  afterEach(() => world.close());

  /** API and CNF requests of one delivery, as HandlerContext.calls counted them. */
  async function cost(): Promise<{ api: number; cnf: number; outcome: Outcome }> {
    world.resetObservations();
    const outcome = await world.reconcile("Mwan3Policy", "balance1");
    return { api: world.calls.api, cnf: world.calls.cnf, outcome };
  }

  it("created: 5 API + 6 CNF requests; unchanged: 3 + 0; updated: 5 + 6; deleted: 4 + 6", async () => {
    const created = await cost();
    // API: get rule, list Deployments, list Pods, add finalizer (one patch, from the rule read),
    // patch status. CNF per pod: GET, PUT, restart.
    expect(created).toEqual({ api: 5, cnf: 6, outcome: { kind: "done", result: "created" } });
    expect(cnf.pods.map((p) => p.sim.counters().logins)).toEqual([0, 0]);

    const unchanged = await cost();
    // The rule is exactly as our status write left it (the echo of that write, or a duplicate
    // delivery): API: get rule, list Deployments, list Pods; only the rule when it follows
    // other events of the namespace within 2 s (a burst, ADR 0020). No CNF request (drift is
    // the resync's job, issue 19).
    expect(unchanged.outcome).toEqual({ kind: "done", result: "unchanged" });
    expect(unchanged.cnf).toBe(0);
    expect(unchanged.api).toBeLessThanOrEqual(3);

    await world.patchRuleSpec("Mwan3Policy", "balance1", {
      members: [{ network: "ovn-net2", metric: 1, weight: 1 }],
    });
    const updated = await cost();
    // API: get rule, list Deployments, list Pods, patch status twice (Applying before the CNF
    // writes, so inSync=true never stands for the old generation: issue 17; then the result).
    // CNF per pod: GET, PUT, restart.
    expect(updated).toEqual({ api: 5, cnf: 6, outcome: { kind: "done", result: "updated" } });

    await world.deleteRule("Mwan3Policy", "balance1");
    const deleted = await cost();
    // API: get rule, list Deployments, list Pods, remove finalizer (one patch).
    // CNF per pod: GET, DELETE, restart.
    expect(deleted).toEqual({ api: 4, cnf: 6, outcome: { kind: "done", result: "deleted" } });
  });
});
