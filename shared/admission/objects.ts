/** Small readers over admitted objects: labels, names, deletion state. */
import { NFN_NETWORK_ANNOTATION, PURPOSE_LABEL } from "../kinds/index.js";
import type { AdmissionRequest, KubeObject } from "./review.js";

export { NFN_NETWORK_ANNOTATION, PURPOSE_LABEL };

/** A label value; an empty value counts as absent, as upstream treated it. */
export function labelOf(object: KubeObject | null | undefined, key: string): string | undefined {
  const value = object?.metadata.labels?.[key];
  return value === undefined || value === "" ? undefined : value;
}

export function isDeleting(object: KubeObject | null | undefined): boolean {
  return typeof object?.metadata.deletionTimestamp === "string";
}

/** The object the request is about: the new object, or the old one on DELETE. */
export function subjectObject(request: AdmissionRequest): KubeObject | undefined {
  return request.object ?? request.oldObject ?? undefined;
}

/** "ns/name" (or "ns/<generated>" on a CREATE with generateName), for messages. */
export function describeObject(request: AdmissionRequest): string {
  const name = request.name || subjectObject(request)?.metadata.name || "<generated name>";
  return `${request.kind.kind} ${request.namespace}/${name}`;
}

export function quoteValue(value: string | undefined): string {
  return value === undefined ? "unset" : `"${value}"`;
}
