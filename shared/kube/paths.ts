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
  /** Page size; the answer's metadata.continue then asks for the next page. */
  readonly limit?: number;
  /** metadata.continue of the previous page. */
  readonly continue?: string;
}

export interface WatchQuery {
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Events after this version (a list's); absent: every current object as ADDED first. */
  readonly resourceVersion?: string;
  /** Ask for BOOKMARK events: the version moves on while no object changes. */
  readonly allowWatchBookmarks?: boolean;
  /** The server ends the watch after this long. */
  readonly timeoutSeconds?: number;
}

/** Enough of a ResourceType to build its collection's path. */
export type ResourceLocation = Pick<ResourceType, "group" | "version" | "plural" | "namespaced">;

export type Subresource = "" | "status";

const segment = (value: string): string => encodeURIComponent(value);

/**
 * The collection's path: `/api/v1/namespaces/ns1/pods`, `/apis/g/v/plural`. A namespaced kind
 * without a namespace is the collection across every namespace (lists and watches only).
 */
export function collectionPath(type: ResourceLocation, namespace: string | undefined): string {
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
  const { labelSelector, fieldSelector, resourceVersion, limit } = query;
  return queryString({
    labelSelector,
    fieldSelector,
    resourceVersion,
    limit,
    continue: query.continue,
  });
}

/** `?watch=true&...`, URL-encoded. */
export function watchQueryString(query: WatchQuery): string {
  const { labelSelector, fieldSelector, resourceVersion, allowWatchBookmarks, timeoutSeconds } =
    query;
  return queryString({
    watch: true,
    labelSelector,
    fieldSelector,
    resourceVersion,
    allowWatchBookmarks,
    timeoutSeconds,
  });
}

/** Parameters in the order given; absent and empty ones are left out. */
function queryString(parameters: Record<string, string | number | boolean | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined && value !== "") params.set(name, String(value));
  }
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}
