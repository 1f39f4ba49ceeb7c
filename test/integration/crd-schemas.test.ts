// The API server as the judge of the generated CRDs, instead of a copy of the generator's rules.
// Every file of manifests/crds is created fresh under an API group of this test's own (so no other
// test's objects, webhooks or watches meet these), must be accepted and Established with no
// NonStructuralSchema condition, and then validates objects itself: every sample is stored as it
// was sent, and specific invalid objects are refused or pruned.
import { randomBytes } from "node:crypto";
import { apiRequest, type ApiResponse } from "../../dev/control-plane/api.js";
import { applyCrds, type Crd, readCrdDir } from "../../dev/control-plane/crds.js";
import { defaultCrdDir } from "../../dev/control-plane/control-plane.js";
import {
  CLUSTERLINK_SAMPLES as CLUSTERLINK_MANIFEST_SAMPLES,
  MANIFEST_SAMPLES,
  SEED_SAMPLES,
} from "../unit/kinds/yaml-docs.js";
import {
  compileObjects,
  desiredEndpointTable,
  desiredPeerSetTable,
} from "../../shared/netpol/index.js";
import { endpoint, newNamespace } from "./support/cluster.js";
import { storeUnvalidated } from "./support/unvalidated.js";

const CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

interface CrdVersion {
  name: string;
  subresources?: { status?: object };
}
interface CrdManifest {
  metadata: { name: string };
  spec: {
    group: string;
    scope: "Namespaced" | "Cluster";
    names: { kind: string; plural: string };
    versions: CrdVersion[];
  };
}
interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}
interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: unknown;
  status?: unknown;
}
interface StatusCause {
  reason?: string;
  field?: string;
}
interface Status {
  kind: "Status";
  code: number;
  reason: string;
  message: string;
  details?: { causes?: StatusCause[] };
}

/** A group no other test uses: `t<hex>.<the CRD's group>`. */
const prefix = `t${randomBytes(3).toString("hex")}`;
const original = await readCrdDir(defaultCrdDir);

function rehome(crd: Crd): Crd {
  const manifest = structuredClone(crd.manifest) as unknown as CrdManifest;
  const group = `${prefix}.${crd.group}`;
  manifest.spec.group = group;
  manifest.metadata.name = `${crd.plural}.${group}`;
  return {
    ...crd,
    name: manifest.metadata.name,
    group,
    manifest: manifest as unknown as Record<string, unknown>,
  };
}
const installed = original.map(rehome);

interface KindInfo {
  readonly crd: Crd;
  readonly version: string;
  readonly apiVersion: string;
  readonly namespaced: boolean;
  readonly statusSubresource: boolean;
}
function kindInfo(kind: string): KindInfo {
  const crd = installed.find(
    (c) => (c.manifest as unknown as CrdManifest).spec.names.kind === kind,
  );
  if (crd === undefined) throw new Error(`no CRD in manifests/crds for kind ${kind}`);
  const { spec } = crd.manifest as unknown as CrdManifest;
  const version = spec.versions[0] as CrdVersion;
  return {
    crd,
    version: version.name,
    apiVersion: `${crd.group}/${version.name}`,
    namespaced: spec.scope === "Namespaced",
    statusSubresource: version.subresources?.status !== undefined,
  };
}

let namespace = "";

function collection(info: KindInfo): string {
  const scope = info.namespaced ? `/namespaces/${namespace}` : "";
  return `/apis/${info.crd.group}/${info.version}${scope}/${info.crd.plural}`;
}

const json = <T>(res: ApiResponse): T => JSON.parse(res.body) as T;

async function create(
  object: KubeObject,
  fieldValidation?: "Strict",
): Promise<{ status: number; body: KubeObject | Status }> {
  const query = fieldValidation === undefined ? "" : `?fieldValidation=${fieldValidation}`;
  const res = await apiRequest(endpoint(), `${collection(kindInfo(object.kind))}${query}`, {
    method: "POST",
    body: JSON.stringify(object),
  });
  return { status: res.status, body: json(res) };
}

