// RBAC lets clusterlink-import write any Service and any EndpointSlice, in any namespace (an
// Import's Services and merge copies live in the Import's namespace, which can be any), and on
// OpenFaaS CE every function shares that grant through openfaas-fn/default. The
// ValidatingAdmissionPolicy of manifests/rbac/service-writes-policy.yaml (installed with the
// run's control plane) narrows it: those accounts, each with its own token here, create, change
// and delete only objects carrying our managed-by label, never adopt one or drop the label, never
// touch the API server's own Service, and the function's own work still goes through. Someone
// else holding the same role is not matched. Addresses are TEST-NET (192.0.2.0/24,
// 203.0.113.0/24): only data, no proxy routes them.
import { jest } from "@jest/globals";
import { RbacAuthorizationV1Api } from "@kubernetes/client-node";
import {
  DATAPLANE_SERVICE_NAME,
  MANAGED_BY,
  MANAGED_BY_LABEL,
  MERGE_LABEL,
  SERVICE_NAME_LABEL,
  SLICE_MANAGED_BY_LABEL,
  systemServiceName,
} from "../../shared/clusterlink/index.js";
import {
  ENDPOINT_SLICES,
  SERVICES,
  type KubeObject,
  type ObjectKey,
} from "../../shared/kube/index.js";
import { pollUntil } from "../../dev/control-plane/api.js";
import { ClusterLinkWorld, IMPORTS, objectEvent } from "./clusterlink-harness.js";
import { adminKubeConfig } from "./support/cluster.js";
import {
  allowed,
  identityFrom,
  openFaasCeAccount,
  refusalMessage,
  userWithRoles,
  type Identity,
} from "./support/identity.js";

jest.setTimeout(90_000);

/** How the API server words a denial by this policy (not RBAC's "cannot create resource"). */
const DENIED_BY_POLICY = /403 Forbidden: .*ValidatingAdmissionPolicy 'sdewan-service-writes'/;

const world = new ClusterLinkWorld();
const API_SERVICE = { namespace: "default", name: "kubernetes" };
let userNs: string;
let serial = 0;
/** Whatever an attempt left behind if it was not refused, removed after each test. */
const leftovers: { type: typeof SERVICES | typeof ENDPOINT_SLICES; key: ObjectKey }[] = [];

interface Slice extends KubeObject {
  endpoints?: { addresses: string[] }[];
}

const addressesOf = async (key: ObjectKey): Promise<string[] | undefined> =>
  (await world.kube.get<Slice>(ENDPOINT_SLICES, key))?.endpoints?.flatMap((e) => e.addresses);

const unique = (base: string): string => `${base}-${world.run}-${++serial}`;

function slice(
  namespace: string,
  name: string,
  labels: Record<string, string>,
  ip: string,
): KubeObject & { metadata: { name: string; namespace: string } } {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name, namespace, labels },
    addressType: "IPv4",
    endpoints: [{ addresses: [ip] }],
    ports: [{ name: "https", port: 443, protocol: "TCP" }],
  };
}

/** A Service of someone else's, without our label, and its EndpointSlice. */
async function usersService(): Promise<{ service: ObjectKey; slice: ObjectKey }> {
  const name = unique("web");
  await world.service(userNs, name, [80]);
  const key = { namespace: userNs, name: `${name}-1` };
  await world.kube.create(
    ENDPOINT_SLICES,
    slice(userNs, key.name, { [SERVICE_NAME_LABEL]: name }, "192.0.2.80"),
  );
  return { service: { namespace: userNs, name }, slice: key };
}

beforeAll(async () => {
  await world.setUp();
  userNs = await world.namespace("svc-writes-user");
});

afterEach(async () => {
  for (const { type, key } of leftovers.splice(0)) await world.kube.delete(type, key);
  // An attempt on the API server's Service that went through is undone.
  const api = await world.kube.get(SERVICES, API_SERVICE);
  if (api?.metadata.labels?.[MANAGED_BY_LABEL] !== undefined || api?.spec?.selector) {
    await world.kube.mergePatch(SERVICES, API_SERVICE, {
      metadata: { labels: { [MANAGED_BY_LABEL]: null } },
      spec: { selector: null },
    });
  }
  if ((api?.status as { conditions?: unknown[] } | undefined)?.conditions !== undefined) {
    await world.kube.patchStatus(SERVICES, API_SERVICE, { conditions: null });
  }
});

