/**
 * The only module that calls @kubernetes/client-node's generated APIs. Custom resources and the
 * apps group go through CustomObjectsApi (plain JSON in and out); the core group (Pods,
 * Namespaces) through CoreV1Api, whose typed results are turned back into plain JSON.
 */
import {
  CoreV1Api,
  CustomObjectsApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
} from "@kubernetes/client-node";
import type { ResourceType } from "./resources.js";

export interface ObjectKey {
  readonly name: string;
  /** Omit (or "") for cluster-scoped objects. */
  readonly namespace?: string;
}

export interface ListQuery {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
}

export type Subresource = "" | "status";

/** Raw requests: JSON in, JSON out, client-node errors thrown as they are. */
export interface Transport {
  get(type: ResourceType, key: ObjectKey): Promise<unknown>;
  list(type: ResourceType, namespace: string | undefined, query: ListQuery): Promise<unknown>;
  create(type: ResourceType, namespace: string | undefined, body: object): Promise<unknown>;
  replace(type: ResourceType, key: ObjectKey, body: object): Promise<unknown>;
  delete(type: ResourceType, key: ObjectKey): Promise<unknown>;
  mergePatch(type: ResourceType, key: ObjectKey, body: object, sub: Subresource): Promise<unknown>;
}

const mergePatchHeader = () => setHeaderOptions("Content-Type", PatchStrategy.MergePatch);

/** Typed client-node results carry Date objects; JSON round-trip gives the wire form back. */
const toWireJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value)) as unknown;

export function createTransport(kc: KubeConfig): Transport {
  const custom = new CustomTransport(kc.makeApiClient(CustomObjectsApi));
  const core = new CoreTransport(kc.makeApiClient(CoreV1Api));
  const pick = (type: ResourceType): Transport => (type.group === "" ? core : custom);
  return {
    get: (type, key) => pick(type).get(type, key),
    list: (type, namespace, query) => pick(type).list(type, namespace, query),
    create: (type, namespace, body) => pick(type).create(type, namespace, body),
    replace: (type, key, body) => pick(type).replace(type, key, body),
    delete: (type, key) => pick(type).delete(type, key),
    mergePatch: (type, key, body, sub) => pick(type).mergePatch(type, key, body, sub),
  };
}

const namespaceOf = (key: ObjectKey): string => key.namespace ?? "";

class CustomTransport implements Transport {
  constructor(private readonly api: CustomObjectsApi) {}

  get(type: ResourceType, key: ObjectKey): Promise<unknown> {
    const base = { group: type.group, version: type.version, plural: type.plural, name: key.name };
    return type.namespaced
      ? this.api.getNamespacedCustomObject({ ...base, namespace: namespaceOf(key) })
      : this.api.getClusterCustomObject(base);
  }

  list(type: ResourceType, namespace: string | undefined, query: ListQuery): Promise<unknown> {
    const base = { group: type.group, version: type.version, plural: type.plural, ...query };
    // A namespaced kind listed without a namespace: every namespace (GET /apis/g/v/plural).
    return type.namespaced && namespace
      ? this.api.listNamespacedCustomObject({ ...base, namespace })
      : this.api.listClusterCustomObject(base);
  }

  create(type: ResourceType, namespace: string | undefined, body: object): Promise<unknown> {
    const base = { group: type.group, version: type.version, plural: type.plural, body };
    return type.namespaced
      ? this.api.createNamespacedCustomObject({ ...base, namespace: namespace ?? "" })
      : this.api.createClusterCustomObject(base);
  }

  replace(type: ResourceType, key: ObjectKey, body: object): Promise<unknown> {
    const base = { group: type.group, version: type.version, plural: type.plural, name: key.name };
    return type.namespaced
      ? this.api.replaceNamespacedCustomObject({ ...base, namespace: namespaceOf(key), body })
      : this.api.replaceClusterCustomObject({ ...base, body });
  }

  delete(type: ResourceType, key: ObjectKey): Promise<unknown> {
    const base = { group: type.group, version: type.version, plural: type.plural, name: key.name };
    return type.namespaced
      ? this.api.deleteNamespacedCustomObject({ ...base, namespace: namespaceOf(key) })
      : this.api.deleteClusterCustomObject(base);
  }

  mergePatch(type: ResourceType, key: ObjectKey, body: object, sub: Subresource): Promise<unknown> {
    const base = {
      group: type.group,
      version: type.version,
      plural: type.plural,
      name: key.name,
      body,
    };
    const header = mergePatchHeader();
    if (type.namespaced) {
      const namespaced = { ...base, namespace: namespaceOf(key) };
      return sub === "status"
        ? this.api.patchNamespacedCustomObjectStatus(namespaced, header)
        : this.api.patchNamespacedCustomObject(namespaced, header);
    }
    return sub === "status"
      ? this.api.patchClusterCustomObjectStatus(base, header)
      : this.api.patchClusterCustomObject(base, header);
  }
}

/** Pods and Namespaces: the core kinds this project reads (and tests write). */
class CoreTransport implements Transport {
  constructor(private readonly api: CoreV1Api) {}

  async get(type: ResourceType, key: ObjectKey): Promise<unknown> {
    const read =
      this.kindOf(type) === "pods"
        ? this.api.readNamespacedPod({ name: key.name, namespace: namespaceOf(key) })
        : this.api.readNamespace({ name: key.name });
    return toWireJson(await read);
  }

  async list(
    type: ResourceType,
    namespace: string | undefined,
    query: ListQuery,
  ): Promise<unknown> {
    if (this.kindOf(type) === "namespaces") return toWireJson(await this.api.listNamespace(query));
    const list = namespace
      ? this.api.listNamespacedPod({ namespace, ...query })
      : this.api.listPodForAllNamespaces(query);
    return toWireJson(await list);
  }

  async create(type: ResourceType, namespace: string | undefined, body: object): Promise<unknown> {
    const created =
      this.kindOf(type) === "pods"
        ? this.api.createNamespacedPod({ namespace: namespace ?? "", body })
        : this.api.createNamespace({ body });
    return toWireJson(await created);
  }

  replace(type: ResourceType): Promise<unknown> {
    // The typed serializer would choke on string timestamps; nothing here replaces core objects.
    return Promise.reject(
      new Error(`replace is not supported for ${type.kind}; use a merge patch`),
    );
  }

  async delete(type: ResourceType, key: ObjectKey): Promise<unknown> {
    const deleted =
      this.kindOf(type) === "pods"
        ? this.api.deleteNamespacedPod({ name: key.name, namespace: namespaceOf(key) })
        : this.api.deleteNamespace({ name: key.name });
    return toWireJson(await deleted);
  }

  async mergePatch(
    type: ResourceType,
    key: ObjectKey,
    body: object,
    sub: Subresource,
  ): Promise<unknown> {
    const header = mergePatchHeader();
    if (this.kindOf(type) === "namespaces") {
      const param = { name: key.name, body };
      return toWireJson(
        await (sub === "status"
          ? this.api.patchNamespaceStatus(param, header)
          : this.api.patchNamespace(param, header)),
      );
    }
    const param = { name: key.name, namespace: namespaceOf(key), body };
    return toWireJson(
      await (sub === "status"
        ? this.api.patchNamespacedPodStatus(param, header)
        : this.api.patchNamespacedPod(param, header)),
    );
  }

  private kindOf(type: ResourceType): "pods" | "namespaces" {
    if (type.plural === "pods" || type.plural === "namespaces") return type.plural;
    throw new Error(`core resource "${type.plural}" is not supported by shared/kube`);
  }
}
