/**
 * Names and labels ClusterLink's Kubernetes objects carry, exactly as upstream spells them
 * (reference B.3), so tools written for ClusterLink find what we create. Pure.
 */
import { createHash } from "node:crypto";

/** Where Peers live and system Services go; env CL_NAMESPACE, as upstream reads it. */
export const DEFAULT_CL_NAMESPACE = "clusterlink-system";

export function clusterLinkNamespace(env: Readonly<Record<string, string | undefined>>): string {
  const value = env["CL_NAMESPACE"]?.trim();
  return value === undefined || value === "" ? DEFAULT_CL_NAMESPACE : value;
}

export const MANAGED_BY_LABEL = "app.kubernetes.io/managed-by";
export const MANAGED_BY = "clusterlink.net";
export const IMPORT_NAME_LABEL = "clusterlink.net/import-name";
export const IMPORT_NAMESPACE_LABEL = "clusterlink.net/import-namespace";
/** Merge mode (reference B.3 step 3). */
export const MERGE_LABEL = "import.clusterlink.net/merge";
/** The dataplane Pods the system Service selects. */
export const DATAPLANE_SELECTOR: Readonly<Record<string, string>> = { app: "cl-dataplane" };
/**
 * Ours, not upstream's: the targetPort this project leased and wrote into the Import's spec. A
 * targetPort that differs from it was asked for by the user (see docs/adr/0006).
 */
export const LEASED_PORT_ANNOTATION = "clusterlink.net/leased-target-port";

export interface ImportKey {
  readonly namespace: string;
  readonly name: string;
}

/** The three ownership labels upstream puts on both Services of an Import. */
export function importLabels(key: ImportKey): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY,
    [IMPORT_NAME_LABEL]: key.name,
    [IMPORT_NAMESPACE_LABEL]: key.namespace,
  };
}

/** Whether labels say the object belongs to this Import (all three must match). */
export function ownedBy(
  labels: Readonly<Record<string, string>> | undefined,
  key: ImportKey,
): boolean {
  return Object.entries(importLabels(key)).every(([k, v]) => labels?.[k] === v);
}

/** The Import that labels name, if they carry all three ownership labels. */
export function importOfLabels(
  labels: Readonly<Record<string, string>> | undefined,
): ImportKey | undefined {
  const name = labels?.[IMPORT_NAME_LABEL];
  const namespace = labels?.[IMPORT_NAMESPACE_LABEL];
  if (labels?.[MANAGED_BY_LABEL] !== MANAGED_BY || !name || !namespace) return undefined;
  return { namespace, name };
}

/**
 * The system Service's name: the Import's own name inside the ClusterLink namespace, else
 * `import-<name[:10]>-<namespace[:10]>-<md5hex("<ns>/<name>")>` (63 characters at most).
 */
export function systemServiceName(key: ImportKey, clNamespace: string): string {
  if (key.namespace === clNamespace) return key.name;
  const digest = createHash("md5").update(`${key.namespace}/${key.name}`).digest("hex");
  return `import-${key.name.slice(0, 10)}-${key.namespace.slice(0, 10)}-${digest}`;
}

export const externalNameOf = (systemName: string, clNamespace: string): string =>
  `${systemName}.${clNamespace}.svc.cluster.local`;
