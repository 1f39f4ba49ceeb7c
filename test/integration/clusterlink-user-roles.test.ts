// The seed's people (design proposal, "Users") hold the ClusterRoles of
// manifests/rbac/clusterlink-user-roles.yaml, bound as its header says, each with a TokenRequest
// token of its own: what a site administrator and an application owner may do with ClusterLink,
// by real requests to the API server, and what each is refused (403), the functions' status
// writes and Secrets above all.
import { jest } from "@jest/globals";
import {
  clusterLinkResource,
  NAMESPACES,
  SECRETS,
  SERVICES,
  type KubeClient,
} from "../../shared/kube/index.js";
import { ClusterLinkWorld, EXPORTS, IMPORTS, PEERS } from "./clusterlink-harness.js";
import { allowed, refusal, userWithRoles, type Identity } from "./support/identity.js";

jest.setTimeout(60_000);

const FILE = "clusterlink-user-roles.yaml";
const ACCESS = clusterLinkResource("AccessPolicy");
const PRIVILEGED = clusterLinkResource("PrivilegedAccessPolicy");
const world = new ClusterLinkWorld();
/** The ClusterLink namespace these people are bound in (a stand-in: bindings are per namespace). */
let clNs: string;
/** The application owner's namespace, and one that is not theirs. */
let app: string;
let other: string;

const peerSpec = { gateways: [{ host: "gw.east.example.com", port: 443 }] };
const importSpec = (peer: string) => ({
  port: 5432,
  sources: [{ peer, exportName: "db", exportNamespace: "data" }],
});
const policySpec = {
  action: "allow",
  from: [{ workloadSelector: { matchLabels: { "peer.clusterlink.net/name": "east" } } }],
  to: [{ workloadSelector: {} }],
};
const ok = async (request: Promise<unknown>): Promise<string> => refusal(request);

beforeAll(async () => {
  await world.setUp();
  [clNs, app, other] = await Promise.all([
    world.namespace("cl-system"),
    world.namespace("cl-app"),
    world.namespace("cl-other"),
  ]);
  await world.kube.create(SECRETS, {
    metadata: { name: "peer-identity", namespace: clNs },
    stringData: { "tls.key": "not a key" },
  });
});

describe("site administrator: clusterlink-site-admin in the ClusterLink namespace, clusterlink-site-admin-cluster cluster-wide", () => {
  let admin: Identity;
  let kube: KubeClient;
  beforeAll(async () => {
    admin = await userWithRoles(FILE, [
      { role: "clusterlink-site-admin", namespace: clNs },
      { role: "clusterlink-site-admin-cluster" },
    ]);
    kube = admin.kube;
  });

  it("adds, changes and removes Peers of the ClusterLink namespace", async () => {
    const key = { namespace: clNs, name: "east" };
    expect(await ok(kube.create(PEERS, { metadata: key, spec: peerSpec }))).toBe("succeeded");
    const moved = { spec: { gateways: [{ host: "gw2.east.example.com", port: 443 }] } };
    expect(await ok(kube.mergePatch(PEERS, key, moved))).toBe("succeeded");
    expect(await ok(kube.list(PEERS, { namespace: clNs }))).toBe("succeeded");
    expect(await ok(kube.delete(PEERS, key))).toBe("succeeded");
  });

  it("writes PrivilegedAccessPolicies, and reads every namespace's Imports, Exports and AccessPolicies", async () => {
    const name = `admin-${world.run}`;
    const created = kube.create(PRIVILEGED, { metadata: { name }, spec: policySpec });
    expect(await ok(created)).toBe("succeeded");
    expect(await ok(kube.delete(PRIVILEGED, { name }))).toBe("succeeded");
    for (const type of [IMPORTS, EXPORTS, ACCESS]) {
      expect(await ok(kube.list(type))).toBe("succeeded");
    }
  });

  it("is refused: Peers elsewhere, a Peer's status, application owners' objects, Services, Secrets", async () => {
    const peerElsewhere = kube.create(PEERS, {
      metadata: { namespace: app, name: "east" },
      spec: peerSpec,
    });
    expect(await refusal(peerElsewhere)).toBe("forbidden 403");
    await world.kube.create(PEERS, { metadata: { namespace: clNs, name: "west" }, spec: peerSpec });
    const forged = kube.patchStatus(PEERS, { namespace: clNs, name: "west" }, { conditions: [] });
    expect(await refusal(forged)).toBe("forbidden 403");
    const anImport = kube.create(IMPORTS, {
      metadata: { namespace: app, name: "db" },
      spec: importSpec("east"),
    });
    expect(await refusal(anImport)).toBe("forbidden 403");
    const aService = kube.create(SERVICES, {
      metadata: { namespace: clNs, name: "sneaky" },
      spec: { ports: [{ port: 80 }] },
    });
    expect(await refusal(aService)).toBe("forbidden 403");
    const secret = kube.get(SECRETS, { namespace: clNs, name: "peer-identity" });
    expect(await refusal(secret)).toBe("forbidden 403");
    expect(await refusal(kube.list(NAMESPACES))).toBe("forbidden 403");
  });
});

