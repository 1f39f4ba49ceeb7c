/**
 * AdmissionReview v1 at the boundary: the zod schema of what the API server posts, and a parser that
 * turns anything else into a precise message naming the offending field (answered with HTTP 400).
 */
import * as z from "zod";

export const ADMISSION_API_VERSION = "admission.k8s.io/v1";

const groupVersionKind = z.object({
  group: z.string(),
  version: z.string(),
  kind: z.string().min(1),
});

const groupVersionResource = z.object({
  group: z.string(),
  version: z.string(),
  resource: z.string().min(1),
});

const userInfo = z.object({
  username: z.string().default(""),
  uid: z.string().optional(),
  groups: z.array(z.string()).default([]),
  extra: z.record(z.string(), z.array(z.string())).optional(),
});

const stringMap = z.record(z.string(), z.string());

/** The part of any Kubernetes object the policies read; everything else passes through untouched. */
export const kubeObjectSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: z.looseObject({
    name: z.string().optional(),
    generateName: z.string().optional(),
    namespace: z.string().optional(),
    labels: stringMap.nullish(),
    annotations: stringMap.nullish(),
    deletionTimestamp: z.string().nullish(),
  }),
  spec: z.unknown().optional(),
});

export type KubeObject = z.infer<typeof kubeObjectSchema>;

const operation = z.enum(["CREATE", "UPDATE", "DELETE", "CONNECT"]);
export type AdmissionOperation = z.infer<typeof operation>;

const admissionRequestSchema = z
  .object({
    uid: z.string().min(1),
    kind: groupVersionKind,
    resource: groupVersionResource,
    subResource: z.string().optional(),
    requestKind: groupVersionKind.optional(),
    requestResource: groupVersionResource.optional(),
    name: z.string().default(""),
    namespace: z.string().default(""),
    operation,
    userInfo,
    object: kubeObjectSchema.nullish(),
    oldObject: kubeObjectSchema.nullish(),
    dryRun: z.boolean().optional(),
  })
  .superRefine((request, ctx) => {
    const needsObject = request.operation === "CREATE" || request.operation === "UPDATE";
    const needsOldObject = request.operation === "UPDATE" || request.operation === "DELETE";
    if (needsObject && !request.object) {
      ctx.addIssue({
        code: "custom",
        path: ["object"],
        message: `required for ${request.operation}`,
      });
    }
    if (needsOldObject && !request.oldObject) {
      ctx.addIssue({
        code: "custom",
        path: ["oldObject"],
        message: `required for ${request.operation}`,
      });
    }
  });

export type AdmissionRequest = z.infer<typeof admissionRequestSchema>;

const admissionReviewSchema = z.object({
  apiVersion: z.literal(ADMISSION_API_VERSION),
  kind: z.literal("AdmissionReview"),
  request: admissionRequestSchema,
});

export type ParsedReview =
  | { readonly ok: true; readonly request: AdmissionRequest }
  | {
      readonly ok: false;
      readonly code: "MalformedAdmissionReview";
      readonly message: string;
      /** Present when the request uid could be read, so the reply can still echo it. */
      readonly uid?: string;
    };

/** Formats zod issues as `request.kind.kind: expected string, received undefined; ...`. */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root = ""): string {
  return issues
    .map((issue) => {
      const path = [root, ...issue.path.map(String)].filter((part) => part !== "").join(".");
      return `${path === "" ? "(root)" : path}: ${issue.message}`;
    })
    .join("; ");
}

function readableUid(body: unknown): string | undefined {
  const request: unknown =
    typeof body === "object" && body !== null ? (body as { request?: unknown }).request : undefined;
  const uid: unknown =
    typeof request === "object" && request !== null
      ? (request as { uid?: unknown }).uid
      : undefined;
  return typeof uid === "string" && uid !== "" ? uid : undefined;
}

/** Parses an AdmissionReview v1 request body; never throws. */
export function parseAdmissionReview(body: unknown): ParsedReview {
  const parsed = admissionReviewSchema.safeParse(body);
  if (parsed.success) return { ok: true, request: parsed.data.request };
  const uid = readableUid(body);
  return {
    ok: false,
    code: "MalformedAdmissionReview",
    message: `malformed AdmissionReview (${ADMISSION_API_VERSION} expected): ${describeIssues(parsed.error.issues)}`,
    ...(uid === undefined ? {} : { uid }),
  };
}