describe.each([
  ["clusterlink-import's own account", () => identityFrom("clusterlink-import.yaml")],
  ["OpenFaaS CE's shared account openfaas-fn/default", openFaasCeAccount],
])("as %s", (_, identity: () => Promise<Identity>) => {
  let id: Identity;

  beforeAll(async () => {
    id = await identity();
  });

  it("may not create an EndpointSlice that points default/kubernetes elsewhere, labelled ours or not", async () => {
    const attempts: Record<string, string>[] = [
      { [SERVICE_NAME_LABEL]: "kubernetes" },
      { [SERVICE_NAME_LABEL]: "kubernetes", [SLICE_MANAGED_BY_LABEL]: MANAGED_BY },
    ];
    for (const labels of attempts) {
      const hijack = slice("default", unique("kubernetes-hijack"), labels, "203.0.113.66");
      leftovers.push({ type: ENDPOINT_SLICES, key: hijack.metadata });
      expect(await refusalMessage(id.kube.create(ENDPOINT_SLICES, hijack))).toMatch(
        DENIED_BY_POLICY,
      );
    }
  });

  it("may not label, patch or delete the default/kubernetes Service", async () => {
    const label = { metadata: { labels: { [MANAGED_BY_LABEL]: MANAGED_BY } } };
    expect(await refusalMessage(id.kube.mergePatch(SERVICES, API_SERVICE, label))).toMatch(
      DENIED_BY_POLICY,
    );
    const retarget = { spec: { selector: { app: "attacker" } } };
    expect(await refusalMessage(id.kube.mergePatch(SERVICES, API_SERVICE, retarget))).toMatch(
      DENIED_BY_POLICY,
    );
    expect(await refusalMessage(id.kube.delete(SERVICES, API_SERVICE))).toMatch(DENIED_BY_POLICY);
    const api = await world.kube.get(SERVICES, API_SERVICE);
    expect([api?.metadata.labels?.[MANAGED_BY_LABEL], api?.spec?.selector]).toEqual([
      undefined,
      undefined,
    ]);
  });

  it("may not patch or delete a user's unlabelled Service or EndpointSlice in another namespace", async () => {
    const user = await usersService();
    const retarget = { spec: { selector: { app: "attacker" } } };
    expect(await refusalMessage(id.kube.mergePatch(SERVICES, user.service, retarget))).toMatch(
      DENIED_BY_POLICY,
    );
    expect(await refusalMessage(id.kube.delete(SERVICES, user.service))).toMatch(DENIED_BY_POLICY);
    const elsewhere = { endpoints: [{ addresses: ["203.0.113.66"] }] };
    expect(
      await refusalMessage(id.kube.mergePatch(ENDPOINT_SLICES, user.slice, elsewhere)),
    ).toMatch(DENIED_BY_POLICY);
    expect(await refusalMessage(id.kube.delete(ENDPOINT_SLICES, user.slice))).toMatch(
      DENIED_BY_POLICY,
    );
    expect((await world.getService(userNs, user.service.name))?.spec?.selector).toEqual({
      app: user.service.name,
    });
    expect(await addressesOf(user.slice)).toEqual(["192.0.2.80"]);
  });

  it("may not adopt a user's Service or EndpointSlice by adding our label", async () => {
    const user = await usersService();
    const adopt = (label: string) => ({ metadata: { labels: { [label]: MANAGED_BY } } });
    expect(
      await refusalMessage(id.kube.mergePatch(SERVICES, user.service, adopt(MANAGED_BY_LABEL))),
    ).toMatch(DENIED_BY_POLICY);
    expect(
      await refusalMessage(
        id.kube.mergePatch(ENDPOINT_SLICES, user.slice, adopt(SLICE_MANAGED_BY_LABEL)),
      ),
    ).toMatch(DENIED_BY_POLICY);
    expect((await world.getService(userNs, user.service.name))?.metadata.labels ?? {}).toEqual({});
  });

  it("may make, change and delete an object carrying our label, but not drop or change the label", async () => {
    const name = unique("ours");
    const ours = { namespace: userNs, name };
    leftovers.push({ type: SERVICES, key: ours });
    await id.kube.create(SERVICES, {
      metadata: { name, namespace: userNs, labels: { [MANAGED_BY_LABEL]: MANAGED_BY } },
      spec: { type: "ExternalName", externalName: "db.example.org" },
    });
    await id.kube.mergePatch(SERVICES, ours, { spec: { externalName: "db2.example.org" } });
    for (const value of [null, "someone-else"]) {
      const drop = { metadata: { labels: { [MANAGED_BY_LABEL]: value } } };
      expect(await refusalMessage(id.kube.mergePatch(SERVICES, ours, drop))).toMatch(
        DENIED_BY_POLICY,
      );
    }
    const copy = slice(userNs, name, { [SLICE_MANAGED_BY_LABEL]: MANAGED_BY }, "192.0.2.90");
    leftovers.push({ type: ENDPOINT_SLICES, key: copy.metadata });
    await id.kube.create(ENDPOINT_SLICES, copy);
    const drop = { metadata: { labels: { [SLICE_MANAGED_BY_LABEL]: null } } };
    expect(await refusalMessage(id.kube.mergePatch(ENDPOINT_SLICES, copy.metadata, drop))).toMatch(
      DENIED_BY_POLICY,
    );
    expect(await id.kube.delete(ENDPOINT_SLICES, copy.metadata)).toBe(true);
    expect(await id.kube.delete(SERVICES, ours)).toBe(true);
  });

  it("may not give a Service external IPs or a node port, labelled ours or not", async () => {
    const labels = { [MANAGED_BY_LABEL]: MANAGED_BY };
    const ports = [{ port: 443, protocol: "TCP" }];
    for (const spec of [
      { type: "ClusterIP", ports, externalIPs: ["203.0.113.10"] },
      { type: "NodePort", ports },
    ]) {
      const name = unique("exposed");
      leftovers.push({ type: SERVICES, key: { namespace: userNs, name } });
      const service = { metadata: { name, namespace: userNs, labels }, spec };
      expect(await refusalMessage(id.kube.create(SERVICES, service))).toMatch(DENIED_BY_POLICY);
    }
  });

  it("an Import's two Services are made, changed and removed as this account", async () => {
    const fn = world.instance("import", id.kube);
    const ns = await world.namespace("svc-writes-import");
    await world.importOf(ns, "cache", { port: 6379 });
    expect(await world.importEvent(ns, "cache", "add", fn)).toMatchObject({ kind: "done" });
    const system = {
      namespace: world.clNamespace,
      name: systemServiceName({ namespace: ns, name: "cache" }, world.clNamespace),
    };
    expect((await world.getService(ns, "cache"))?.spec?.type).toBe("ExternalName");
    await world.kube.mergePatch(
      IMPORTS,
      { namespace: ns, name: "cache" },
      { spec: { port: 6380 } },
    );
    expect(await world.importEvent(ns, "cache", "update", fn)).toMatchObject({ kind: "done" });
    const changed = await world.kube.get(SERVICES, system);
    expect(changed?.spec?.ports?.map((p) => p.port)).toEqual([6380]);
    await world.kube.delete(IMPORTS, { namespace: ns, name: "cache" });
    expect(await world.importEvent(ns, "cache", "delete", fn)).toMatchObject({ kind: "done" });
    expect(await world.getService(ns, "cache")).toBeUndefined();
    expect(await world.kube.get(SERVICES, system)).toBeUndefined();
  });

  it("a merge Import's EndpointSlice copy is made, changed and removed as this account", async () => {
    const fn = world.instance("import", id.kube);
    const ns = await world.namespace("svc-writes-merge");
    const dataplane = unique("dp-svc-writes");
    const source = { namespace: world.clNamespace, name: dataplane };
    leftovers.push({ type: ENDPOINT_SLICES, key: source });
    await world.kube.create(
      ENDPOINT_SLICES,
      slice(
        world.clNamespace,
        dataplane,
        { [SERVICE_NAME_LABEL]: DATAPLANE_SERVICE_NAME },
        "192.0.2.30",
      ),
    );
    await world.service(ns, "merged", [6390]);
    await world.kube.create(IMPORTS, {
      metadata: { name: "merged", namespace: ns, labels: { [MERGE_LABEL]: "true" } },
      spec: { port: 6390, sources: [{ peer: "east", exportName: "merged", exportNamespace: "x" }] },
    });
    const copy = { namespace: ns, name: `clusterlink-6-merged-${dataplane}` };
    expect(await world.importEvent(ns, "merged", "add", fn)).toMatchObject({ kind: "done" });
    expect(await addressesOf(copy)).toEqual(["192.0.2.30"]);
    await world.kube.mergePatch(ENDPOINT_SLICES, source, {
      endpoints: [{ addresses: ["192.0.2.31"] }],
    });
    const sliceEvent = objectEvent("update", {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      ...source,
    });
    expect(await world.send(fn, sliceEvent)).toMatchObject({ kind: "done" });
    expect(await addressesOf(copy)).toEqual(["192.0.2.31"]);
    await world.kube.delete(IMPORTS, { namespace: ns, name: "merged" });
    expect(await world.importEvent(ns, "merged", "delete", fn)).toMatchObject({ kind: "done" });
    expect(await world.kube.get(ENDPOINT_SLICES, copy)).toBeUndefined();
  });
});

