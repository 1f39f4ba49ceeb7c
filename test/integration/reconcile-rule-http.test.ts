// reconcile-rule served by the runtime (createFunctionApp) and driven over HTTP with supertest,
// as Knative or the connector would: both CloudEvent modes, bad input, a CNF that fails in the
// ways real ones do, and a CNF password that never reaches a log line or a status.
import { jest } from "@jest/globals";
import request from "supertest";
import { RULE_API_VERSION, RULE_KIND_NAMES } from "../../shared/kinds/index.js";
import {
  createFunctionApp,
  createLogger,
  Runtime,
  type FunctionApp,
} from "../../shared/runtime/index.js";
import type { Cnf, CnfPod } from "../../dev/world/index.js";
import { CNF_TEST_TIMEOUT_MS, SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const PASSWORD = "pw-7Qx!92-do-not-log";
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };

describe("reconcile-rule over HTTP", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let pod1: CnfPod;
  let app: FunctionApp;
  let lines: string[];

  beforeEach(async () => {
    world = await SyncWorld.create();
    world.env["CNF_PASSWORD"] = PASSWORD;
    cnf = await world.createCnf(PURPOSE, { pods: 2, sim: { password: PASSWORD } });
    pod1 = cnf.pods[0] as CnfPod;
    lines = [];
    const logger = createLogger({
      level: "debug",
      destination: { write: (line: string) => void lines.push(line) },
    });
    app = createFunctionApp(world.reconcileRule, new Runtime({ logger }));
  });

  afterEach(async () => {
    // Whatever happened in the test: the password is in no log line and no status.
    expect(lines.length).toBeGreaterThan(0);
    for (const line of [...lines, ...world.log.lines]) expect(line).not.toContain(PASSWORD);
    for (const rule of await world.listRules()) {
      expect(JSON.stringify(await world.readRule(rule.kind, rule.name))).not.toContain(PASSWORD);
    }
    await world.close();
  });

  /** A plain JSON ref, as a person with curl sends it. */
  const post = (body: unknown) =>
    request(app).post("/").set("content-type", "application/json").send(JSON.stringify(body));
  const ref = (kind: string, name: string) => ({ kind, namespace: world.namespace, name });

  it("a binary-mode CloudEvent: 202 with an empty body, rule applied on both pods", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    const reply = await request(app)
      .post("/")
      .set({
        "content-type": "application/json",
        "ce-specversion": "1.0",
        "ce-id": "e-1",
        "ce-source": "https://100.65.0.1:443",
        "ce-type": "dev.knative.apiserver.ref.add",
        "ce-subject": `/apis/${RULE_API_VERSION}/namespaces/${world.namespace}/mwan3policies/policy1`,
      })
      .send(JSON.stringify({ ...ref("Mwan3Policy", "policy1"), apiVersion: RULE_API_VERSION }));
    expect(reply.status).toBe(202);
    expect(reply.text).toBe("");
    expect(reply.headers["x-sdewan-reason"]).toBe("created");
    expect(world.holdings(cnf)).toEqual([
      { "mwan3/policies": ["policy1"] },
      { "mwan3/policies": ["policy1"] },
    ]);
  });

  it("a structured-mode CloudEvent re-delivered: 202 'unchanged'", async () => {
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    const structured = () =>
      request(app)
        .post("/")
        .set("content-type", "application/cloudevents+json; charset=utf-8")
        .send(
          JSON.stringify({
            specversion: "1.0",
            id: "e-2",
            source: "https://100.65.0.1:443",
            type: "dev.knative.apiserver.ref.update",
            datacontenttype: "application/json",
            data: { ...ref("Mwan3Policy", "policy1"), apiVersion: RULE_API_VERSION },
          }),
        );
    expect((await structured()).headers["x-sdewan-reason"]).toBe("created");
    const again = await structured();
    expect(again.status).toBe(202);
    expect(again.headers["x-sdewan-reason"]).toBe("unchanged");
  });

  it("a malformed event: 400, and no CNF is asked anything", async () => {
    const reply = await post({ kind: "Mwan3Policy", namespace: world.namespace });
    expect(reply.status).toBe(400);
    expect(reply.headers["x-sdewan-outcome"]).toBe("malformed");
    const notJson = await request(app).post("/").set("content-type", "application/json").send("{");
    expect(notJson.status).toBe(400);
    expect(cnf.pods.map((p) => p.sim.requests().length)).toEqual([0, 0]);
  });

  it("an unknown kind: 400 listing the supported kinds", async () => {
    const reply = await post(ref("Mwan3Policies", "policy1"));
    expect(reply.status).toBe(400);
    expect(reply.headers["x-sdewan-code"]).toBe("UnknownKind");
    const reason = decodeURIComponent(String(reply.headers["x-sdewan-reason"]));
    for (const kind of RULE_KIND_NAMES) expect(reason).toContain(kind);
  });

  it("a spec the CRD accepts but the CNF never can (unmapped network): 422 and Stalled", async () => {
    await world.createRule("FirewallZone", "lan9", PURPOSE, { network: ["ovn-net9"] });
    const reply = await post(ref("FirewallZone", "lan9"));
    expect(reply.status).toBe(422);
    expect(reply.headers["x-sdewan-code"]).toBe("NetworkNotMapped");
    expect(reply.headers["retry-after"]).toBeUndefined();
    const view = await world.ruleView("FirewallZone", "lan9");
    expect(view).toMatchObject({
      inSync: false,
      finalizers: [],
      condition: { type: "Stalled", reason: "NetworkNotMapped" },
    });
    expect(view?.message).toContain("network ovn-net9 is not in the CNF Deployment's");
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
  });

  it("a zone name longer than the CNF stores (11 characters): 422 Stalled InvalidSpec", async () => {
    await world.createRule("FirewallZone", "lan-toolong-1", PURPOSE, { network: ["ovn-net1"] });
    const reply = await post(ref("FirewallZone", "lan-toolong-1"));
    expect(reply.status).toBe(422);
    expect(reply.headers["x-sdewan-code"]).toBe("InvalidSpec");
    expect(await world.ruleView("FirewallZone", "lan-toolong-1")).toMatchObject({
      condition: { type: "Stalled", reason: "InvalidSpec" },
    });
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
  });

  it("a spec only the CNF rejects (400): 422 Stalled CNFRejected, one attempt per pod", async () => {
    for (const zone of ["lan1", "wan1"]) {
      await world.createSampleRule(PURPOSE, "FirewallZone", zone);
      expect((await post(ref("FirewallZone", zone))).status).toBe(202);
    }
    // The schema takes any protocol word; the CNF knows its list (the schema refuses a bad
    // family itself since issue 17).
    const rule = { src: "lan1", dest: "wan1", proto: "gre", target: "ACCEPT" };
    await world.createRule("FirewallRule", "rule1", PURPOSE, rule);
    world.resetObservations();
    const reply = await post(ref("FirewallRule", "rule1"));
    expect(reply.status).toBe(422);
    expect(reply.headers["x-sdewan-code"]).toBe("CNFRejected");
    const view = await world.ruleView("FirewallRule", "rule1");
    expect(view).toMatchObject({ condition: { type: "Stalled", reason: "CNFRejected" } });
    expect(view?.message).toContain("invalid proto");
    // One attempt per pod: a 400 is not retried in process.
    expect(world.cnfWrites(cnf)).toEqual([1, 1]);
  });

  it.each([
    ["answering 500", { kind: "status", status: 500 } as const, "HTTP 500"],
    ["answering garbage instead of JSON", { kind: "garbage" } as const, "bad reply"],
    ["hanging", { kind: "hang" } as const, `no reply within ${CNF_TEST_TIMEOUT_MS} ms`],
  ])(
    "a CNF pod %s: 503 with Retry-After, and the status says what failed",
    async (_t, fault, text) => {
      await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
      pod1.sim.failNext({ ...fault, collection: "mwan3/policies", count: 50 });
      const reply = await post(ref("Mwan3Policy", "policy1"));
      expect(reply.status).toBe(503);
      expect(reply.headers["retry-after"]).toBe("5");
      const view = await world.ruleView("Mwan3Policy", "policy1");
      expect(view).toMatchObject({
        inSync: false,
        appliedVersion: undefined,
        condition: { type: "Reconciling", reason: "CNFError" },
      });
      expect(view?.message).toContain(text);
      expect(view?.message).toContain(`on pod ${pod1.name}`);

      // The fault clears: the redelivery finishes the job.
      pod1.sim.clearFaults();
      expect((await post(ref("Mwan3Policy", "policy1"))).status).toBe(202);
      expect(await world.ruleView("Mwan3Policy", "policy1")).toMatchObject({ inSync: true });
    },
  );

  it("a CNF that refuses our password: 503, status and logs without the password", async () => {
    const other = await world.createCnf("cnf2", {
      pods: 1,
      sim: { password: "another-password" },
    });
    await world.createRule("Mwan3Policy", "policy2", "cnf2", POLICY);
    const reply = await post(ref("Mwan3Policy", "policy2"));
    expect(reply.status).toBe(503);
    const view = await world.ruleView("Mwan3Policy", "policy2");
    expect(view?.message).toContain("login failed");
    expect(other.pods[0]?.sim.counters().failedLogins).toBeGreaterThan(0);
  });
});
