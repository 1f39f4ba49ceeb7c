/**
 * What every SDEWAN rule kind shares: API group, labels, metadata, and the status of DESIGN.md §3.
 */
import * as z from "zod";
import type { SpecIssue } from "./errors.js";

export { RULE_GROUP, RULE_VERSION, RULE_API_VERSION } from "../core/api-groups.js";

/**
 * The cap on a whole rule spec, as compact JSON: 128 KiB. An UPDATE AdmissionReview carries
 * the object and the old object (and kubectl's last-applied annotation, itself limited to
 * 256 KiB, repeats the spec), so two copies with metadata stay far under the webhook's 3 MiB
 * body limit and the API server's 1.5 MiB object limit; the CNF's request body is far under it too.
 */
export const RULE_SPEC_MAX_BYTES = 131_072;

/** Ties a rule CR to the CNF Deployment in the same namespace that carries the same value. */
export const PURPOSE_LABEL = "sdewanPurpose";
/** Optional label read by the bucket-permission admission policy. */
export const BUCKET_TYPE_LABEL = "sdewan-bucket-type";

export const ruleLabelsSchema = z
  .object({
    [PURPOSE_LABEL]: z.string().min(1).optional(),
    [BUCKET_TYPE_LABEL]: z.string().optional(),
  })
  .catchall(z.string());

/** The metadata fields the functions read; everything else the API server sends is kept as is. */
export const ruleMetadataSchema = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
  generation: z.int().optional(),
  creationTimestamp: z.string().optional(),
  deletionTimestamp: z.string().optional(),
  finalizers: z.array(z.string()).optional(),
  labels: ruleLabelsSchema.optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});
export type RuleMetadata = z.infer<typeof ruleMetadataSchema>;

export const RULE_CONDITION_TYPES = ["Ready", "Reconciling", "Stalled"] as const;
export type RuleConditionType = (typeof RULE_CONDITION_TYPES)[number];

/** The when of a metav1.Condition, the same in every kind's status (rules, EgressGroup, ClusterLink). */
export const conditionTimingFields = {
  lastTransitionTime: z.iso
    .datetime({ offset: true })
    .describe("When status last changed (RFC 3339)."),
  observedGeneration: z
    .int()
    .min(0)
    .optional()
    .describe("metadata.generation the condition was computed from."),
};

export const ruleConditionSchema = z
  .object({
    type: z
      .enum(RULE_CONDITION_TYPES)
      .describe(
        "Ready: applied to every CNF pod. Reconciling: work in progress or waiting for the CNF. Stalled: cannot be applied as it is.",
      ),
    status: z.enum(["True", "False", "Unknown"]).describe("Whether the condition holds."),
    reason: z
      .string()
      .min(1)
      .describe("One CamelCase word for machines, e.g. Applied, CnfNotReady, InvalidSpec."),
    message: z.string().describe("What happened and what to do about it, for people."),
    ...conditionTimingFields,
  })
  .describe("One observation of the rule's state, in the kstatus convention.");
export type RuleCondition = z.infer<typeof ruleConditionSchema>;

/** Status of every rule kind (DESIGN.md §3). Written by the controller only. */
export const ruleStatusSchema = z
  .object({
    appliedVersion: z
      .string()
      .optional()
      .describe(
        "metadata.resourceVersion that was applied to every CNF pod; cleared when the CNF goes not-ready.",
      ),
    appliedGeneration: z
      .int()
      .min(0)
      .optional()
      .describe("metadata.generation that was applied to every CNF pod."),
    appliedTime: z.iso
      .datetime({ offset: true })
      .optional()
      .describe("When the rule was last applied to every CNF pod (RFC 3339)."),
    inSync: z
      .boolean()
      .optional()
      .describe("True only when every ready pod of the CNF holds this rule as specified."),
    observedGeneration: z
      .int()
      .min(0)
      .optional()
      .describe("metadata.generation the controller last acted on."),
    driftRepairs: z
      .int()
      .min(1)
      .optional()
      .describe(
        "How many times a resync found the applied rule changed or missing on a CNF pod and wrote it back, since driftSince.",
      ),
    driftSince: z.iso
      .datetime({ offset: true })
      .optional()
      .describe(
        "Start of the window driftRepairs counts in (RFC 3339); repairs after the window start a new count.",
      ),
    conditions: z
      .array(ruleConditionSchema)
      .optional()
      .meta({
        description: "Ready, Reconciling and Stalled conditions, one of each type at most.",
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["type"],
      }),
    message: z
      .string()
      .optional()
      .describe("Latest error or progress note, e.g. CNF cnf-1 has 1/2 pods ready."),
  })
  .describe("What the controller observed and applied.");
export type RuleStatus = z.infer<typeof ruleStatusSchema>;

/** Turns zod issues into `spec.a[0].b: message` form, prefixed with where the value sits. */
export function issuesFromZod(error: z.ZodError, prefix: string): SpecIssue[] {
  return error.issues.map((issue) => ({
    path: formatPath(prefix, issue.path),
    message: isMissing(issue) ? "required" : issue.message,
  }));
}

/** Parse options that let issuesFromZod say "required" for a missing field. */
export const PARSE_OPTIONS = { reportInput: true } as const;

function isMissing(issue: z.core.$ZodIssue): boolean {
  return issue.code === "invalid_type" && "input" in issue && issue.input === undefined;
}

function formatPath(prefix: string, path: readonly PropertyKey[]): string {
  let text = prefix;
  for (const segment of path) {
    if (typeof segment === "number") text += `[${segment}]`;
    else text += text === "" ? String(segment) : `.${String(segment)}`;
  }
  return text === "" ? "(root)" : text;
}

/** Null when a spec fits RULE_SPEC_MAX_BYTES, else the issue to report on `spec`. */
export function specSizeProblem(spec: unknown): string | null {
  const bytes = new TextEncoder().encode(JSON.stringify(spec) ?? "").length;
  if (bytes <= RULE_SPEC_MAX_BYTES) return null;
  return `the spec is ${bytes} bytes as JSON; at most ${RULE_SPEC_MAX_BYTES} bytes (128 KiB) are allowed for a whole rule spec: shorten its largest fields`;
}
