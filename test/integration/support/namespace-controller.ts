// What kube-controller-manager's namespace controller does for a namespace being deleted, which
// this control plane lacks (dev/control-plane/README.md): with its own identity, a
// deletecollection of every namespaced resource that supports one (each item still passes
// admission, as in a real cluster), a list of what remains (objects held by finalizers), and,
// once nothing remains, the namespace's own "kubernetes" finalizer removed (/finalize). Pods are
// confirmed gone as a kubelet would once their containers stopped (there is no kubelet here).
import { apiRequest, type ApiEndpoint } from "../../../dev/control-plane/api.js";

/** The namespace controller's user, as kube-controller-manager --use-service-account-credentials runs it. */
export const NAMESPACE_CONTROLLER = { namespace: "kube-system", name: "namespace-controller" };

/** A namespaced resource the controller empties: its collection path under a namespace. */
export interface NamespacedResource {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

/** What one pass over a namespace's content found. */
export interface ContentPass {
  /** Requests the API server refused: "<resource>: <status> <message>". */
  readonly errors: readonly string[];
  /** Objects still there after the deletes (finalizers hold them), "plural/name" each. */
  readonly remaining: readonly string[];
}

interface DiscoveredResource {
  readonly name: string;
  readonly namespaced: boolean;
  readonly verbs: readonly string[];
}

const collectionPath = (r: NamespacedResource, namespace: string): string =>
  `${r.group === "" ? "/api" : `/apis/${r.group}`}/${r.version}/namespaces/${namespace}/${r.plural}`;

function messageOf(body: string): string {
  try {
    return (JSON.parse(body) as { message?: string }).message ?? body;
  } catch {
    return body;
  }
}

export class NamespaceController {
  constructor(private readonly api: ApiEndpoint) {}

  private async get<T>(path: string): Promise<T> {
    const res = await apiRequest(this.api, path, { timeoutMs: 60_000 });
    if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${messageOf(res.body)}`);
    return JSON.parse(res.body) as T;
  }

  /** Every namespaced resource that can be listed and deleted as a collection, in discovery order. */
  async resources(): Promise<NamespacedResource[]> {
    const groups = await this.get<{
      groups: { name: string; preferredVersion: { version: string } }[];
    }>("/apis");
    const versions = [
      { group: "", version: "v1", path: "/api/v1" },
      ...groups.groups.map((g) => ({
        group: g.name,
        version: g.preferredVersion.version,
        path: `/apis/${g.name}/${g.preferredVersion.version}`,
      })),
    ];
    const lists = await Promise.all(
      versions.map(async (v) => {
        const list = await this.get<{ resources: DiscoveredResource[] }>(v.path);
        return list.resources
          .filter(
            (r) =>
              r.namespaced &&
              !r.name.includes("/") &&
              r.verbs.includes("deletecollection") &&
              r.verbs.includes("list"),
          )
          .map((r) => ({ group: v.group, version: v.version, plural: r.name }));
      }),
    );
    return lists.flat();
  }

  /** One pass of the controller over `resources` in `namespace`: delete each collection, list what stays. */
  async deleteContent(
    namespace: string,
    resources: readonly NamespacedResource[],
  ): Promise<ContentPass> {
    const errors: string[] = [];
    const remaining: string[] = [];
    for (const resource of resources) {
      const path = collectionPath(resource, namespace);
      const deleted = await apiRequest(this.api, path, { method: "DELETE", timeoutMs: 120_000 });
      if (deleted.status !== 200) {
        errors.push(`${resource.plural}: ${deleted.status} ${messageOf(deleted.body)}`);
      }
      const left = await this.get<{ items: { metadata: { name: string } }[] }>(path);
      if (resource.group === "" && resource.plural === "pods") {
        // The kubelet's part: containers stopped, the pod object goes.
        for (const pod of left.items) {
          await apiRequest(this.api, `${path}/${pod.metadata.name}`, {
            method: "DELETE",
            body: JSON.stringify({ gracePeriodSeconds: 0 }),
          });
        }
        continue;
      }
      remaining.push(...left.items.map((item) => `${resource.plural}/${item.metadata.name}`));
    }
    return { errors, remaining };
  }

  /** Removes the namespace's "kubernetes" finalizer, as the controller does once it is empty. */
  async finalize(namespace: string): Promise<void> {
    const path = `/api/v1/namespaces/${namespace}`;
    const current = await this.get<{ spec?: { finalizers?: string[] } }>(path);
    const body = JSON.stringify({
      ...current,
      spec: { finalizers: (current.spec?.finalizers ?? []).filter((f) => f !== "kubernetes") },
    });
    const res = await apiRequest(this.api, `${path}/finalize`, { method: "PUT", body });
    if (res.status !== 200) throw new Error(`finalize ${namespace}: ${res.status} ${res.body}`);
  }
}
