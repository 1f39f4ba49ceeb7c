// Least privilege for the ClusterLink functions, proved against the real API server like
// rbac.test.ts: each runs its happy path as a service account holding exactly its ClusterRole
// from manifests/rbac (TokenRequest token), anything outside the role is refused with 403, and
// without one of its permissions the scenario fails and writes nothing.
import { jest } from "@jest/globals";
import { createClusterLinkAuthz } from "../../functions/clusterlink-authz/index.js";
import { createClusterLinkPeerHealth } from "../../functions/clusterlink-peer-health/index.js";
import { MERGE_LABEL } from "../../shared/clusterlink/index.js";
import {
  clusterLinkResource,
  ENDPOINT_SLICES,
  NAMESPACES,
  SERVICES,
} from "../../shared/kube/index.js";
import {
  ClusterLinkWorld,
  DEFAULT_PEER,
  EXPORTS,
  IMPORTS,
  objectEvent,
  PEERS,
} from "./clusterlink-harness.js";
import { identityFrom, refusal } from "./support/identity.js";

jest.setTimeout(60_000);

const world = new ClusterLinkWorld();
let ns: string;

beforeAll(async () => {
  await world.setUp();
  ns = await world.namespace("rbac-cl");
  await world.service(ns, "db", [5432]);
});

describe("clusterlink-export runs with exactly manifests/rbac/clusterlink-export.yaml", () => {
  it("verifies an Export and writes its status", async () => {
    const { kube } = await identityFrom("clusterlink-export.yaml");
    await world.exportOf(ns, "db", { port: 5432 });
    const fn = world.instance("export", kube);
    expect(await world.send(fn, exportRef("db"))).toMatchObject({ kind: "done" });
    expect((await world.conditions(EXPORTS, ns, "db"))["ExportValid"]?.status).toBe("True");
  });

  it("is refused (403) any write besides Export status: a Service, an Export's spec", async () => {
    const { kube } = await identityFrom("clusterlink-export.yaml");
    expect(await refusal(kube.delete(SERVICES, { namespace: ns, name: "db" }))).toBe(
      "forbidden 403",
    );
    const patch = { spec: { port: 1 } };
    expect(await refusal(kube.mergePatch(EXPORTS, { namespace: ns, name: "db" }, patch))).toBe(
      "forbidden 403",
    );
  });
});

describe("clusterlink-import runs with exactly manifests/rbac/clusterlink-import.yaml", () => {
  it("leases, creates both Services, and removes them on delete", async () => {
    const { kube } = await identityFrom("clusterlink-import.yaml");
    const fn = world.instance("import", kube);
    await world.importOf(ns, "cache", { port: 6379 });
    expect(await world.importEvent(ns, "cache", "add", fn)).toMatchObject({ kind: "done" });
    expect((await world.getService(ns, "cache"))?.spec?.type).toBe("ExternalName");
    await world.kube.delete(IMPORTS, { namespace: ns, name: "cache" });
    expect(await world.importEvent(ns, "cache", "delete", fn)).toMatchObject({ kind: "done" });
    expect(await world.getService(ns, "cache")).toBeUndefined();
    expect(await world.resync(fn)).toMatchObject({ kind: "done" });
  });

  it("merge mode: copies a dataplane EndpointSlice next to the user's Service, and removes it on delete", async () => {
    const { kube } = await identityFrom("clusterlink-import.yaml");
    const fn = world.instance("import", kube);
    const slice = `dp-rbac-${world.run}`;
    await world.kube.create(ENDPOINT_SLICES, {
      metadata: {
        name: slice,
        namespace: world.clNamespace,
        labels: { "kubernetes.io/service-name": "clusterlink" },
      },
      addressType: "IPv4",
      endpoints: [{ addresses: ["192.0.2.30"] }],
      ports: [{ port: 8443, protocol: "TCP" }],
    });
    await world.service(ns, "merged", [6380]);
    await world.kube.create(IMPORTS, {
      metadata: { name: "merged", namespace: ns, labels: { [MERGE_LABEL]: "true" } },
      spec: { port: 6380, sources: [{ peer: "east", exportName: "merged", exportNamespace: "x" }] },
    });
    const copy = { namespace: ns, name: `clusterlink-6-merged-${slice}` };
    expect(await world.importEvent(ns, "merged", "add", fn)).toMatchObject({ kind: "done" });
    expect(await world.kube.get(ENDPOINT_SLICES, copy)).toBeDefined();
    await world.kube.delete(IMPORTS, { namespace: ns, name: "merged" });
    expect(await world.importEvent(ns, "merged", "delete", fn)).toMatchObject({ kind: "done" });
    expect(await world.kube.get(ENDPOINT_SLICES, copy)).toBeUndefined();
    await world.kube.delete(ENDPOINT_SLICES, { namespace: world.clNamespace, name: slice });
  });

  it("is refused (403) writes outside its role: a Namespace, an Export", async () => {
    const { kube } = await identityFrom("clusterlink-import.yaml");
    const label = { metadata: { labels: { touched: "yes" } } };
    expect(await refusal(kube.mergePatch(NAMESPACES, { name: ns }, label))).toBe("forbidden 403");
    expect(await refusal(kube.delete(EXPORTS, { namespace: ns, name: "db" }))).toBe(
      "forbidden 403",
    );
  });

  it("a Peer's event re-reports the Imports naming it (Imports listed, Peers read); a Peer's status is refused (403)", async () => {
    const { kube } = await identityFrom("clusterlink-import.yaml");
    const fn = world.instance("import", kube);
    const peer = `rbac-peer-${world.run}`;
    await world.kube.create(PEERS, {
      metadata: { name: peer, namespace: world.clNamespace },
      spec: { gateways: [{ host: "127.0.0.1", port: 1 }] },
    });
    const sources = [{ peer, exportName: "db", exportNamespace: "x" }];
    await world.importOf(ns, "remote", { port: 7000, sources });
    expect(await world.importEvent(ns, "remote", "add", fn)).toMatchObject({ kind: "done" });
    await world.peerReachable(peer, false, "timeout");
    const ref = { apiVersion: "clusterlink.net/v1alpha1", kind: "Peer" };
    const event = objectEvent("update", { ...ref, namespace: world.clNamespace, name: peer });
    expect(await world.send(fn, event)).toMatchObject({ kind: "done" });
    expect((await world.conditions(IMPORTS, ns, "remote"))["Ready"]).toMatchObject({
      status: "False",
      reason: "NoUsableSource",
    });
    const patch = { status: { conditions: [] } };
    expect(
      await refusal(
        kube.patchStatus(PEERS, { namespace: world.clNamespace, name: peer }, patch.status),
      ),
    ).toBe("forbidden 403");
  });

  it("without Service create it does not finish, and no Service appears", async () => {
    const { kube } = await identityFrom("clusterlink-import.yaml", {
      group: "",
      resource: "services",
      verb: "create",
    });
    const fn = world.instance("import", kube);
    await world.importOf(ns, "queue", { port: 5672 });
    expect((await world.importEvent(ns, "queue", "add", fn)).kind).not.toBe("done");
    expect(await world.getService(ns, "queue")).toBeUndefined();
  });
});

