/**
 * Boundary parsing: Kubernetes Pod, Namespace and Antrea Egress objects (as the API server or the
 * client library returns them) into the few facts egress membership needs. Unknown fields are
 * ignored.
 */
import * as z from "zod";
import type { Labels } from "../core/labels.js";
import type { PodSnapshot } from "./membership.js";
import type { EgressSnapshot } from "./plan-group.js";

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

// Lenient on purpose: the Egress is Antrea's input, and a selector the strict schema would refuse
// (e.g. an unknown operator) must become a Stalled group with a reason, not an unreadable event.
const SelectorSchema = z
  .object({
    matchLabels: z.record(z.string(), z.string()).nullish(),
    matchExpressions: z
      .array(
        z.object({
          key: z.string(),
          operator: z.string(),
          values: z.array(z.string()).nullish(),
        }),
      )
      .nullish(),
  })
  .nullish();

const EgressObjectSchema = z.object({
  metadata: z.object({
    name: z.string().min(1),
    uid: z.string().min(1),
    generation: z.number().int().nullish(),
  }),
  spec: z.object({
    appliedTo: z
      .object({ podSelector: SelectorSchema, namespaceSelector: SelectorSchema })
      .nullish(),
  }),
});

/** Parses an Egress object into what its group depends on; throws a ZodError when unreadable. */
export function egressSnapshotFromObject(object: unknown): EgressSnapshot {
  const egress = EgressObjectSchema.parse(object);
  return {
    name: egress.metadata.name,
    uid: egress.metadata.uid,
    generation: egress.metadata.generation ?? 0,
    appliedTo: egress.spec.appliedTo ?? {},
  };
}

/** Namespace labels by name, the lookup membership uses. */
export function namespaceLabelsByName(
  namespaces: Iterable<NamespaceSnapshot>,
): Map<string, Labels> {
  return new Map([...namespaces].map((ns) => [ns.name, ns.labels]));
}
