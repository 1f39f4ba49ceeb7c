// Proof that the local control plane is a real Kubernetes API: CRDs, status subresource,
// finalizers, printer columns (Table), RBAC for a non-admin user, loopback pod IPs, and an HTTPS
// admission webhook on 127.0.0.1.
import { once } from "node:events";
import https from "node:https";
import tls from "node:tls";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  AdmissionregistrationV1Api,
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { apiRequest, pollUntil } from "../../dev/control-plane/api.js";
import { applyCrds, readCrdDir, readCrdFile } from "../../dev/control-plane/crds.js";
import { KUBERNETES_SERVICE_IP } from "../../dev/control-plane/addresses.js";
import { defaultCrdDir } from "../../dev/control-plane/control-plane.js";
import {
  adminKubeConfig,
  clusterInfo,
  endpoint,
  newNamespace,
  userKubeConfig,
  webhookCertificate,
} from "./support/cluster.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const group = "batch.sdewan.akraino.org";
const version = "v1alpha1";
const plural = "mwan3rules";
const crdName = `${plural}.${group}`;
const finalizer = "rule.finalizers.sdewan.akraino.org";

interface Mwan3Rule {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    labels?: Record<string, string>;
    finalizers?: string[];
    deletionTimestamp?: string;
    generation?: number;
    resourceVersion?: string;
  };
  spec: Record<string, string>;
  status?: Record<string, unknown>;
}

interface Condition {
  type: string;
  status: string;
}

function sample(name: string): Mwan3Rule {
  return {
    apiVersion: `${group}/${version}`,
    kind: "Mwan3Rule",
    metadata: { name, labels: { sdewanPurpose: "cnf1" } },
    spec: {
      policy: "balance1",
      src_ip: "192.0.2.10",
      src_port: "80",
      dest_ip: "198.51.100.20",
      dest_port: "8080",
      proto: "tcp",
      family: "ipv4",
      sticky: "0",
      timeout: "600",
    },
  };
}

function statusCode(error: unknown): number | undefined {
  return error instanceof ApiException ? error.code : undefined;
}

const admin = adminKubeConfig();
const core = admin.makeApiClient(CoreV1Api);
const custom = admin.makeApiClient(CustomObjectsApi);

async function getRule(namespace: string, name: string): Promise<Mwan3Rule> {
  return (await custom.getNamespacedCustomObject({
    group,
    version,
    namespace,
    plural,
    name,
  })) as Mwan3Rule;
}

async function createRule(namespace: string, rule: Mwan3Rule): Promise<Mwan3Rule> {
  return (await custom.createNamespacedCustomObject({
    group,
    version,
    namespace,
    plural,
    body: rule,
  })) as Mwan3Rule;
}

beforeAll(async () => {
  // Until `npm run gen:crds` has produced the real CRD, a stand-in fixture takes its place.
  if (!clusterInfo().crds.includes(crdName)) {
    const fixture = await readCrdFile(path.join(here, "fixtures", "mwan3rule-crd.yaml"));
    await applyCrds(endpoint(), fixture);
  }
});

