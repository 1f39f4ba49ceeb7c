/**
 * Where a resource lives on the API server: the request path of a collection, an object or its
 * status, and a list's query string. Pure, so every URL shape is checked by unit tests.
 */
import { KubeError } from "./errors.js";
import type { ResourceType } from "./resources.js";

export interface ObjectKey {
  readonly name: string;
  /** Omit (or "") for cluster-scoped objects. */
  readonly namespace?: string;
}

export interface ListQuery {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** "0": any version the API server's watch cache holds, served without a consistency wait. */
  readonly resourceVersion?: string;
}

export type Subresource = "" | "status";

const segment = (value: string): string => encodeURIComponent(value);

/**
 * The collection's path: `/api/v1/namespaces/ns1/pods`, `/apis/g/v/plural`. A namespaced kind
 * without a namespace is the collection across every namespace (lists only).
 */
export function collectionPath(type: ResourceType, namespace: string | undefined): string {
  const root = type.group === "" ? `/api/${type.version}` : `/apis/${type.group}/${type.version}`;
  const scope = type.namespaced && namespace ? `/namespaces/${segment(namespace)}` : "";
  return `${root}${scope}/${type.plural}`;
}

/** The path of one object (or its subresource); a namespaced kind needs the namespace. */
export function objectPath(type: ResourceType, key: ObjectKey, sub: Subresource = ""): string {
  if (type.namespaced && !key.namespace) {
    throw new KubeError(
      "invalid",
      `${type.kind} ${key.name}: a namespaced object needs a namespace`,
    );
  }
  if (key.name === "") throw new KubeError("invalid", `${type.kind}: an object needs a name`);
  const path = `${collectionPath(type, key.namespace)}/${segment(key.name)}`;
  return sub === "" ? path : `${path}/${sub}`;
}

/** `?labelSelector=...&fieldSelector=...&resourceVersion=...`, URL-encoded; "" for none. */
export function listQueryString(query: ListQuery): string {
  const params = new URLSearchParams();
  if (query.labelSelector) params.set("labelSelector", query.labelSelector);
  if (query.fieldSelector) params.set("fieldSelector", query.fieldSelector);
  if (query.resourceVersion) params.set("resourceVersion", query.resourceVersion);
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
