/**
 * zod schemas of the objects read through shared/kube: only the fields this project reads are
 * typed, the rest passes through. Specs of our own kinds are parsed by their owners
 * (shared/kinds, shared/egress), leniently, so one bad object cannot make a list unreadable.
 */
import * as z from "zod";

const stringMap = z.record(z.string(), z.string());

export const ownerReferenceSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  name: z.string(),
  uid: z.string(),
  controller: z.boolean().optional(),
  blockOwnerDeletion: z.boolean().optional(),
});
export type OwnerReference = z.infer<typeof ownerReferenceSchema>;

export const objectMetaSchema = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.number().int().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  labels: stringMap.optional(),
  annotations: stringMap.optional(),
  finalizers: z.array(z.string()).optional(),
  ownerReferences: z.array(ownerReferenceSchema).optional(),
});
export type ObjectMeta = z.infer<typeof objectMetaSchema>;

/** Any object: apiVersion, kind, metadata; spec and status untyped. */
export const kubeObjectSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.string(),
  metadata: objectMetaSchema,
  spec: z.unknown().optional(),
  status: z.unknown().optional(),
});
export type KubeObject = z.infer<typeof kubeObjectSchema>;

const labelSelectorSchema = z.looseObject({
  matchLabels: stringMap.optional(),
  matchExpressions: z
    .array(
      z.looseObject({
        key: z.string(),
        operator: z.string(),
        values: z.array(z.string()).optional(),
      }),
    )
    .optional(),
});

const podTemplateSchema = z.looseObject({
  metadata: z
    .looseObject({ labels: stringMap.optional(), annotations: stringMap.optional() })
    .optional(),
});

export const deploymentSchema = kubeObjectSchema.extend({
  spec: z.looseObject({
    replicas: z.number().int().optional(),
    selector: labelSelectorSchema,
    template: podTemplateSchema,
  }),
  status: z
    .looseObject({
      observedGeneration: z.number().int().optional(),
      replicas: z.number().int().optional(),
      readyReplicas: z.number().int().optional(),
      availableReplicas: z.number().int().optional(),
      updatedReplicas: z.number().int().optional(),
    })
    .optional(),
});
export type Deployment = z.infer<typeof deploymentSchema>;

export const replicaSetSchema = kubeObjectSchema.extend({
  spec: z.looseObject({
    replicas: z.number().int().optional(),
    selector: labelSelectorSchema,
    template: podTemplateSchema.optional(),
  }),
  status: z.looseObject({ replicas: z.number().int().optional() }).optional(),
});
export type ReplicaSet = z.infer<typeof replicaSetSchema>;

export const podSchema = kubeObjectSchema.extend({
  spec: z.looseObject({ nodeName: z.string().optional() }).optional(),
  status: z
    .looseObject({
      phase: z.string().optional(),
      podIP: z.string().optional(),
      podIPs: z.array(z.looseObject({ ip: z.string() })).optional(),
      conditions: z.array(z.looseObject({ type: z.string(), status: z.string() })).optional(),
    })
    .optional(),
});
export type Pod = z.infer<typeof podSchema>;

export const namespaceSchema = kubeObjectSchema;
export type Namespace = z.infer<typeof namespaceSchema>;

export const servicePortSchema = z.looseObject({
  name: z.string().optional(),
  protocol: z.string().optional(),
  port: z.number().int(),
  targetPort: z.union([z.number().int(), z.string()]).optional(),
});
export type ServicePort = z.infer<typeof servicePortSchema>;

export const serviceSchema = kubeObjectSchema.extend({
  spec: z
    .looseObject({
      type: z.string().optional(),
      externalName: z.string().optional(),
      selector: stringMap.optional(),
      ports: z.array(servicePortSchema).optional(),
    })
    .optional(),
});
export type Service = z.infer<typeof serviceSchema>;

/** A coordination.k8s.io/v1 Lease: who holds it, since when, for how long. */
export const leaseSchema = kubeObjectSchema.extend({
  spec: z
    .looseObject({
      holderIdentity: z.string().optional(),
      leaseDurationSeconds: z.number().int().optional(),
      acquireTime: z.string().optional(),
      renewTime: z.string().optional(),
    })
    .optional(),
});
export type Lease = z.infer<typeof leaseSchema>;

/** A ConfigMap: string data only (binaryData is not read). */
export const configMapSchema = kubeObjectSchema.extend({
  data: stringMap.optional(),
});
export type ConfigMap = z.infer<typeof configMapSchema>;

/** A Secret: `data` values are base64, as the API serves them. */
export const secretSchema = kubeObjectSchema.extend({
  type: z.string().optional(),
  data: stringMap.optional(),
});
export type Secret = z.infer<typeof secretSchema>;
