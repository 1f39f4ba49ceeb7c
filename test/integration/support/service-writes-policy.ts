// The shipped ValidatingAdmissionPolicy on Service and EndpointSlice writes
// (manifests/rbac/service-writes-policy.yaml), installed into the run's control plane by
// lifecycle.ts as the CRDs are: every test that runs clusterlink-import with its own account
// (identityFrom("clusterlink-import.yaml")) runs under it, as a cluster would.
import { readFile } from "node:fs/promises";
import { parseAllDocuments } from "yaml";
import { type ApiEndpoint, apiRequest, pollUntil } from "../../../dev/control-plane/api.js";

const FILE = new URL("../../../manifests/rbac/service-writes-policy.yaml", import.meta.url);
const GROUP_PATH = "/apis/admissionregistration.k8s.io/v1";
const PLURALS: Readonly<Record<string, string>> = {
  ValidatingAdmissionPolicy: "validatingadmissionpolicies",
  ValidatingAdmissionPolicyBinding: "validatingadmissionpolicybindings",
};

/**
 * Applies the policy and its binding (server-side apply: again on a reused cluster is fine), then
 * waits until the API server enforces them: its admission plugin learns of them through an
 * informer, so a write made right after the create could still pass.
 */
export async function installServiceWritesPolicy(endpoint: ApiEndpoint): Promise<void> {
  const docs = parseAllDocuments(await readFile(FILE, "utf8")).map(
    (d) => d.toJS() as { kind: string; metadata: { name: string } },
  );
  for (const doc of docs) {
    const plural = PLURALS[doc.kind];
    if (plural === undefined) throw new Error(`${FILE.pathname}: unexpected ${doc.kind}`);
    const res = await apiRequest(
      endpoint,
      `${GROUP_PATH}/${plural}/${doc.metadata.name}?fieldManager=sdewan-tests&force=true`,
      { method: "PATCH", contentType: "application/apply-patch+yaml", body: JSON.stringify(doc) },
    );
    if (res.status >= 300) {
      throw new Error(`applying ${doc.kind} ${doc.metadata.name}: HTTP ${res.status} ${res.body}`);
    }
  }
  await untilEnforced(endpoint);
}

/**
 * A dry run of an unlabelled EndpointSlice, as a clusterlink-import account that RBAC lets do
 * anything (impersonated, in system:masters), is refused by the policy once it is in force.
 */
async function untilEnforced(endpoint: ApiEndpoint): Promise<void> {
  const probe = {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { name: "sdewan-policy-probe", namespace: "default" },
    addressType: "IPv4",
    endpoints: [],
  };
  let last = "no answer yet";
  await pollUntil(
    async () => {
      const res = await apiRequest(
        endpoint,
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?dryRun=All",
        {
          method: "POST",
          body: JSON.stringify(probe),
          headers: {
            "impersonate-user": "system:serviceaccount:sdewan-probe:sdewan-clusterlink-import",
            "impersonate-group": "system:masters",
          },
        },
      );
      last = `HTTP ${res.status} ${res.body.slice(0, 200)}`;
      return res.status === 403 && res.body.includes("sdewan-service-writes") ? true : undefined;
    },
    () => `the policy sdewan-service-writes to refuse a write (last: ${last})`,
    { timeoutMs: 30_000, intervalMs: 100 },
  );
}