describe("local control plane", () => {
  test("every CRD in manifests/crds is installed and Established", async () => {
    const crds = await readCrdDir(defaultCrdDir);
    expect(clusterInfo().crds).toEqual(crds.map((c) => c.name));
    for (const crd of crds) {
      const res = await apiRequest(
        endpoint(),
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.name}`,
      );
      expect(res.status).toBe(200);
      const body = JSON.parse(res.body) as { status?: { conditions?: Condition[] } };
      const established = body.status?.conditions?.find((c) => c.type === "Established");
      expect(established?.status).toBe("True");
    }
  });

  test("a Mwan3Rule is created and read back", async () => {
    const ns = await newNamespace();
    await createRule(ns, sample("rule-a"));
    const read = await getRule(ns, "rule-a");
    expect(read.kind).toBe("Mwan3Rule");
    expect(read.metadata.namespace).toBe(ns);
    expect(read.spec).toEqual(sample("rule-a").spec);
  });

  test("a patch through the status subresource changes only status", async () => {
    const ns = await newNamespace();
    const created = await createRule(ns, sample("rule-s"));
    const patch = {
      metadata: { labels: { sdewanPurpose: "changed" } },
      spec: { policy: "changed" },
      status: { inSync: true, message: "applied to 1/1 pods" },
    };
    const patched = (await custom.patchNamespacedCustomObjectStatus(
      { group, version, namespace: ns, plural, name: "rule-s", body: patch },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    )) as Mwan3Rule;
    expect(patched.status).toMatchObject({ inSync: true, message: "applied to 1/1 pods" });
    const read = await getRule(ns, "rule-s");
    expect(read.spec.policy).toBe("balance1");
    expect(read.metadata.labels).toEqual({ sdewanPurpose: "cnf1" });
    expect(read.metadata.generation).toBe(created.metadata.generation);
    expect(read.status).toMatchObject({ inSync: true });
  });

  test("a finalizer keeps a deleted object, with deletionTimestamp, until it is removed", async () => {
    const ns = await newNamespace();
    const rule = sample("rule-f");
    rule.metadata.finalizers = [finalizer];
    await createRule(ns, rule);
    await custom.deleteNamespacedCustomObject({
      group,
      version,
      namespace: ns,
      plural,
      name: "rule-f",
    });

    const terminating = await getRule(ns, "rule-f");
    expect(terminating.metadata.deletionTimestamp).toEqual(expect.any(String));
    expect(terminating.metadata.finalizers).toEqual([finalizer]);

    await custom.patchNamespacedCustomObject(
      {
        group,
        version,
        namespace: ns,
        plural,
        name: "rule-f",
        body: { metadata: { finalizers: null } },
      },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    const gone = await getRule(ns, "rule-f").then(
      () => 200,
      (error: unknown) => statusCode(error),
    );
    expect(gone).toBe(404);
  });

  test("the Table output shows the printer columns (what kubectl get mwan3rules prints)", async () => {
    const ns = await newNamespace();
    await createRule(ns, sample("rule-t"));
    const res = await apiRequest(
      endpoint(),
      `/apis/${group}/${version}/namespaces/${ns}/${plural}`,
      {
        accept: "application/json;as=Table;v=v1;g=meta.k8s.io",
      },
    );
    expect(res.status).toBe(200);
    const table = JSON.parse(res.body) as {
      kind: string;
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[] }[];
    };
    expect(table.kind).toBe("Table");
    const columns = table.columnDefinitions.map((c) => c.name);
    expect(columns).toEqual(
      expect.arrayContaining(["Name", "Purpose", "InSync", "Applied", "Age"]),
    );
    expect(table.rows).toHaveLength(1);
    const cells = table.rows[0]?.cells ?? [];
    expect(cells[columns.indexOf("Name")]).toBe("rule-t");
    expect(cells[columns.indexOf("Purpose")]).toBe("cnf1");
  });

  test("a non-admin user is refused (403) until a RoleBinding allows it", async () => {
    const ns = await newNamespace();
    await createRule(ns, sample("rule-r"));
    const alice = userKubeConfig("alice").makeApiClient(CustomObjectsApi);
    const list = () => alice.listNamespacedCustomObject({ group, version, namespace: ns, plural });

    expect(await list().then(() => 200, statusCode)).toBe(403);

    const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
    await rbac.createNamespacedRole({
      namespace: ns,
      body: {
        metadata: { name: "rule-reader" },
        rules: [{ apiGroups: [group], resources: [plural], verbs: ["get", "list", "watch"] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name: "alice-reads-rules" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "rule-reader" },
        subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: "alice" }],
      },
    });
    // The RBAC authorizer reads bindings from an informer: allow it to catch up.
    const items = await pollUntil(
      () =>
        list().then(
          (l) => (l as { items: Mwan3Rule[] }).items,
          () => undefined,
        ),
      () => "alice to be allowed to list mwan3rules",
      { timeoutMs: 10_000 },
    );
    expect(items.map((r) => r.metadata.name)).toEqual(["rule-r"]);
    // Still nothing outside the binding: another namespace is refused.
    const other = await newNamespace("other");
    const elsewhere = alice.listNamespacedCustomObject({
      group,
      version,
      namespace: other,
      plural,
    });
    expect(await elsewhere.then(() => 200, statusCode)).toBe(403);
  });
});

describe("facts the functions' tests rely on", () => {
  test("a Pod's status accepts a loopback IP (127.0.0.x), so tests can run fake CNFs on loopback", async () => {
    const ns = await newNamespace();
    await core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: "cnf-0", labels: { app: "cnf" } },
        spec: { containers: [{ name: "cnf", image: "example.invalid/cnf:1" }] },
      },
    });
    const pod = await core.readNamespacedPodStatus({ namespace: ns, name: "cnf-0" });
    pod.status = {
      phase: "Running",
      podIP: "127.0.0.2",
      podIPs: [{ ip: "127.0.0.2" }],
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: new Date() }],
    };
    const updated = await core.replaceNamespacedPodStatus({
      namespace: ns,
      name: "cnf-0",
      body: pod,
    });
    expect(updated.status?.podIP).toBe("127.0.0.2");
    expect(updated.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
  });

  test("an EndpointSlice refuses loopback addresses: CNF pods are found from Pods, not endpoints", async () => {
    const ns = await newNamespace();
    const discovery = admin.makeApiClient(DiscoveryV1Api);
    const create = (address: string) =>
      discovery.createNamespacedEndpointSlice({
        namespace: ns,
        body: {
          metadata: { generateName: "cnf-" },
          addressType: "IPv4",
          endpoints: [{ addresses: [address] }],
        },
      });
    expect(await create("127.0.0.2").then(() => 201, statusCode)).toBe(422);
    expect(await create("192.0.2.2").then(() => 201, statusCode)).toBe(201);
  });

  test("Services get ClusterIPs from 100.65.0.0/16, the kubernetes Service the first, which the serving certificate names", async () => {
    const kubernetes = await core.readNamespacedService({
      namespace: "default",
      name: "kubernetes",
    });
    expect(kubernetes.spec?.clusterIP).toBe(KUBERNETES_SERVICE_IP);
    const ns = await newNamespace();
    const db = await core.createNamespacedService({
      namespace: ns,
      body: { metadata: { name: "db" }, spec: { ports: [{ port: 5432 }] } },
    });
    expect(db.spec?.clusterIP).toMatch(/^100\.65\.\d+\.\d+$/);
    const { hostname: host, port } = new URL(clusterInfo().server);
    const socket = tls.connect({ host, port: Number(port), ca: clusterInfo().caPem });
    await once(socket, "secureConnect");
    const names = socket.getPeerCertificate().subjectaltname;
    socket.destroy();
    expect(names?.split(", ")).toContain(`IP Address:${KUBERNETES_SERVICE_IP}`);
  });

  test("the API server calls an HTTPS validating webhook on 127.0.0.1", async () => {
    const ns = await newNamespace();
    const cert = await webhookCertificate();
    const reviews: string[] = [];
    const server = https.createServer({ cert: cert.certPem, key: cert.keyPem }, (req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const review = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
          request: { uid: string; name?: string };
        };
        reviews.push(review.request.name ?? "");
        res.setHeader("content-type", "application/json");
        res.end(
          JSON.stringify({
            apiVersion: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response: {
              uid: review.request.uid,
              allowed: false,
              status: { code: 403, message: "denied by the test webhook" },
            },
          }),
        );
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    const admission = admin.makeApiClient(AdmissionregistrationV1Api);
    const name = `deny-configmaps-${ns}`;
    try {
      await admission.createValidatingWebhookConfiguration({
        body: {
          metadata: { name },
          webhooks: [
            {
              name: "deny.configmaps.sdewan.test",
              admissionReviewVersions: ["v1"],
              sideEffects: "None",
              failurePolicy: "Fail",
              timeoutSeconds: 5,
              clientConfig: {
                url: `https://127.0.0.1:${port}/validate`,
                caBundle: Buffer.from(cert.caPem).toString("base64"),
              },
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } },
              rules: [
                {
                  apiGroups: [""],
                  apiVersions: ["v1"],
                  operations: ["CREATE"],
                  resources: ["configmaps"],
                },
              ],
            },
          ],
        },
      });
      // Webhook configurations reach the admission chain through an informer: poll until denied.
      let attempt = 0;
      const denial = await pollUntil(
        () =>
          core
            .createNamespacedConfigMap({
              namespace: ns,
              body: { metadata: { name: `probe-${attempt++}` } },
            })
            .then(
              () => undefined,
              (error: unknown) => (error instanceof ApiException ? error : undefined),
            ),
        () => "the webhook to deny a ConfigMap",
        { timeoutMs: 10_000 },
      );
      expect(denial.code).toBe(403);
      expect(typeof denial.body === "string" ? denial.body : JSON.stringify(denial.body)).toContain(
        "denied by the test webhook",
      );
      expect(reviews.length).toBeGreaterThan(0);
    } finally {
      await admission.deleteValidatingWebhookConfiguration({ name }).catch(() => undefined);
      server.close();
    }
  });
});