async function patchStatus(
  object: KubeObject,
  status: unknown,
): Promise<{ status: number; body: KubeObject | Status }> {
  const res = await apiRequest(
    endpoint(),
    `${collection(kindInfo(object.kind))}/${object.metadata.name}/status?fieldValidation=Strict`,
    {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: JSON.stringify({ status }),
    },
  );
  return { status: res.status, body: json(res) };
}

/** `[reason, field]` of each cause of a refusal, sorted: what the API server found wrong. */
function causes(body: KubeObject | Status): [string, string][] {
  const found = (body as Status).details?.causes ?? [];
  return found.map((c): [string, string] => [c.reason ?? "", c.field ?? ""]).sort();
}

beforeAll(async () => {
  await applyCrds(endpoint(), installed, 60_000);
  namespace = await newNamespace("crd-schemas");
}, 90_000);

afterAll(async () => {
  await Promise.all(
    installed.map((crd) => apiRequest(endpoint(), `${CRD_PATH}/${crd.name}`, { method: "DELETE" })),
  );
});

describe("the API server accepts every generated CRD", () => {
  it("installs one CRD per file of manifests/crds", () => {
    expect(original.length).toBeGreaterThan(0);
    expect(new Set(installed.map((c) => c.name)).size).toBe(original.length);
  });

  it.each(installed.map((crd) => [crd.name, crd] as const))(
    "%s: Established, names accepted, no NonStructuralSchema condition",
    async (_name, crd) => {
      const res = await apiRequest(endpoint(), `${CRD_PATH}/${crd.name}`);
      expect(res.status).toBe(200);
      const conditions = json<{ status?: { conditions?: Condition[] } }>(res).status?.conditions;
      const byType = new Map((conditions ?? []).map((c) => [c.type, c]));
      expect(byType.get("Established")?.status).toBe("True");
      expect(byType.get("NamesAccepted")?.status).toBe("True");
      expect(byType.get("NonStructuralSchema")).toBeUndefined();
    },
  );
});

/** No sample file has an EgressGroup (egress-group-sync writes them): one here. */
const EGRESS_GROUP_SAMPLE = {
  file: "this test",
  value: {
    apiVersion: "sdewan.akraino.org/v1alpha1",
    kind: "EgressGroup",
    metadata: { name: "egress-web" },
    status: {
      members: [
        { pod: { namespace: "shop", name: "web-1" }, nodeName: "node-1", ips: ["100.64.0.5"] },
        { pod: { namespace: "shop", name: "web-2" }, ips: [] },
      ],
      memberCount: 2,
      observedEgressGeneration: 1,
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "MembersComputed",
          message: "2 members",
          lastTransitionTime: "2026-01-01T00:00:00Z",
          observedGeneration: 1,
        },
      ],
    },
  },
};

/**
 * NetworkPolicy tables are written by network-policy-sync, never by users: one endpoint and one
 * peer set, as the compiler makes them for a default-deny namespace with one allow.
 */
function netpolTableSamples(): { file: string; value: Record<string, unknown> }[] {
  const pod = (name: string, app: string, ip: string) => ({
    metadata: { name, namespace: "shop", uid: `uid-${name}`, labels: { app } },
    spec: {
      nodeName: "node-1",
      containers: [{ name: "c", ports: [{ name: "http", containerPort: 80 }] }],
    },
    status: { phase: "Running", podIP: ip, podIPs: [{ ip }] },
  });
  const compiled = compileObjects({
    namespaces: [{ metadata: { name: "shop", labels: { team: "a" } } }],
    pods: [pod("web", "web", "127.0.10.1"), pod("client", "client", "127.0.10.2")],
    policies: [
      {
        metadata: { name: "allow-client", namespace: "shop" },
        spec: {
          podSelector: { matchLabels: { app: "web" } },
          ingress: [
            {
              from: [{ podSelector: { matchLabels: { app: "client" } } }],
              ports: [{ port: "http" }],
            },
          ],
        },
      },
    ],
  });
  const tables = [
    ...compiled.endpoints.slice(0, 1).map(desiredEndpointTable),
    ...compiled.peerSets.slice(0, 1).map(desiredPeerSetTable),
  ];
  return tables.map((t) => ({ file: "the netpol compiler", value: { ...t.object } }));
}