describe("application owner: clusterlink-application-owner in their namespace, clusterlink-peer-reader in the ClusterLink namespace", () => {
  let owner: Identity;
  let kube: KubeClient;
  beforeAll(async () => {
    owner = await userWithRoles(FILE, [
      { role: "clusterlink-application-owner", namespace: app },
      { role: "clusterlink-peer-reader", namespace: clNs },
    ]);
    kube = owner.kube;
    await world.kube.create(PEERS, {
      metadata: { namespace: clNs, name: "north" },
      spec: peerSpec,
    });
  });

  it("exports, imports and writes AccessPolicies in their namespace, and reads the Peers", async () => {
    const at = (name: string) => ({ namespace: app, name });
    expect(await ok(kube.create(EXPORTS, { metadata: at("db"), spec: { port: 5432 } }))).toBe(
      "succeeded",
    );
    expect(
      await ok(kube.create(IMPORTS, { metadata: at("cache"), spec: importSpec("north") })),
    ).toBe("succeeded");
    expect(await ok(kube.create(ACCESS, { metadata: at("allow-east"), spec: policySpec }))).toBe(
      "succeeded",
    );
    expect(await ok(kube.mergePatch(IMPORTS, at("cache"), { spec: { lbScheme: "static" } }))).toBe(
      "succeeded",
    );
    expect(await ok(kube.get(IMPORTS, at("cache")))).toBe("succeeded");
    expect((await kube.list(PEERS, { namespace: clNs })).map((p) => p.metadata.name)).toContain(
      "north",
    );
    expect(await ok(kube.delete(EXPORTS, at("db")))).toBe("succeeded");
  });

  it("is refused: another namespace, Peers' writes, PrivilegedAccessPolicies, status, Services, Secrets", async () => {
    const elsewhere = kube.create(IMPORTS, {
      metadata: { namespace: other, name: "db" },
      spec: importSpec("north"),
    });
    expect(await refusal(elsewhere)).toBe("forbidden 403");
    const peer = kube.create(PEERS, {
      metadata: { namespace: clNs, name: "mine" },
      spec: peerSpec,
    });
    expect(await refusal(peer)).toBe("forbidden 403");
    const movePeer = kube.mergePatch(PEERS, { namespace: clNs, name: "north" }, { spec: peerSpec });
    expect(await refusal(movePeer)).toBe("forbidden 403");
    const privileged = kube.create(PRIVILEGED, {
      metadata: { name: `owner-${world.run}` },
      spec: policySpec,
    });
    expect(await refusal(privileged)).toBe("forbidden 403");
    expect(await refusal(kube.list(PRIVILEGED))).toBe("forbidden 403");
    await world.kube.create(IMPORTS, {
      metadata: { namespace: app, name: "forged" },
      spec: importSpec("north"),
    });
    const forged = kube.patchStatus(
      IMPORTS,
      { namespace: app, name: "forged" },
      { conditions: [] },
    );
    expect(await refusal(forged)).toBe("forbidden 403");
    const aService = kube.create(SERVICES, {
      metadata: { namespace: app, name: "forged" },
      spec: { type: "ExternalName", externalName: "elsewhere.example" },
    });
    expect(await refusal(aService)).toBe("forbidden 403");
    expect(await refusal(kube.get(SECRETS, { namespace: clNs, name: "peer-identity" }))).toBe(
      "forbidden 403",
    );
  });

  it("can do nothing else with ClusterLink in the ClusterLink namespace (asked as kubectl auth can-i)", async () => {
    for (const resource of ["imports", "exports", "accesspolicies"]) {
      for (const verb of ["create", "delete"]) {
        const may = await allowed(owner.kc, {
          group: "clusterlink.net",
          resource,
          verb,
          namespace: clNs,
        });
        expect([resource, verb, may]).toEqual([resource, verb, false]);
      }
    }
  });
});
