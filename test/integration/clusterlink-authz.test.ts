// User story "Regulatory Compliance": an application owner allows access to an export in their
// namespace; the site administrator's PrivilegedAccessPolicy denies clients of a regulated
// namespace, and wins. clusterlink-authz answers from the live policies, naming the decider.
import { randomBytes } from "node:crypto";
import { createClusterLinkAuthz } from "../../functions/clusterlink-authz/index.js";
import { ATTRIBUTES, DEFAULT_DENY } from "../../shared/clusterlink/index.js";
import { clusterLinkResource, createKubeClient } from "../../shared/kube/index.js";
import type { HandlerContext } from "../../shared/runtime/function.js";
import { adminKubeConfig, newNamespace } from "./support/cluster.js";

const kube = createKubeClient(adminKubeConfig());
const authz = createClusterLinkAuthz({ kube: () => kube });
const run = randomBytes(3).toString("hex");
const ctx = (): HandlerContext => ({
  correlationId: run,
  log: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
  calls: { api: 0, cnf: 0 },
  signal: new AbortController().signal,
});
const everyone = [{ workloadSelector: {} }];
// Only this file's requests carry the run attribute, so its cluster-wide policy touches no other test.
const regulated = [
  {
    workloadSelector: {
      matchLabels: { [ATTRIBUTES.clientNamespace]: "regulated", "test.clusterlink.net/run": run },
    },
  },
];

let ns: string;
beforeAll(async () => {
  ns = await newNamespace("cl-authz");
  await kube.create(clusterLinkResource("AccessPolicy"), {
    metadata: { name: "allow-all", namespace: ns },
    spec: { action: "allow", from: everyone, to: everyone },
  });
});

const ask = (clientNamespace: string) =>
  authz.handle(
    {
      source: { [ATTRIBUTES.clientNamespace]: clientNamespace, "test.clusterlink.net/run": run },
      export: { name: "db", namespace: ns },
    },
    ctx(),
  );

describe("Regulatory Compliance: a privileged deny beats a namespace allow", () => {
  it("the namespace allow decides while no privileged policy matches", async () => {
    expect(await ask("regulated")).toEqual({
      status: 200,
      body: { allowed: true, action: "allow", policy: `${ns}/allow-all`, tier: "namespaced" },
    });
  });

  it("the administrator's PrivilegedAccessPolicy denies the regulated namespace, and only it", async () => {
    await kube.create(clusterLinkResource("PrivilegedAccessPolicy"), {
      metadata: { name: `no-regulated-${run}` },
      spec: { action: "deny", from: regulated, to: everyone },
    });
    expect((await ask("regulated")).body).toMatchObject({
      allowed: false,
      policy: `no-regulated-${run}`,
      tier: "privileged",
    });
    expect((await ask("open")).body).toMatchObject({ allowed: true, policy: `${ns}/allow-all` });
  });

  it("an export namespace without policies: default deny", async () => {
    const reply = await authz.handle(
      {
        source: { [ATTRIBUTES.clientNamespace]: "open" },
        export: { name: "db", namespace: "elsewhere" },
      },
      ctx(),
    );
    expect(reply.body).toMatchObject({ allowed: false, policy: DEFAULT_DENY });
  });

  it("a malformed request is 400 naming the field", async () => {
    const reply = await authz.handle({ source: {}, export: { name: "db" } }, ctx());
    expect(reply).toMatchObject({ status: 400, body: { error: "bad-request" } });
    expect(JSON.stringify(reply.body)).toContain("export.namespace");
  });
});
