/**
 * Boundary parsing: Kubernetes Pod and Namespace objects (as the API server or the client library
 * returns them) into the few facts egress membership needs. Unknown fields are ignored.
 */
import { z } from "zod";
import type { Labels } from "./labels.js";
import type { PodSnapshot } from "./membership.js";

const LabelsSchema = z.record(z.string(), z.string()).nullish();

const PodObjectSchema = z.object({
  metadata: z.object({ name: z.string(), namespace: z.string(), labels: LabelsSchema }),
  spec: z.object({ nodeName: z.string().nullish(), hostNetwork: z.boolean().nullish() }).nullish(),
  status: z
    .object({
      phase: z.string().nullish(),
      podIP: z.string().nullish(),
      podIPs: z.array(z.object({ ip: z.string() })).nullish(),
    })
    .nullish(),
});

const NamespaceObjectSchema = z.object({
  metadata: z.object({ name: z.string(), labels: LabelsSchema }),
});

type PodStatus = z.infer<typeof PodObjectSchema>["status"];

/** status.podIPs in order, falling back to status.podIP; empty strings dropped, duplicates removed. */
function podIps(status: PodStatus): string[] {
  const listed = (status?.podIPs ?? []).map((entry) => entry.ip);
  const ips = listed.length > 0 ? listed : [status?.podIP ?? ""];
  return [...new Set(ips.filter((ip) => ip !== ""))];
}

/** Parses a Pod object; throws a ZodError when name or namespace is missing. */
export function podSnapshotFromObject(object: unknown): PodSnapshot {
  const pod = PodObjectSchema.parse(object);
  return {
    name: pod.metadata.name,
    namespace: pod.metadata.namespace,
    labels: pod.metadata.labels ?? {},
    nodeName: pod.spec?.nodeName ?? "",
    hostNetwork: pod.spec?.hostNetwork ?? false,
    phase: pod.status?.phase ?? "",
    ips: podIps(pod.status),
  };
}

export interface NamespaceSnapshot {
  readonly name: string;
  readonly labels: Labels;
}

/** Parses a Namespace object; throws a ZodError when the name is missing. */
export function namespaceSnapshotFromObject(object: unknown): NamespaceSnapshot {
  const namespace = NamespaceObjectSchema.parse(object);
  return { name: namespace.metadata.name, labels: namespace.metadata.labels ?? {} };
}

/** Namespace labels by name, the lookup membership uses. */
export function namespaceLabelsByName(
  namespaces: Iterable<NamespaceSnapshot>,
): Map<string, Labels> {
  return new Map([...namespaces].map((ns) => [ns.name, ns.labels]));
}
