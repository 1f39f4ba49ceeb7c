// The demo's processes run as the project's own least-privilege identities, not as the admin:
// manifests/rbac is applied as it is, and each process gets a kubeconfig with a TokenRequest
// token of its ServiceAccount. The functions share one process, so they share one account bound
// to their roles (FUNCTION_ROLES): exactly the OpenFaaS Community Edition situation, under CE's own
// account name openfaas-fn/default, which the Service-writes admission policy of manifests/rbac
// matches (docs/deploy.md).
import { readFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import {
  CoreV1Api,
  KubeConfig,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  type KubernetesObject,
} from "@kubernetes/client-node";
import { parseAllDocuments, stringify } from "yaml";
import { repoRoot } from "../control-plane/binaries.js";

const NAMESPACE = "sdewan-system";
/** OpenFaaS CE's function namespace and the account every function there runs as. */
const SHARED_NAMESPACE = "openfaas-fn";
const SHARED_ACCOUNT = "default";
const LEDGER_NAMESPACE = "sdewan-prune-ledgers";
const FUNCTION_ROLES = [
  "sdewan-reconcile-rule",
  "sdewan-on-deployment-ready",
  "sdewan-egress-group-sync",
  "sdewan-network-policy-sync",
  "sdewan-clusterlink-export",
  "sdewan-clusterlink-import",
  "sdewan-clusterlink-peer-health",
  "sdewan-clusterlink-authz",
];

export interface DemoIdentities {
  /** kubeconfig files, one per process. */
  readonly functions: string;
  readonly connector: string;
  readonly webhook: string;
  /** Knative's ApiServerSource adapters' identity (sdewan-apiserversource). */
  readonly sources: string;
}

async function applyRbacManifests(admin: KubeConfig): Promise<number> {
  const dir = path.join(repoRoot, "manifests/rbac");
  const files = (await readdir(dir)).filter((f) => f.endsWith(".yaml") && !f.startsWith("kust"));
  // The namespace first: the ServiceAccounts live in it.
  files.sort((a, b) => Number(b === "namespace.yaml") - Number(a === "namespace.yaml"));
  const api = KubernetesObjectApi.makeApiClient(admin);
  let count = 0;
  for (const file of files) {
    const text = await readFile(path.join(dir, file), "utf8");
    for (const doc of parseAllDocuments(text)) {
      const object = doc.toJS() as KubernetesObject | null;
      if (object === null) continue;
      await api.create(object);
      count += 1;
    }
  }
  return count;
}

async function tokenKubeconfig(
  admin: KubeConfig,
  account: string,
  file: string,
  namespace = NAMESPACE,
): Promise<string> {
  const core = admin.makeApiClient(CoreV1Api);
  const request = await core.createNamespacedServiceAccountToken({
    namespace,
    name: account,
    body: { spec: { audiences: [], expirationSeconds: 24 * 3600 } },
  });
  const token = request.status?.token;
  if (!token) throw new Error(`no token for ServiceAccount ${namespace}/${account}`);
  const cluster = admin.getCurrentCluster();
  if (cluster === null) throw new Error("the admin kubeconfig names no cluster");
  const caData = cluster.caData ?? (await readFile(cluster.caFile ?? "", "base64"));
  await writeFile(
    file,
    stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        { name: "demo", cluster: { server: cluster.server, "certificate-authority-data": caData } },
      ],
      users: [{ name: account, user: { token } }],
      contexts: [{ name: account, context: { cluster: "demo", user: account } }],
      "current-context": account,
    }),
    { mode: 0o600 },
  );
  return file;
}

/** Applies manifests/rbac, adds the shared functions account, writes one kubeconfig each. */
export async function createDemoIdentities(
  adminKubeconfig: string,
  dir: string,
): Promise<{ identities: DemoIdentities; objects: number }> {
  const admin = new KubeConfig();
  admin.loadFromFile(adminKubeconfig);
  const objects = await applyRbacManifests(admin);
  const core = admin.makeApiClient(CoreV1Api);
  await core.createNamespace({ body: { metadata: { name: SHARED_NAMESPACE } } });
  // No controller-manager here makes a namespace's default ServiceAccount.
  await core.createNamespacedServiceAccount({
    namespace: SHARED_NAMESPACE,
    body: { metadata: { name: SHARED_ACCOUNT } },
  });
  const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
  for (const role of FUNCTION_ROLES) {
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: `demo-openfaas-ce-${role}` },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
        subjects: [{ kind: "ServiceAccount", name: SHARED_ACCOUNT, namespace: SHARED_NAMESPACE }],
      },
    });
  }
  // on-deployment-ready's prune ledgers: a Role in their own namespace, bound here as rbac-ce.yaml does.
  await rbac.createNamespacedRoleBinding({
    namespace: LEDGER_NAMESPACE,
    body: {
      metadata: { name: "demo-openfaas-ce-sdewan-on-deployment-ready" },
      roleRef: {
        apiGroup: "rbac.authorization.k8s.io",
        kind: "Role",
        name: "sdewan-on-deployment-ready",
      },
      subjects: [{ kind: "ServiceAccount", name: SHARED_ACCOUNT, namespace: SHARED_NAMESPACE }],
    },
  });
  const file = (name: string) => path.join(dir, `${name}.kubeconfig`);
  return {
    objects,
    identities: {
      functions: await tokenKubeconfig(admin, SHARED_ACCOUNT, file("functions"), SHARED_NAMESPACE),
      connector: await tokenKubeconfig(admin, "sdewan-connector", file("connector")),
      webhook: await tokenKubeconfig(admin, "validate-admission", file("webhook")),
      sources: await tokenKubeconfig(admin, "sdewan-apiserversource", file("sources")),
    },
  };
}
