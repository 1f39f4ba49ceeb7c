// Small API helpers for the admission integration tests: create/update/delete rules and CNF
// Deployments as a given user, and read a denial's message back.
import {
  ApiException,
  AppsV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type V1Deployment,
} from "@kubernetes/client-node";
import { RULE_GROUP, RULE_VERSION, requireKind } from "../../shared/kinds/index.js";

export const NFN_NETWORK = JSON.stringify({
  type: "ovn4nfv",
  interface: [
    { name: "ovn-priv-net", interface: "net0", defaultGateway: "false" },
    { name: "ovn-provider-net1", interface: "net1", defaultGateway: "false" },
  ],
});

export interface RuleObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    labels?: Record<string, string>;
    resourceVersion?: string;
    finalizers?: string[];
  };
  spec: unknown;
}

export function rule(
  kind: string,
  name: string,
  labels: Record<string, string>,
  spec: unknown,
): RuleObject {
  return { apiVersion: `${RULE_GROUP}/${RULE_VERSION}`, kind, metadata: { name, labels }, spec };
}

/** The outcome of an API call: the object, or the API server's refusal. */
export type Attempt<T> = { ok: true; value: T } | { ok: false; code: number; message: string };

async function attempt<T>(call: Promise<T>): Promise<Attempt<T>> {
  try {
    return { ok: true, value: await call };
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body: unknown = typeof error.body === "string" ? JSON.parse(error.body) : error.body;
    const message = (body as { message?: string } | null)?.message ?? String(error.body);
    return { ok: false, code: error.code, message };
  }
}

export function rules(kc: KubeConfig, namespace: string) {
  const custom = kc.makeApiClient(CustomObjectsApi);
  const where = (kind: string) => ({
    group: RULE_GROUP,
    version: RULE_VERSION,
    namespace,
    plural: requireKind(kind).plural,
  });
  return {
    create: (object: RuleObject) =>
      attempt(custom.createNamespacedCustomObject({ ...where(object.kind), body: object })),
    get: async (kind: string, name: string) =>
      (await custom.getNamespacedCustomObject({ ...where(kind), name })) as RuleObject,
    replace: (object: RuleObject) =>
      attempt(
        custom.replaceNamespacedCustomObject({
          ...where(object.kind),
          name: object.metadata.name,
          body: object,
        }),
      ),
    patch: (kind: string, name: string, patch: object) =>
      attempt(
        custom.patchNamespacedCustomObject(
          { ...where(kind), name, body: patch },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        ),
      ),
    delete: (kind: string, name: string) =>
      attempt(custom.deleteNamespacedCustomObject({ ...where(kind), name })),
  };
}

export function cnfDeployment(
  name: string,
  purpose: string,
  annotations: Record<string, string> = { "k8s.plugin.opnfv.org/nfn-network": NFN_NETWORK },
): V1Deployment {
  const labels = { app: name, sdewanPurpose: purpose };
  return {
    metadata: { name, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels, annotations },
        spec: { containers: [{ name: "cnf", image: "integratedcloudnative/openwrt:dev" }] },
      },
    },
  };
}

export function deployments(kc: KubeConfig, namespace: string) {
  const apps = kc.makeApiClient(AppsV1Api);
  return {
    create: (body: V1Deployment) => attempt(apps.createNamespacedDeployment({ namespace, body })),
    patch: (name: string, patch: object) =>
      attempt(
        apps.patchNamespacedDeployment(
          { name, namespace, body: patch },
          setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
        ),
      ),
  };
}

/** Asserts a refusal by validate-admission's `policy`, returning its message for more checks. */
export function deniedBy(result: Attempt<unknown>, policy: string): string {
  if (result.ok) throw new Error(`expected a denial by ${policy}, but the request was allowed`);
  expect(result.message).toContain(`sdewan policy "${policy}" denied this request`);
  return result.message;
}
