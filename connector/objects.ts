/**
 * The objects the connector reads, leniently: only what routing and relisting need. Pure (zod
 * only), so the relist planner can name them without reaching the transport.
 */
import * as z from "zod";

const metadataSchema = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
});

/** List items carry no apiVersion and kind; watch objects do. */
export const kubeObjectSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: metadataSchema,
});
export type KubeObject = z.infer<typeof kubeObjectSchema>;