describe("the status subresource", () => {
  it("clusterlink-import's account, even granted services/status, may not write default/kubernetes' status", async () => {
    const id = await identityFrom("clusterlink-import.yaml");
    const [, , namespace = "", account = ""] = id.user.split(":");
    const name = unique("services-status");
    const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({
      body: {
        metadata: { name },
        rules: [{ apiGroups: [""], resources: ["services/status"], verbs: ["get", "patch"] }],
      },
    });
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
        subjects: [{ kind: "ServiceAccount", name: account, namespace }],
      },
    });
    const probe = { group: "", resource: "services", subresource: "status", verb: "patch" };
    await pollUntil(
      async () => ((await allowed(id.kc, probe)) ? true : undefined),
      () => `services/status patch to be granted to ${id.user}`,
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const condition = {
      type: "Hijacked",
      status: "True",
      reason: "Test",
      message: "",
      lastTransitionTime: new Date().toISOString(),
    };
    expect(
      await refusalMessage(id.kube.patchStatus(SERVICES, API_SERVICE, { conditions: [condition] })),
    ).toMatch(DENIED_BY_POLICY);
    const api = await world.kube.get(SERVICES, API_SERVICE);
    expect((api?.status as { conditions?: unknown[] } | undefined)?.conditions ?? []).toEqual([]);
  });
});

describe("someone else holding clusterlink-import's ClusterRole", () => {
  it("is not matched: may relabel a user's Service and write a slice for default/kubernetes", async () => {
    const person = await userWithRoles("clusterlink-import.yaml", [
      { role: "sdewan-clusterlink-import" },
    ]);
    const user = await usersService();
    const relabel = { metadata: { labels: { [MANAGED_BY_LABEL]: MANAGED_BY } } };
    await person.kube.mergePatch(SERVICES, user.service, relabel);
    expect((await world.getService(userNs, user.service.name))?.metadata.labels).toEqual({
      [MANAGED_BY_LABEL]: MANAGED_BY,
    });
    const hijack = slice(
      "default",
      unique("kubernetes-other"),
      { [SERVICE_NAME_LABEL]: "kubernetes" },
      "203.0.113.67",
    );
    leftovers.push({ type: ENDPOINT_SLICES, key: hijack.metadata });
    await person.kube.create(ENDPOINT_SLICES, hijack);
    expect(await world.kube.get(ENDPOINT_SLICES, hijack.metadata)).toBeDefined();
  });
});
