/**
 * Schemas of ClusterLink's kinds (clusterlink.net/v1alpha1): Peer, Export, Import, AccessPolicy
 * and PrivilegedAccessPolicy, with upstream's field names and defaults (reference
 * egress-clusterlink-mizar.md B.1), so existing ClusterLink manifests apply unchanged.
 *
 * They live here, beside the egress kinds, because the CRD generator (crds.ts) builds every CRD
 * from this layer; shared/clusterlink re-exports them and owns what they mean.
 *
 * Status goes beyond upstream where the design proposal asked: observedGeneration and the
 * Ready/Reconciling/Stalled conditions beside upstream's own condition types.
 */
import * as z from "zod";
import { compileLabelSelector, type CompiledSelector } from "../core/label-selector.js";
import { DNS1035_LABEL_PATTERN, dns1035LabelProblem } from "../core/labels.js";
import { conditionTimingFields } from "./common.js";
import { labelSelectorSchema } from "./egress.js";

export {
  CLUSTERLINK_GROUP,
  CLUSTERLINK_VERSION,
  CLUSTERLINK_API_VERSION,
  CLUSTERLINK_KINDS,
  type ClusterLinkKind,
} from "../core/api-groups.js";

/** A TCP port as upstream types it (uint16); 0 in targetPort means "lease one for me". */
const port = z.int().min(0).max(65535);

// ---- Status shared by Peer, Export and Import

export const clusterLinkConditionSchema = z
  .object({
    type: z
      .string()
      .min(1)
      .describe("Ready, Reconciling, Stalled, or upstream's own type (e.g. ImportServiceValid)."),
    status: z.enum(["True", "False", "Unknown"]).describe("True, False or Unknown."),
    reason: z.string().describe("One CamelCase word for machines, e.g. Leased, Verified, Error."),
    message: z.string().describe("Detail for people; empty when there is nothing to add."),
    ...conditionTimingFields,
  })
  .describe("One observation about the object (metav1.Condition).");
export type ClusterLinkCondition = z.infer<typeof clusterLinkConditionSchema>;

const conditionsField = z
  .array(clusterLinkConditionSchema)
  .optional()
  .meta({
    description: "Conditions, one per type.",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
  });

const observedGenerationField = z
  .int()
  .min(0)
  .optional()
  .describe("metadata.generation the controller last reconciled.");

export const clusterLinkStatusSchema = z
  .object({ observedGeneration: observedGenerationField, conditions: conditionsField })
  .describe("Reconciliation state written by the ClusterLink functions.");
export type ClusterLinkStatus = z.infer<typeof clusterLinkStatusSchema>;

// ---- Peer

export const peerSpecSchema = z
  .object({
    gateways: z
      .array(
        z
          .object({
            host: z.string().describe("Gateway host name or IP address."),
            port: port.describe("Gateway port."),
          })
          .describe("One gateway of the remote peer."),
      )
      .describe("The peer's gateways; heartbeats go to each of them."),
  })
  .describe("A remote ClusterLink peer and its gateways.");
export type PeerSpec = z.infer<typeof peerSpecSchema>;

export const peerStatusSchema = clusterLinkStatusSchema
  .extend({
    labels: z
      .record(z.string(), z.string())
      .optional()
      .describe("Labels the remote peer reported in its last heartbeat."),
    consecutiveSuccesses: z
      .int()
      .min(0)
      .optional()
      .describe(
        "While unreachable: heartbeats answered in a row (3 make the peer reachable). The function keeps its thresholds here.",
      ),
    consecutiveFailures: z
      .int()
      .min(0)
      .optional()
      .describe("While reachable: heartbeats failed in a row (5 make the peer unreachable)."),
  })
  .describe("Reachability of the peer.");

// ---- Export

export const exportSpecSchema = z
  .object({
    host: z
      .string()
      .optional()
      .describe("External host to export; empty exports the Service named like the Export."),
    port: port
      .optional()
      .describe("Exported port; may be omitted when the Service has exactly one port."),
  })
  .describe("A local service made available to remote peers.");
export type ExportSpec = z.infer<typeof exportSpecSchema>;

// ---- Import

export const LB_SCHEMES = ["random", "round-robin", "static"] as const;

export const importSourceSchema = z
  .object({
    peer: z.string().describe("Name of the Peer that exports the service."),
    exportName: z.string().describe("Name of the Export at that peer."),
    exportNamespace: z.string().describe("Namespace of the Export at that peer."),
  })
  .describe("One remote provider of the imported service.");

export const importSpecSchema = z
  .object({
    port: port.describe("Port the imported service listens on, for local clients."),
    targetPort: port
      .optional()
      .describe("Dataplane listen port; 0 or absent: leased and written by the controller."),
    sources: z
      .array(importSourceSchema)
      .optional()
      .describe("Remote exports that provide the service."),
    lbScheme: z
      .enum(LB_SCHEMES)
      .default("round-robin")
      .describe("How connections are spread over the sources: random, round-robin or static."),
  })
  .describe("A remote service made available in this namespace.");
