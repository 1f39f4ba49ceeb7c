// Builders for AdmissionReview requests used by the admission table tests.
import {
  parseAdmissionReview,
  type AdmissionRequest,
  type KubeObject,
} from "../../../shared/admission/review.js";

export const RULE_GROUP = "batch.sdewan.akraino.org";

export interface ReviewSpec {
  operation: "CREATE" | "UPDATE" | "DELETE";
  kind: string;
  group?: string;
  resource?: string;
  namespace?: string;
  name?: string;
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  username?: string;
  groups?: string[];
}

export function objectOf(
  name: string,
  labels: Record<string, string> = {},
  spec?: unknown,
  extra: { deleting?: boolean; annotations?: Record<string, string> } = {},
): KubeObject {
  return {
    metadata: {
      name,
      namespace: "ns1",
      labels,
      ...(extra.annotations ? { annotations: extra.annotations } : {}),
      ...(extra.deleting ? { deletionTimestamp: "2024-01-01T00:00:00Z" } : {}),
    },
    ...(spec === undefined ? {} : { spec }),
  };
}

export function reviewBody(spec: ReviewSpec): Record<string, unknown> {
  const group = spec.group ?? RULE_GROUP;
  const name = spec.name ?? (spec.object ?? spec.oldObject)?.metadata.name ?? "";
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "0b5f2a7e-0000-4000-8000-000000000001",
      kind: { group, version: group === "apps" ? "v1" : "v1alpha1", kind: spec.kind },
      resource: {
        group,
        version: group === "apps" ? "v1" : "v1alpha1",
        resource: spec.resource ?? `${spec.kind.toLowerCase()}s`,
      },
      name,
      namespace: spec.namespace ?? "ns1",
      operation: spec.operation,
      userInfo: {
        username: spec.username ?? "alice",
        groups: spec.groups ?? ["system:authenticated"],
      },
      object: spec.object ?? null,
      oldObject: spec.oldObject ?? null,
      dryRun: false,
    },
  };
}

export function requestOf(spec: ReviewSpec): AdmissionRequest {
  const parsed = parseAdmissionReview(reviewBody(spec));
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.request;
}