function exportRef(name: string) {
  return {
    type: "object" as const,
    id: `rbac-${name}`,
    action: "update" as const,
    ref: { apiVersion: "clusterlink.net/v1alpha1", kind: "Export", namespace: ns, name },
  };
}

describe("clusterlink-authz runs with exactly manifests/rbac/clusterlink-authz.yaml", () => {
  it("answers a decision from what it names, and is refused (403) every write but a policy's status", async () => {
    const { kube } = await identityFrom("clusterlink-authz.yaml");
    const fn = createClusterLinkAuthz({
      kube: () => kube,
      env: { CL_NAMESPACE: world.clNamespace },
    });
    const reply = await fn.handle(
      { source: {}, export: { name: "db", namespace: ns } },
      {
        correlationId: "rbac",
        log: silent,
        calls: { api: 0, cnf: 0 },
        signal: new AbortController().signal,
        caller: { verified: true, names: [DEFAULT_PEER] },
      },
    );
    expect(reply).toMatchObject({ status: 200, body: { allowed: false, peer: DEFAULT_PEER } });
    const policies = clusterLinkResource("AccessPolicy");
    const policy = {
      metadata: { name: "p", namespace: ns },
      spec: { action: "allow", from: [], to: [] },
    };
    expect(await refusal(kube.create(policies, policy))).toBe("forbidden 403");
    await world.kube.create(policies, policy);
    const key = { namespace: ns, name: "p" };
    expect(await refusal(kube.mergePatch(policies, key, { spec: { action: "deny" } }))).toBe(
      "forbidden 403",
    );
    const peer = { namespace: world.clNamespace, name: DEFAULT_PEER };
    expect(await refusal(kube.patchStatus(PEERS, peer, { labels: { forged: "yes" } }))).toBe(
      "forbidden 403",
    );
    expect(await refusal(kube.patchStatus(EXPORTS, { namespace: ns, name: "db" }, {}))).toBe(
      "forbidden 403",
    );
  });
});

const silent = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

describe("clusterlink-peer-health runs with exactly manifests/rbac/clusterlink-peer-health.yaml", () => {
  it("writes Peer status (a Peer that never answered), and is refused (403) a Peer's spec", async () => {
    const { kube } = await identityFrom("clusterlink-peer-health.yaml");
    const peers = clusterLinkResource("Peer");
    const name = `rbac-${world.run}`;
    await world.kube.create(peers, {
      metadata: { name, namespace: world.clNamespace },
      spec: { gateways: [{ host: "127.0.0.1", port: 1 }] },
    });
    const fn = createClusterLinkPeerHealth({
      kube: () => kube,
      env: { CL_NAMESPACE: world.clNamespace, CL_PEER_TLS_DIR: "/nonexistent" },
    });
    const event = {
      type: "object" as const,
      id: "rbac-peer",
      action: "update" as const,
      ref: {
        apiVersion: "clusterlink.net/v1alpha1",
        kind: "Peer",
        namespace: world.clNamespace,
        name,
      },
    };
    // No client identity mounted: the status says so, written with the role's status permission.
    expect(await world.send(fn, event)).toMatchObject({ kind: "retry" });
    const conditions = await world.conditions(peers, world.clNamespace, name);
    expect(conditions["Stalled"]?.reason).toBe("TlsMaterialMissing");
    const patch = { spec: { gateways: [] } };
    expect(
      await refusal(kube.mergePatch(peers, { namespace: world.clNamespace, name }, patch)),
    ).toBe("forbidden 403");
  });
});
