// A CNF write that is answered late (issue 17 item 2): the simulator holds a PUT longer than the
// client's per-request timeout. Before, the client gave up after 1.5 s and sent the PUT again;
// the first attempt was still applied later, over the next generation's value, while the rule's
// status said Applied and inSync. A write is now waited for (CNF_WRITE_TIMEOUT_MS) and never
// sent twice after a timeout, so the status and the CNF agree once every request has finished.
import { jest } from "@jest/globals";
import { pollUntil } from "../../dev/control-plane/api.js";
import type { Cnf, CnfPod } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "late";
const ZONES = "firewall/zones";
const ZONE = { network: ["ovn-net1"], output: "ACCEPT" };
/** Longer than the client's 1.5 s timeout, shorter than the 10 s a write is waited for. */
const LATE_MS = 4000;

describe("a CNF PUT answered after the client's per-request timeout", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let pod: CnfPod;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 1 });
    pod = cnf.pods[0] as CnfPod;
    await world.createRule("FirewallZone", "lan1", PURPOSE, { ...ZONE, input: "ACCEPT" });
    expect(await world.reconcile("FirewallZone", "lan1")).toMatchObject({ kind: "done" });
  });
  afterEach(() => world.close());

  /** Resolves once the CNF has answered every request it received (the late one included). */
  const everyRequestFinished = () =>
    pollUntil(
      () =>
        Promise.resolve(
          pod.sim.requests().every((r) => r.status !== null || r.fault === "hang")
            ? true
            : undefined,
        ),
      () => `the CNF to finish every request: ${JSON.stringify(pod.sim.requests().slice(-4))}`,
      { timeoutMs: LATE_MS + 5000, intervalMs: 50 },
    );

  it("is sent once and waited for, so the next generation's value is the one that stays, and inSync is true only for it", async () => {
    await world.patchRuleSpec("FirewallZone", "lan1", { input: "REJECT" });
    pod.sim.failNext({ kind: "delay", ms: LATE_MS, method: "PUT", collection: ZONES });
    // Redelivered while answered "retry", as the connector or Knative would.
    expect(await world.reconcileUntilSettled("FirewallZone", "lan1")).toMatchObject({
      kind: "done",
    });
    await world.patchRuleSpec("FirewallZone", "lan1", { input: "DROP" });
    expect(await world.reconcile("FirewallZone", "lan1")).toMatchObject({ kind: "done" });
    await everyRequestFinished();

    const view = await world.ruleView("FirewallZone", "lan1");
    const held = world.heldObjects(cnf, ZONES, "lan1").map((z) => z?.["input"]);
    // The invariant: a rule that says inSync for its generation is what the CNF holds.
    expect({ inSync: view?.inSync, observedCurrent: view?.observedCurrent, held }).toEqual({
      inSync: true,
      observedCurrent: true,
      held: ["DROP"],
    });
    expect(view?.condition).toMatchObject({ type: "Ready", reason: "Applied" });
    // One PUT per generation: the late one was waited for, not sent again.
    const puts = pod.sim
      .requests()
      .filter((r) => r.method === "PUT" && r.path.endsWith("/zones/lan1"));
    expect(puts.map((r) => r.fault)).toEqual([null, "delay", null]);
  });

  it("a write not answered within CNF_WRITE_TIMEOUT_MS fails the rule (not inSync, retried), saying the write may still land", async () => {
    world.env["CNF_WRITE_TIMEOUT_MS"] = "2000";
    await world.patchRuleSpec("FirewallZone", "lan1", { input: "REJECT" });
    pod.sim.failNext({ kind: "delay", ms: LATE_MS, method: "PUT", collection: ZONES });
    expect(await world.reconcile("FirewallZone", "lan1")).toMatchObject({ kind: "retry" });
    const view = await world.ruleView("FirewallZone", "lan1");
    expect(view).toMatchObject({ inSync: false, condition: { reason: "CNFError" } });
    expect(view?.message).toContain("no reply within 2000 ms (the write may still be applied");
    // Sent once: the client did not add a second attempt that could land later still.
    await everyRequestFinished();
    const puts = pod.sim
      .requests()
      .filter((r) => r.method === "PUT" && r.path.endsWith("/zones/lan1"));
    expect(puts).toHaveLength(2);
    // The redelivery finds what the CNF holds and reports it.
    expect(await world.reconcile("FirewallZone", "lan1")).toMatchObject({ kind: "done" });
    expect(await world.ruleView("FirewallZone", "lan1")).toMatchObject({ inSync: true });
    expect(world.heldObjects(cnf, ZONES, "lan1").map((z) => z?.["input"])).toEqual(["REJECT"]);
  });
});
