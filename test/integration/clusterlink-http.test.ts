// The ClusterLink functions served by the runtime (createFunctionApp) and driven over HTTP as
// Knative's ApiServerSource and the connector send: an Import event in binary Reference mode, an
// Export event in structured Resource mode, a Stalled Export answered 422, an unknown kind 400,
// and decision requests to clusterlink-authz without a client certificate.
import request from "supertest";
import { createClusterLinkAuthz } from "../../functions/clusterlink-authz/index.js";
import { createFunctionApp, createLogger, Runtime } from "../../shared/runtime/index.js";
import { ClusterLinkWorld, DEFAULT_PEER } from "./clusterlink-harness.js";

const world = new ClusterLinkWorld();
const runtime = new Runtime({ logger: createLogger({ level: "silent" }) });
const importApp = createFunctionApp(world.importer, runtime);
const exportApp = createFunctionApp(world.exporter, runtime);
let ns: string;

beforeAll(async () => {
  await world.setUp();
  ns = await world.namespace("http");
});

const binary = (app: Parameters<typeof request>[0], type: string, body: unknown) =>
  request(app)
    .post("/")
    .set({
      "content-type": "application/json",
      "ce-specversion": "1.0",
      "ce-id": `e-${Math.random()}`,
      "ce-source": "https://100.65.0.1:443",
      "ce-type": type,
    })
    .send(JSON.stringify(body));

describe("ClusterLink functions over HTTP", () => {
  it("an ApiServerSource Import event (binary, Reference mode): 202 and both Services", async () => {
    await world.importOf(ns, "web", { port: 80 });
    const ref = {
      apiVersion: "clusterlink.net/v1alpha1",
      kind: "Import",
      namespace: ns,
      name: "web",
    };
    const reply = await binary(importApp, "dev.knative.apiserver.ref.add", ref);
    expect(reply.status).toBe(202);
    expect((await world.getService(ns, "web"))?.spec?.type).toBe("ExternalName");
  });

  it("an Export event in structured Resource mode: 202 when valid, 422 (Stalled) when not", async () => {
    await world.service(ns, "api", [8080]);
    await world.exportOf(ns, "api", { port: 8080 });
    await world.exportOf(ns, "gone", { port: 8080 });
    const structured = (name: string) =>
      request(exportApp)
        .post("/")
        .set("content-type", "application/cloudevents+json; charset=utf-8")
        .send(
          JSON.stringify({
            specversion: "1.0",
            id: `e-${name}`,
            source: "https://100.65.0.1:443",
            type: "dev.knative.apiserver.resource.update",
            datacontenttype: "application/json",
            data: {
              apiVersion: "clusterlink.net/v1alpha1",
              kind: "Export",
              metadata: { name, namespace: ns },
            },
          }),
        );
    expect((await structured("api")).status).toBe(202);
    expect((await structured("gone")).status).toBe(422);
  });

  it("an event of a kind the function does not handle: 400", async () => {
    const ref = { apiVersion: "v1", kind: "Pod", namespace: ns, name: "p" };
    expect((await binary(importApp, "dev.knative.apiserver.ref.add", ref)).status).toBe(400);
  });

  it("clusterlink-authz over plain HTTP: 401 without a client certificate", async () => {
    const app = createFunctionApp(createClusterLinkAuthz({ kube: () => world.kube }), runtime);
    const reply = await request(app)
      .post("/")
      .set("content-type", "application/json")
      .send(JSON.stringify({ source: {}, export: { name: "api", namespace: ns } }));
    expect(reply.status).toBe(401);
    expect(reply.body).toMatchObject({ error: "unauthenticated" });
  });

  it("clusterlink-authz with CL_AUTHZ_UNVERIFIED=on-behalf-of-peer: decides for the Peer named, from its status", async () => {
    const env = { CL_NAMESPACE: world.clNamespace, CL_AUTHZ_UNVERIFIED: "on-behalf-of-peer" };
    const fn = createClusterLinkAuthz({ kube: () => world.kube, env });
    const app = createFunctionApp(fn, runtime);
    const ask = (body: unknown) =>
      request(app).post("/").set("content-type", "application/json").send(JSON.stringify(body));
    const exportRef = { name: "api", namespace: ns };
    expect((await ask({ export: exportRef })).status).toBe(400);
    const reply = await ask({ export: exportRef, peer: DEFAULT_PEER });
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      allowed: false,
      policy: "<default deny>",
      peer: DEFAULT_PEER,
      direction: "ingress",
    });
  });
});
