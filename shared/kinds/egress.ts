/**
 * Schemas of the egress kinds: Antrea's own Egress (crd.antrea.io/v1beta1, read as input, facts
 * from reference egress-clusterlink-mizar.md A.1-A.2) and our EgressGroup
 * (sdewan.akraino.org/v1alpha1, written by egress-group-sync).
 *
 * EgressGroup decisions: cluster-scoped (it has the name of the cluster-scoped Egress and an
 * owner reference to it, which a namespaced object could not hold). No spec: the object is
 * computed output, all under `status`. No status subresource, so one create or patch writes the
 * whole group, and metadata.generation counts membership changes.
 */
import * as z from "zod";
import { conditionTimingFields } from "./common.js";
import {
  EGRESS_API_VERSION,
  EGRESS_GROUP_API_VERSION,
  EGRESS_GROUP_KIND,
  EGRESS_KIND,
} from "../core/api-groups.js";

// ---- Shared Kubernetes shapes

export const labelSelectorRequirementSchema = z
  .object({
    key: z.string().min(1).describe("Label key the selector applies to."),
    operator: z
      .enum(["In", "NotIn", "Exists", "DoesNotExist"])
      .describe("In, NotIn, Exists or DoesNotExist."),
    values: z
      .array(z.string())
      .optional()
      .describe("Values for In and NotIn; empty for Exists and DoesNotExist."),
  })
  .describe("A label selector requirement.");

export const labelSelectorSchema = z
  .object({
    matchLabels: z
      .record(z.string(), z.string())
      .optional()
      .describe("Labels that must all match (AND of key=value)."),
    matchExpressions: z
      .array(labelSelectorRequirementSchema)
      .optional()
      .describe("Requirements that must all match."),
  })
  .meta({
    description: "A standard Kubernetes label selector; an empty selector selects everything.",
    "x-kubernetes-map-type": "atomic",
  });
export type LabelSelector = z.infer<typeof labelSelectorSchema>;

const conditionStatus = z.enum(["True", "False", "Unknown"]).describe("True, False or Unknown.");

// ---- Antrea Egress (crd.antrea.io/v1beta1)

export {
  EGRESS_API_GROUP,
  EGRESS_VERSION,
  EGRESS_API_VERSION,
  EGRESS_KIND,
  EGRESS_PLURAL,
} from "../core/api-groups.js";

export const egressSpecSchema = z
  .object({
    appliedTo: z
      .object({
        podSelector: labelSelectorSchema.optional().describe("Pods the Egress applies to."),
        namespaceSelector: labelSelectorSchema
          .optional()
          .describe(
            "Namespaces whose Pods the Egress applies to (combined with podSelector when both are set).",
          ),
      })
      .describe("Which Pods' egress traffic uses the Egress IP."),
    egressIP: z
      .string()
      .optional()
      .describe("The SNAT IP (IPv4 or IPv6); allocated from externalIPPool when empty."),
    egressIPs: z
      .array(z.string())
      .optional()
      .describe("SNAT IPs, index-correlated with externalIPPools. Not supported by Antrea yet."),
    externalIPPool: z
      .string()
      .optional()
      .describe("Name of the ExternalIPPool to allocate egressIP from."),
    externalIPPools: z
      .array(z.string())
      .optional()
      .describe("ExternalIPPools, index-correlated with egressIPs. Not supported by Antrea yet."),
    bandwidth: z
      .object({
        rate: z.string().min(1).describe("Rate limit, e.g. 300k, 10M, 2G."),
        burst: z.string().min(1).describe("Burst size, e.g. 300k, 10M, 2G."),
      })
      .optional()
      .describe("Egress QoS for the selected Pods' traffic."),
  })
  .superRefine((spec, ctx) => {
    const single = spec.egressIP !== undefined || spec.externalIPPool !== undefined;
    const multi = spec.egressIPs !== undefined || spec.externalIPPools !== undefined;
    if (single === multi) {
      ctx.addIssue({
        code: "custom",
        message:
          "set exactly one of (egressIP and/or externalIPPool) or (egressIPs and/or externalIPPools)",
      });
    }
  })
  .meta({
    description: "What the Egress selects and which SNAT IP its traffic uses.",
    // The same choice as Antrea's CRD: single-IP fields or list fields, never both.
    oneOf: [
      { anyOf: [{ required: ["egressIP"] }, { required: ["externalIPPool"] }] },
      { anyOf: [{ required: ["egressIPs"] }, { required: ["externalIPPools"] }] },
    ],
  });