/** ClusterLink objects as an operator writes them (upstream's field names), one per kind. */
const CLUSTERLINK_SAMPLES = [
  {
    kind: "Peer",
    metadata: { name: "peer-b", namespace: "clusterlink-system" },
    spec: { gateways: [{ host: "127.0.20.1", port: 443 }] },
  },
  {
    kind: "Export",
    metadata: { name: "db", namespace: "app" },
    spec: { port: 5432 },
  },
  {
    kind: "Import",
    metadata: { name: "db", namespace: "app" },
    spec: {
      port: 5432,
      sources: [{ peer: "peer-b", exportName: "db", exportNamespace: "app" }],
      lbScheme: "round-robin",
    },
  },
  {
    kind: "AccessPolicy",
    metadata: { name: "allow-app", namespace: "app" },
    spec: { action: "allow", from: [{ workloadSelector: {} }], to: [{ workloadSelector: {} }] },
  },
  {
    kind: "PrivilegedAccessPolicy",
    metadata: { name: "deny-all" },
    spec: { action: "deny", from: [{ workloadSelector: {} }], to: [{ workloadSelector: {} }] },
  },
].map((value) => ({
  file: "this test",
  value: { apiVersion: "clusterlink.net/v1alpha1", ...value },
}));

const SAMPLES = [
  ...SEED_SAMPLES,
  ...MANIFEST_SAMPLES,
  ...CLUSTERLINK_MANIFEST_SAMPLES,
  EGRESS_GROUP_SAMPLE,
  ...netpolTableSamples(),
  ...CLUSTERLINK_SAMPLES,
]
  .filter((d) => d.value["kind"] !== "Deployment")
  .map((d, index) => {
    const value = structuredClone(d.value) as unknown as KubeObject;
    return [`${value.kind} ${value.metadata.name} (${d.file})`, value, index] as const;
  });

describe("the API server stores every sample as it was sent (strict field validation)", () => {
  it("has samples of every kind", () => {
    const kinds = new Set(SAMPLES.map(([, value]) => value.kind));
    const crdKinds = installed.map((c) => (c.manifest as unknown as CrdManifest).spec.names.kind);
    expect(crdKinds.filter((kind) => !kinds.has(kind))).toEqual([]);
  });

  it.each(SAMPLES)("%s", async (_title, sample, index) => {
    const info = kindInfo(sample.kind);
    const sent: KubeObject = {
      ...sample,
      apiVersion: info.apiVersion,
      // Seed and manifest samples may share a name; cluster-scoped ones share one scope.
      metadata: { ...sample.metadata, name: `${sample.metadata.name}-${prefix}-${index}` },
    };
    delete sent.metadata.namespace;
    const created = await create(sent, "Strict");
    expect({ status: created.status, body: created.body }).toMatchObject({ status: 201 });
    expect((created.body as KubeObject).spec).toEqual(sent.spec);
    if (sent.status === undefined) return;
    if (!info.statusSubresource) {
      expect((created.body as KubeObject).status).toEqual(sent.status);
      return;
    }
    const patched = await patchStatus(sent, sent.status);
    expect({ status: patched.status, body: patched.body }).toMatchObject({ status: 200 });
    expect((patched.body as KubeObject).status).toEqual(sent.status);
  });
});

