// One bad object never breaks the others (issue 24, section 3), for the rule functions: rules
// the webhook would have refused (it is not registered here, as when it is down) sit beside good
// rules on two CNFs. on-deployment-ready's resync and reconcile-rule's batch path (a CloudEvents
// batch) each report the bad rules on themselves (Stalled, saying what to fix) and converge the
// good ones; neither answer is a 500. Both already isolated rules before issue 24: these are the
// guards that keep it so.
import request from "supertest";
import { sampleRule, type Cnf } from "../../dev/world/index.js";
import { RULE_API_VERSION } from "../../shared/kinds/index.js";
import { createFunctionApp, createLogger, Runtime } from "../../shared/runtime/index.js";
import { SyncWorld } from "./sync-harness.js";

const PROPOSAL = { encryption_algorithm: "aes128", hash_algorithm: "sha256", dh_group: "modp2048" };
/** Valid names for the CRD, too long for the CNF's UCI section name. */
const LONG = "p".repeat(251);
/** The CRD admits it; the rule's own schema does not (999 is no IPv4 octet). */
const BAD_IP = { policy: "balance-1", src_ip: "999.1.1.1" };

const quietRuntime = (): Runtime => new Runtime({ logger: createLogger({ level: "silent" }) });

describe("on-deployment-ready: a namespace resync over two CNFs with bad rules among good ones", () => {
  let world: SyncWorld;
  let cnf1: Cnf;
  let cnf2: Cnf;

  beforeAll(async () => {
    world = await SyncWorld.create();
    cnf1 = await world.createCnf("cnf1", { pods: 1 });
    cnf2 = await world.createCnf("cnf2", { pods: 1 });
    await world.createRule("IpsecProposal", LONG, "cnf1", PROPOSAL);
    await world.createRule("Mwan3Rule", "badip", "cnf1", BAD_IP);
    await world.createSampleRule("cnf1", "Mwan3Policy");
    await world.createRule("Mwan3Policy", "balance-2", "cnf2", sampleRule("Mwan3Policy").spec);
    await world.createRule("IpsecProposal", "proposal1", "cnf2", PROPOSAL);
  });
  afterAll(() => world.close());

  it("answers 202: the good rules are in sync on both CNFs, the bad ones Stalled saying why", async () => {
    expect(await world.resyncCnfs()).toMatchObject({ kind: "done" });
    expect(world.held(cnf1, "mwan3/policies")).toEqual([["balance_1"]]);
    expect(world.held(cnf2, "mwan3/policies")).toEqual([["balance_2"]]);
    for (const [kind, name] of [
      ["Mwan3Policy", "balance-1"],
      ["Mwan3Policy", "balance-2"],
      ["IpsecProposal", "proposal1"],
    ] as const) {
      expect(await world.ruleView(kind, name)).toMatchObject({ inSync: true });
    }
    for (const [kind, name, field] of [
      ["IpsecProposal", LONG, "metadata.name"],
      ["Mwan3Rule", "badip", "spec.src_ip"],
    ] as const) {
      const view = await world.ruleView(kind, name);
      expect(view).toMatchObject({ inSync: false, condition: { type: "Stalled" } });
      expect(view?.condition?.message).toContain(field);
    }
  });
});

describe("reconcile-rule: a CloudEvents batch with a bad rule among good ones", () => {
  let world: SyncWorld;

  beforeAll(async () => {
    world = await SyncWorld.create();
    await world.createCnf("cnf1", { pods: 1 });
    await world.createRule("IpsecProposal", LONG, "cnf1", PROPOSAL);
    await world.createRule("IpsecProposal", "proposal1", "cnf1", PROPOSAL);
    await world.createRule("IpsecProposal", "proposal2", "cnf1", PROPOSAL);
  });
  afterAll(() => world.close());

  it("answers 422 for the bad rule (not redelivered, never 500); the good ones are applied", async () => {
    const app = createFunctionApp(world.reconcileRule, quietRuntime());
    const event = (name: string) => ({
      specversion: "1.0",
      id: `batch-${name.slice(0, 20)}`,
      source: "test",
      type: "dev.knative.apiserver.ref.update",
      data: {
        apiVersion: RULE_API_VERSION,
        kind: "IpsecProposal",
        namespace: world.namespace,
        name,
      },
    });
    const reply = await request(app)
      .post("/")
      .set("content-type", "application/cloudevents-batch+json")
      .send(JSON.stringify(["proposal1", LONG, "proposal2"].map(event)));
    expect(reply.status).toBe(422);
    for (const name of ["proposal1", "proposal2"]) {
      expect(await world.ruleView("IpsecProposal", name)).toMatchObject({ inSync: true });
    }
    expect(await world.ruleView("IpsecProposal", LONG)).toMatchObject({
      inSync: false,
      condition: { type: "Stalled" },
    });
  });
});
