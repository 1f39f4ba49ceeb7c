/**
 * zod schemas for the parts of an incoming event we read. Loose where senders add fields we do not
 * use (a full Kubernetes object), strict where a typo would silently widen a resync.
 */
import * as z from "zod";
import { RESYNC_EVENT_TYPE } from "./types.js";

/** Knative PingSource's event type; accepted as a resync carrying the same data as ours. */
export const PING_EVENT_TYPE = "dev.knative.sources.ping";

export const APISERVER_TYPE_PATTERN =
  /^dev\.knative\.apiserver\.(resource|ref)\.(add|update|delete)$/;

export const ACCEPTED_EVENT_TYPES: readonly string[] = [
  "dev.knative.apiserver.resource.{add,update,delete}",
  "dev.knative.apiserver.ref.{add,update,delete}",
  RESYNC_EVENT_TYPE,
  PING_EVENT_TYPE,
];

const optionalString = z.string().optional();

/** The attributes of a CloudEvent after the SDK has read it, extensions included. */
export const cloudEventAttributesSchema = z.looseObject({
  id: z.string(),
  type: z.string().min(1).optional(),
  data: z.unknown().optional(),
  // ApiServerSource's extension attributes.
  kind: optionalString,
  apiversion: optionalString,
  name: optionalString,
  namespace: optionalString,
});
export type CloudEventAttributes = z.infer<typeof cloudEventAttributesSchema>;

/** Reference mode data: a corev1.ObjectReference with only these four fields. */
export const referenceDataSchema = z.looseObject({
  kind: optionalString,
  namespace: optionalString,
  name: optionalString,
  apiVersion: optionalString,
});

/** Resource mode data: the object as the watch saw it. */
export const resourceDataSchema = z.looseObject({
  apiVersion: optionalString,
  kind: optionalString,
  metadata: z.looseObject({ name: optionalString, namespace: optionalString }).optional(),
});

export const resyncDataSchema = z
  .strictObject({
    namespace: z.string().min(1).optional(),
    purpose: z.string().min(1).optional(),
  })
  .refine((scope) => scope.purpose === undefined || scope.namespace !== undefined, {
    message: "purpose is only meaningful with a namespace",
    path: ["purpose"],
  });

/** The body a curl user posts: a ref, or a whole object as `kubectl get -o json` prints it. */
export const plainRefSchema = z.looseObject({
  apiVersion: optionalString,
  kind: optionalString,
  namespace: optionalString,
  name: optionalString,
  metadata: z.looseObject({ name: optionalString, namespace: optionalString }).optional(),
  action: z.enum(["add", "update", "delete"]).optional(),
});

/** "data.namespace: expected string, received number; data: ..." */
export function describeIssues(error: z.ZodError, root: string): string {
  return error.issues
    .map((issue) => {
      const path = [root, ...issue.path.map(String)].filter(Boolean).join(".");
      return `${path || "body"}: ${issue.message}`;
    })
    .join("; ");
}
