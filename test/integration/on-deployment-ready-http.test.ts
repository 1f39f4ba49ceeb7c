// on-deployment-ready served by the runtime (createFunctionApp) and driven over HTTP, as Knative
// (ApiServerSource, PingSource) and the connector send: a Deployment event in binary mode, a Pod
// event in structured Resource mode, the project's resync event and a PingSource tick, and
// resync scopes that must be refused with 400.
import { jest } from "@jest/globals";
import request from "supertest";
import { RESYNC_EVENT_TYPE } from "../../shared/events/types.js";
import {
  createFunctionApp,
  createLogger,
  Runtime,
  type FunctionApp,
} from "../../shared/runtime/index.js";
import type { Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(60_000);

const PURPOSE = "cnf1";
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };

describe("on-deployment-ready over HTTP", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let app: FunctionApp;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    const logger = createLogger({ level: "silent" });
    app = createFunctionApp(world.onDeploymentReady, new Runtime({ logger }));
  });
  afterEach(() => world.close());

  const binary = (type: string, body: unknown, extra: Record<string, string> = {}) =>
    request(app)
      .post("/")
      .set({
        "content-type": "application/json",
        "ce-specversion": "1.0",
        "ce-id": `e-${Math.random()}`,
        "ce-source": "https://100.65.0.1:443",
        "ce-type": type,
        ...extra,
      })
      .send(JSON.stringify(body));

  it("an ApiServerSource Deployment event (binary, Reference mode): 202, empty body, CNF converged", async () => {
    const reply = await binary("dev.knative.apiserver.ref.update", {
      apiVersion: "apps/v1",
      kind: "Deployment",
      namespace: world.namespace,
      name: cnf.name,
    });
    expect(reply.status).toBe(202);
    expect(reply.text).toBe("");
    expect(reply.headers["x-sdewan-reason"]).toBe("created");
    expect(world.held(cnf, "mwan3/policies")).toEqual([["policy1"], ["policy1"]]);
  });

  it("a Pod event in structured Resource mode: 202", async () => {
    const pod = cnf.pods[0];
    const object = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: pod?.name, namespace: world.namespace, labels: { sdewanPurpose: PURPOSE } },
    };
    const reply = await request(app)
      .post("/")
      .set("content-type", "application/cloudevents+json; charset=utf-8")
      .send(
        JSON.stringify({
          specversion: "1.0",
          id: "e-2",
          source: "https://100.65.0.1:443",
          type: "dev.knative.apiserver.resource.update",
          datacontenttype: "application/json",
          data: object,
        }),
      );
    expect(reply.status).toBe(202);
    expect(world.held(cnf, "mwan3/policies")).toEqual([["policy1"], ["policy1"]]);
  });

  it("the connector's resync event and a PingSource tick, scoped to the namespace: 202", async () => {
    const resync = await binary(RESYNC_EVENT_TYPE, { namespace: world.namespace });
    expect(resync.status).toBe(202);
    expect(resync.headers["x-sdewan-reason"]).toBe("created");
    const ping = await binary(
      "dev.knative.sources.ping",
      { namespace: world.namespace, purpose: PURPOSE },
      { "ce-source": "/apis/v1/namespaces/sdewan-system/pingsources/sdewan-resync" },
    );
    expect(ping.status).toBe(202);
    expect(ping.headers["x-sdewan-reason"]).toBe("unchanged");
  });

  it.each([
    ["an unknown scope field", { namespaces: ["a"] }],
    ["a purpose without a namespace", { purpose: PURPOSE }],
    ["a namespace that cannot exist", { namespace: "Not_Valid" }],
    ["a scope that is not an object", ["ns1"]],
  ])("a resync with %s: 400, nothing done", async (_title, scope) => {
    const reply = await binary(RESYNC_EVENT_TYPE, scope);
    expect(reply.status).toBe(400);
    expect(reply.headers["x-sdewan-outcome"]).toBe("malformed");
    expect(world.held(cnf, "mwan3/policies")).toEqual([[], []]);
  });
});