describe("the API server refuses what the Mwan3Policy schema forbids", () => {
  const policy = (name: string, spec: unknown): KubeObject => ({
    apiVersion: kindInfo("Mwan3Policy").apiVersion,
    kind: "Mwan3Policy",
    metadata: { name, labels: { sdewanPurpose: "cnf-1" } },
    spec,
  });
  const member = { network: "ovn-net1", metric: 2, weight: 2 };

  it("accepts a valid policy", async () => {
    const created = await create(policy("valid", { members: [member] }), "Strict");
    expect(created.status).toBe(201);
  });

  it.each([
    [
      "a wrong type",
      { members: [{ ...member, metric: "2" }] },
      [["FieldValueTypeInvalid", "spec.members[0].metric"]],
    ],
    [
      "a missing required field",
      { members: [{ network: "ovn-net1", metric: 2 }] },
      [["FieldValueRequired", "spec.members[0].weight"]],
    ],
    [
      "a value below its minimum",
      { members: [{ ...member, weight: 0 }] },
      [["FieldValueInvalid", "spec.members[0].weight"]],
    ],
    ["an empty list that needs an item", { members: [] }, [["FieldValueInvalid", "spec.members"]]],
    [
      "an empty network name",
      { members: [{ ...member, network: "" }] },
      [["FieldValueInvalid", "spec.members[0].network"]],
    ],
  ] as const)("refuses %s (422, naming the field)", async (_what, spec, expected) => {
    const refused = await create(policy(`bad-${randomBytes(3).toString("hex")}`, spec));
    expect(refused.status).toBe(422);
    expect(causes(refused.body)).toEqual(expected);
  });

  it("refuses an object without its required spec", async () => {
    const refused = await create({ ...policy("no-spec", undefined), spec: undefined });
    expect(refused.status).toBe(422);
    expect(causes(refused.body)).toEqual([["FieldValueRequired", "spec"]]);
  });

  it("prunes unknown fields, and refuses them (400) under strict field validation", async () => {
    const spec = { members: [{ ...member, bogus: 1 }], extra: "x" };
    const pruned = await create(policy("pruned", spec));
    expect(pruned.status).toBe(201);
    expect((pruned.body as KubeObject).spec).toEqual({ members: [member] });
    const read = await apiRequest(endpoint(), `${collection(kindInfo("Mwan3Policy"))}/pruned`);
    expect(json<KubeObject>(read).spec).toEqual({ members: [member] });

    const strict = await create(policy("strict", spec), "Strict");
    expect(strict.status).toBe(400);
    expect((strict.body as Status).message).toMatch(/unknown field "spec\.extra"/);
    expect((strict.body as Status).message).toMatch(/unknown field "spec\.members\[0\]\.bogus"/);
  });

  it("refuses a status condition of a type rules do not have", async () => {
    const created = await create(policy("conditions", { members: [member] }));
    expect(created.status).toBe(201);
    const condition = {
      type: "Bogus",
      status: "True",
      reason: "Test",
      message: "",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    };
    const refused = await patchStatus(created.body as KubeObject, { conditions: [condition] });
    expect(refused.status).toBe(422);
    expect(causes(refused.body)).toEqual([["FieldValueNotSupported", "status.conditions[0].type"]]);
  });
});

describe("the Import CRD refuses a name its Services cannot take, on create only", () => {
  const imp = (name: string): KubeObject => ({
    apiVersion: kindInfo("Import").apiVersion,
    kind: "Import",
    metadata: { name, namespace },
    spec: { port: 5432, sources: [{ peer: "east", exportName: "db", exportNamespace: "data" }] },
  });

  it.each(["my.db", "1db"])("refuses %s with what the name must be", async (name) => {
    const refused = await create(imp(name));
    expect(refused.status).toBe(422);
    expect((refused.body as Status).message).toMatch(/import name must be a DNS-1035 label/);
  });

  it("admits a DNS-1035 label", async () => {
    expect((await create(imp("my-db"))).status).toBe(201);
  });

  it("an Import stored before the rule still takes status and spec writes", async () => {
    const old = imp("old.db");
    await storeUnvalidated(kindInfo("Import").crd.plural, {
      ...old,
      metadata: { name: "old.db", namespace },
    });
    const condition = {
      type: "Stalled",
      status: "True",
      reason: "InvalidName",
      message: "recreate it",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    };
    expect((await patchStatus(old, { conditions: [condition] })).status).toBe(200);
    const res = await apiRequest(endpoint(), `${collection(kindInfo("Import"))}/old.db`, {
      method: "PATCH",
      contentType: "application/merge-patch+json",
      body: JSON.stringify({ spec: { port: 5433 } }),
    });
    expect(res.status).toBe(200);
  });
});
