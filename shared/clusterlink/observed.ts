/**
 * Exports and Imports as read from the API server, parsed at the boundary with the CRD's own
 * zod schemas. Lenient per object: one bad spec makes that object Stalled, never a list
 * unreadable. Pure.
 */
import type * as z from "zod";
import type { KubeObject } from "../core/objects.js";
import {
  clusterLinkStatusSchema,
  exportSpecSchema,
  importSpecSchema,
  type ExportSpec,
  type ImportSpec,
} from "../kinds/clusterlink.js";
import type { StoredStatus } from "./plan-status.js";

export interface ObservedObject<Spec> {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly creationTimestamp: string;
  readonly generation: number;
  readonly resourceVersion: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly deleting: boolean;
  /** The parsed spec, or why it is not one. */
  readonly spec:
    { readonly ok: true; readonly value: Spec } | { readonly ok: false; readonly message: string };
  readonly status: StoredStatus | undefined;
  /** The object as read, for a spec update with its resourceVersion. */
  readonly raw: KubeObject;
}

export type ObservedExport = ObservedObject<ExportSpec>;
export type ObservedImport = ObservedObject<ImportSpec>;

function issues(error: z.ZodError): string {
  return error.issues
    .map((i) => `${i.path.length > 0 ? `spec.${i.path.join(".")}` : "spec"}: ${i.message}`)
    .join("; ");
}

function observe<Spec>(object: KubeObject, schema: z.ZodType<Spec>): ObservedObject<Spec> {
  const meta = object.metadata;
  const parsed = schema.safeParse(object.spec ?? {});
  const status = clusterLinkStatusSchema.safeParse(object.status ?? {});
  return {
    namespace: meta.namespace ?? "",
    name: meta.name,
    uid: meta.uid ?? "",
    creationTimestamp: meta.creationTimestamp ?? "",
    generation: meta.generation ?? 0,
    resourceVersion: meta.resourceVersion ?? "",
    labels: meta.labels ?? {},
    annotations: meta.annotations ?? {},
    deleting: meta.deletionTimestamp !== undefined,
    spec: parsed.success
      ? { ok: true, value: parsed.data }
      : { ok: false, message: issues(parsed.error) },
    status: status.success ? status.data : undefined,
    raw: object,
  };
}

export const observeExport = (object: KubeObject): ObservedExport =>
  observe(object, exportSpecSchema);

/**
 * Beyond the CRD's schema (which upstream's manifests must pass, so it admits port 0, as
 * upstream's does): the port a Service can carry. Admission denies it too, but the webhook fails
 * open, and a Service create would answer 422 for the Import's mistake.
 */
const servableImportSpecSchema = importSpecSchema.refine((spec) => spec.port >= 1, {
  message: "0 is not a port (1-65535)",
  path: ["port"],
});

export const observeImport = (object: KubeObject): ObservedImport =>
  observe(object, servableImportSpecSchema);