export type ImportSpec = z.infer<typeof importSpecSchema>;

/** Upstream's CEL rule and message: the name goes into the system Service's name. */
export const IMPORT_NAME_RULE = {
  rule: "size(self.metadata.name) <= 63",
  message: "import name cannot exceed 63 chars",
} as const;

/**
 * Why an Import's name cannot name the Services made for it, or null. The user Service is named
 * like the Import, and the system Service is the Import's name in the ClusterLink namespace, else
 * begins with its first 10 characters: all of them are DNS-1035 labels exactly when the name is
 * one. The message says what to do, with a name that would do.
 */
export function importNameProblem(name: string): string | null {
  const problem = dns1035LabelProblem(name);
  if (problem === null) return null;
  return `the Import's name '${name}' cannot name its Services (${problem}); Imports cannot be renamed: recreate it as '${suggestedLabel(name)}'`;
}

/** A DNS-1035 label close to `name`: lower case, other characters as '-', a letter first. */
function suggestedLabel(name: string): string {
  const dashed = name.toLowerCase().replace(/[^-a-z0-9]+/g, "-");
  const lettered = /^[a-z]/.test(dashed) ? dashed : `i-${dashed}`;
  return lettered.slice(0, 63).replace(/-+$/, "") || "import";
}

/**
 * The same check in the CRD, so it holds with the webhook down: on create only (names never
 * change, and `oldSelf` is set on every update), so an Import stored before this rule keeps
 * taking status and spec writes (and is Stalled InvalidName by clusterlink-import).
 */
export const IMPORT_SERVICE_NAME_RULE = {
  rule: `oldSelf.hasValue() || self.metadata.name.matches('${DNS1035_LABEL_PATTERN}')`,
  optionalOldSelf: true,
  message:
    "import name must be a DNS-1035 label (lower case letters, digits and '-', starting with a letter): the Import's Services are named after it",
} as const;

// ---- AccessPolicy, PrivilegedAccessPolicy

export const workloadSetOrSelectorSchema = z
  .object({
    workloadSets: z
      .array(z.string())
      .optional()
      .describe("Named workload sets (not supported yet)."),
    workloadSelector: labelSelectorSchema
      .optional()
      .describe("Selects workloads by their attributes."),
  })
  .describe("Workloads a policy applies to: exactly one of workloadSets or workloadSelector.");

export const accessPolicySpecSchema = z
  .object({
    action: z.enum(["allow", "deny"]).describe("allow or deny."),
    from: z
      .array(workloadSetOrSelectorSchema)
      .describe("Connection sources the policy applies to."),
    to: z
      .array(workloadSetOrSelectorSchema)
      .describe("Connection destinations the policy applies to."),
  })
  .describe("Allows or denies connections between workloads.");
export type AccessPolicySpec = z.infer<typeof accessPolicySpecSchema>;

/**
 * One from/to item of a policy, compiled: its selector; `unsupported` for workloadSets (upstream's
 * field, admitted, but nothing resolves the sets); `invalid` with what to fix.
 */
export type WorkloadItemCompilation =
  | { readonly kind: "selector"; readonly selector: CompiledSelector }
  | { readonly kind: "unsupported" | "invalid"; readonly problems: readonly string[] };

/**
 * Compiles one from/to item as stored (not trusted to match the schema): exactly one of
 * workloadSets and workloadSelector, and a valid selector. Admission refuses what is `invalid`;
 * clusterlink-authz evaluates what admission missed or admitted.
 */
export function compileWorkloadItem(item: unknown, path: string): WorkloadItemCompilation {
  const parsed = workloadSetOrSelectorSchema.safeParse(item);
  if (!parsed.success) {
    const problems = parsed.error.issues.map(
      (i) => `${[path, ...i.path.map(String)].join(".")}: ${i.message}`,
    );
    return { kind: "invalid", problems };
  }
  const { workloadSets, workloadSelector } = parsed.data;
  if ((workloadSets === undefined) === (workloadSelector === undefined)) {
    const problems = [`${path} must set exactly one of workloadSets and workloadSelector`];
    return { kind: "invalid", problems };
  }
  if (workloadSelector === undefined) {
    const problems = [
      `${path}.workloadSets: not supported (upstream neither), use a workloadSelector`,
    ];
    return { kind: "unsupported", problems };
  }
  const compiled = compileLabelSelector(workloadSelector, `${path}.workloadSelector`);
  return compiled.ok
    ? { kind: "selector", selector: compiled.selector }
    : { kind: "invalid", problems: compiled.errors.map((e) => `${e.path}: ${e.message}`) };
}
