// Issue 17 item 6: a CNF that answers 400 to a GET failed to read its own configuration; nothing
// of ours was refused. The rule is retried (Reconciling, CNFError), not Stalled as CNFRejected,
// and the next delivery applies it.
import { jest } from "@jest/globals";
import type { Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };

describe("a CNF answering 400 to a read", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 1 });
  });
  afterEach(() => world.close());

  it("is retried, not a permanent CNFRejected, and the next delivery applies the rule", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    const pod = cnf.pods[0];
    if (pod === undefined) throw new Error("the CNF has no pod");
    pod.sim.failNext({
      kind: "status",
      status: 400,
      message: "Bad request URI",
      method: "GET",
      collection: "mwan3/policies",
    });

    const first = await world.reconcile("Mwan3Policy", "policy1");
    expect(first.kind).toBe("retry");
    const view = await world.ruleView("Mwan3Policy", "policy1");
    expect(view).toMatchObject({
      inSync: false,
      condition: { type: "Reconciling", reason: "CNFError" },
    });
    expect(view?.message).toContain("HTTP 400");

    expect(await world.reconcile("Mwan3Policy", "policy1")).toEqual({
      kind: "done",
      result: "created",
    });
    expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({
      inSync: true,
      condition: { type: "Ready", reason: "Applied" },
    });
  });
});