export type EgressSpec = z.infer<typeof egressSpecSchema>;

export const egressConditionSchema = z
  .object({
    type: z.string().min(1).describe("IPAllocated or IPAssigned."),
    status: conditionStatus,
    lastTransitionTime: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("When status last changed."),
    reason: z
      .string()
      .optional()
      .describe("Machine-readable reason, e.g. Allocated, AssignmentError."),
    message: z.string().optional().describe("Human-readable detail."),
  })
  .describe("One condition of the Egress.");

export const egressStatusSchema = z
  .object({
    egressNode: z.string().optional().describe("Node that holds the Egress IP."),
    egressIP: z
      .string()
      .optional()
      .describe("Effective SNAT IP; empty when it is not assigned to any Node."),
    conditions: z
      .array(egressConditionSchema)
      .optional()
      .describe("IPAllocated and IPAssigned conditions."),
  })
  .describe("Where the Egress IP is realised.");

export const egressSchema = z.object({
  apiVersion: z.literal(EGRESS_API_VERSION),
  kind: z.literal(EGRESS_KIND),
  metadata: z.looseObject({
    name: z.string().min(1),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    generation: z.int().optional(),
    deletionTimestamp: z.string().optional(),
  }),
  spec: egressSpecSchema,
  status: egressStatusSchema.optional(),
});
export type Egress = z.infer<typeof egressSchema>;

// ---- EgressGroup (sdewan.akraino.org/v1alpha1)

export {
  EGRESS_GROUP_API_GROUP,
  EGRESS_GROUP_VERSION,
  EGRESS_GROUP_API_VERSION,
  EGRESS_GROUP_KIND,
  EGRESS_GROUP_PLURAL,
} from "../core/api-groups.js";

export const egressGroupMemberSchema = z
  .object({
    pod: z
      .object({
        name: z.string().min(1).describe("Pod name."),
        namespace: z.string().min(1).describe("Pod namespace."),
      })
      .describe("The member Pod."),
    nodeName: z
      .string()
      .optional()
      .describe("Node the Pod runs on; absent while it is not scheduled."),
    ips: z.array(z.string()).describe("The Pod's IPs (status.podIPs), empty until it has one."),
  })
  .describe("One Pod selected by the Egress.");
export type EgressGroupMember = z.infer<typeof egressGroupMemberSchema>;

export const egressGroupConditionSchema = z
  .object({
    type: z.string().min(1).describe("Condition type, e.g. Ready."),
    status: conditionStatus,
    reason: z.string().min(1).describe("One CamelCase word for machines."),
    message: z.string().describe("Detail for people."),
    ...conditionTimingFields,
  })
  .describe("One observation about the group.");

export const egressGroupStatusSchema = z
  .object({
    members: z
      .array(egressGroupMemberSchema)
      .describe("Pods selected by the Egress, sorted by namespace, then name."),
    memberCount: z.int().min(0).describe("Number of members."),
    observedEgressGeneration: z
      .int()
      .min(0)
      .optional()
      .describe("metadata.generation of the Egress the members were computed from."),
    conditions: z
      .array(egressGroupConditionSchema)
      .optional()
      .meta({
        description: "Conditions, one per type.",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
      }),
  })
  .describe("Membership computed by egress-group-sync from the Egress's appliedTo.");
export type EgressGroupStatus = z.infer<typeof egressGroupStatusSchema>;

export const egressGroupSchema = z.object({
  apiVersion: z.literal(EGRESS_GROUP_API_VERSION),
  kind: z.literal(EGRESS_GROUP_KIND),
  metadata: z.looseObject({
    name: z.string().min(1),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    generation: z.int().optional(),
    ownerReferences: z
      .array(
        z.looseObject({
          apiVersion: z.string(),
          kind: z.string(),
          name: z.string(),
          uid: z.string(),
          controller: z.boolean().optional(),
          blockOwnerDeletion: z.boolean().optional(),
        }),
      )
      .optional(),
  }),
  status: egressGroupStatusSchema.optional(),
});
export type EgressGroup = z.infer<typeof egressGroupSchema>;
