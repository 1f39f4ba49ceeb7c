// User story "Regulatory Compliance": an application owner allows access to an export in their
// namespace; the site administrator's PrivilegedAccessPolicy denies clients of a regulated
// namespace, and wins. clusterlink-authz answers from the live policies, naming the decider. The
// asking Peer is `east` (its dataplane's verified certificate, as the runtime passes it).
import { createClusterLinkAuthz } from "../../functions/clusterlink-authz/index.js";
import { ATTRIBUTES, DEFAULT_DENY } from "../../shared/clusterlink/index.js";
import { clusterLinkResource } from "../../shared/kube/index.js";
import type { HandlerContext } from "../../shared/runtime/function.js";
import { ClusterLinkWorld, DEFAULT_PEER } from "./clusterlink-harness.js";

const world = new ClusterLinkWorld();
const { kube, run } = world;
const authz = createClusterLinkAuthz({
  kube: () => kube,
  env: { CL_NAMESPACE: world.clNamespace },
});
const ctx = (): HandlerContext => ({
  correlationId: run,
  log: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
  calls: { api: 0, cnf: 0 },
  signal: new AbortController().signal,
  caller: { verified: true, names: [DEFAULT_PEER] },
});
const everyone = [{ workloadSelector: {} }];
// Only this file's Export is named, so its cluster-wide policy touches no other test.
const regulated = (ns: string) => ({
  from: [{ workloadSelector: { matchLabels: { [ATTRIBUTES.clientNamespace]: "regulated" } } }],
  to: [
    {
      workloadSelector: {
        matchLabels: { [ATTRIBUTES.exportNamespace]: ns, [ATTRIBUTES.exportName]: "db" },
      },
    },
  ],
});

let ns: string;
beforeAll(async () => {
  await world.setUp();
  ns = await world.namespace("cl-authz");
  await world.service(ns, "db", [5432]);
  await world.exportOf(ns, "db", { port: 5432 });
  await world.exportEvent(ns, "db");
  await kube.create(clusterLinkResource("AccessPolicy"), {
    metadata: { name: "allow-all", namespace: ns },
    spec: { action: "allow", from: everyone, to: everyone },
  });
});

const ask = (clientNamespace: string, namespace = ns) =>
  authz.handle(
    {
      source: { [ATTRIBUTES.clientNamespace]: clientNamespace },
      export: { name: "db", namespace },
    },
    ctx(),
  );

describe("Regulatory Compliance: a privileged deny beats a namespace allow", () => {
  it("the namespace allow decides while no privileged policy matches", async () => {
    expect(await ask("regulated")).toEqual({
      status: 200,
      body: {
        allowed: true,
        action: "allow",
        policy: `${ns}/allow-all`,
        tier: "namespaced",
        direction: "ingress",
        peer: DEFAULT_PEER,
        export: `${ns}/db`,
      },
    });
  });

  it("the administrator's PrivilegedAccessPolicy denies the regulated namespace, and only it", async () => {
    await kube.create(clusterLinkResource("PrivilegedAccessPolicy"), {
      metadata: { name: `no-regulated-${run}` },
      spec: { action: "deny", ...regulated(ns) },
    });
    expect((await ask("regulated")).body).toMatchObject({
      allowed: false,
      policy: `no-regulated-${run}`,
      tier: "privileged",
    });
    expect((await ask("open")).body).toMatchObject({ allowed: true, policy: `${ns}/allow-all` });
  });

  it("an export namespace without policies: default deny", async () => {
    const bare = await world.namespace("cl-authz-bare");
    await world.service(bare, "db", [5432]);
    await world.exportOf(bare, "db", { port: 5432 });
    await world.exportEvent(bare, "db");
    expect((await ask("open", bare)).body).toMatchObject({ allowed: false, policy: DEFAULT_DENY });
  });

  it("a malformed request is 400 naming the field", async () => {
    const reply = await authz.handle({ source: {}, export: { name: "db" } }, ctx());
    expect(reply).toMatchObject({ status: 400, body: { error: "bad-request" } });
    expect(JSON.stringify(reply.body)).toContain("export.namespace");
  });
});
