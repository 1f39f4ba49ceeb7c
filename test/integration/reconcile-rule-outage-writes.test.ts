// A CNF that answers 503 for as long as an outage lasts: each redelivery of the rule's event tries
// again and answers retry, and the rule's status says so once. A status write per attempt would be
// an update event per attempt, each with a delivery budget of its own: a loop that lasts as long
// as the outage and keeps delivering after it ends (found on the real node's Knative Broker).
import { jest } from "@jest/globals";
import { SyncWorld } from "./sync-harness.js";
import { intercepting } from "./support/acting-before.js";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";

jest.setTimeout(60_000);

const RULE = { src: "lan1", src_port: "3000", proto: "tcp", target: "REJECT" };

describe("a rule whose CNF answers 503 on every pod", () => {
  let world: SyncWorld;
  afterEach(() => world.close());

  beforeEach(async () => {
    world = await SyncWorld.create();
    const cnf = await world.createCnf("cnf1", { pods: 2 });
    for (const pod of cnf.pods) {
      pod.sim.failNext({ kind: "status", status: 503, collection: "firewall/rules", count: 1000 });
    }
    await world.createRule("FirewallRule", "outage", "cnf1", RULE);
  });

  it("is retried on each delivery, and its status is written once", async () => {
    let statusWrites = 0;
    const fn = createReconcileRule({
      kube: () =>
        intercepting(world.kube, ["patchStatus"], (_, __, call) => {
          statusWrites += 1;
          return call();
        }),
      env: world.env,
    });

    const outcomes = [];
    for (let i = 0; i < 4; i += 1) {
      await world.watchCacheCaughtUp();
      outcomes.push(await fn.handle(world.ruleEvent("FirewallRule", "outage"), world.context()));
    }

    expect(outcomes.map((o) => o.kind)).toEqual(["retry", "retry", "retry", "retry"]);
    expect(statusWrites).toBe(1);
    expect(await world.ruleView("FirewallRule", "outage")).toMatchObject({ inSync: false });
  });

  it("gets one status whether its event (item reads) or the CNF's resync (collection reads) saw it", async () => {
    expect(await world.reconcile("FirewallRule", "outage")).toMatchObject({ kind: "retry" });
    const byEvent = await world.ruleView("FirewallRule", "outage");

    expect(await world.resyncCnfs()).toMatchObject({ kind: "retry" });
    expect(await world.reconcile("FirewallRule", "outage")).toMatchObject({ kind: "retry" });

    // The same failure is the same status: no write for either to undo (each write is an event).
    expect(await world.ruleView("FirewallRule", "outage")).toEqual(byEvent);
  });
});
