/**
 * Pure: the EndpointSlice copies of a merge Import (label `import.clusterlink.net/merge: "true"`,
 * reference B.3). A merge Import makes no Services of its own: the user's Service named like it
 * gets, in its namespace, a copy of every dataplane EndpointSlice of the ClusterLink namespace
 * (label `kubernetes.io/service-name: clusterlink`) whose one port is the Import's leased
 * target port, so the user's Service reaches the dataplane too. Copies of a slice that is gone,
 * of an Import that is no longer merge or cannot be served, are deleted.
 *
 * Beyond upstream: the copy's port takes the name of the user's Service port that is
 * `spec.port` (an EndpointSlice port serves the Service port of the same name; upstream leaves
 * it unnamed, which only serves a single unnamed port).
 */
import type { KubeObject, Service } from "../core/objects.js";
import { MANAGED_BY, type ImportKey } from "./names.js";

export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
export const SLICE_MANAGED_BY_LABEL = "endpointslice.kubernetes.io/managed-by";
export const DATAPLANE_SLICE_LABEL = "clusterlink.net/dataplane-endpointslice-name";
/** The dataplane's own EndpointSlices in the ClusterLink namespace carry this service name. */
export const DATAPLANE_SERVICE_NAME = "clusterlink";

/** Upstream's copy name: `clusterlink-<len(import name)>-<import name>-<dataplane slice>`. */
export const copyName = (importName: string, sliceName: string): string =>
  `clusterlink-${importName.length}-${importName}-${sliceName}`;

/** Labels every copy of this Import carries (to list them, and to know them as ours). */
export const copySelector = (key: ImportKey): Record<string, string> => ({
  [SERVICE_NAME_LABEL]: key.name,
  [SLICE_MANAGED_BY_LABEL]: MANAGED_BY,
});

export interface DesiredSlice {
  readonly namespace: string;
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly addressType: "IPv4";
  readonly endpoints: readonly unknown[];
  readonly ports: readonly { name?: string; port: number; protocol: "TCP" }[];
}

/** Update and delete carry the resourceVersion of the copy they were decided on (as Services do). */
export type SliceWrite =
  | { readonly action: "create"; readonly slice: DesiredSlice }
  | { readonly action: "update"; readonly slice: DesiredSlice; readonly resourceVersion: string }
  | {
      readonly action: "delete";
      readonly ref: { namespace: string; name: string };
      readonly resourceVersion: string;
    };

/** The dataplane slices and this Import's copies, as read. */
export interface FoundSlices {
  readonly dataplane: readonly KubeObject[];
  readonly copies: readonly KubeObject[];
}

const fieldOf = (object: KubeObject, field: string): unknown =>
  (object as Record<string, unknown>)[field];

/** Every copy goes: the Import is gone, no longer merge, or cannot be served. */
export function removeCopies(found: FoundSlices | undefined): SliceWrite[] {
  return (found?.copies ?? []).map((copy) => ({
    action: "delete",
    ref: { namespace: copy.metadata.namespace ?? "", name: copy.metadata.name },
    resourceVersion: copy.metadata.resourceVersion ?? "",
  }));
}

function portName(userService: Service, port: number): string | undefined {
  const name = userService.spec?.ports?.find((p) => p.port === port)?.name;
  return name === undefined || name === "" ? undefined : name;
}

function sameCopy(found: KubeObject, want: DesiredSlice): boolean {
  const labels = found.metadata.labels ?? {};
  return (
    Object.entries(want.labels).every(([k, v]) => labels[k] === v) &&
    fieldOf(found, "addressType") === want.addressType &&
    JSON.stringify(fieldOf(found, "endpoints") ?? []) === JSON.stringify(want.endpoints) &&
    JSON.stringify(fieldOf(found, "ports") ?? []) === JSON.stringify(want.ports)
  );
}

/** The copies a servable merge Import wants, and the writes that get there. */
export function planCopies(input: {
  readonly key: ImportKey;
  readonly port: number;
  readonly targetPort: number;
  readonly userService: Service;
  readonly found: FoundSlices;
}): { readonly writes: SliceWrite[]; readonly copies: number } {
  const { key, targetPort, found } = input;
  const name = portName(input.userService, input.port);
  const wanted = found.dataplane.map((slice): DesiredSlice => ({
    namespace: key.namespace,
    name: copyName(key.name, slice.metadata.name),
    labels: { ...copySelector(key), [DATAPLANE_SLICE_LABEL]: slice.metadata.name },
    addressType: "IPv4",
    endpoints: (fieldOf(slice, "endpoints") as unknown[] | undefined) ?? [],
    ports: [{ ...(name === undefined ? {} : { name }), port: targetPort, protocol: "TCP" }],
  }));
  const have = new Map(found.copies.map((c) => [c.metadata.name, c]));
  const writes: SliceWrite[] = [];
  for (const want of wanted) {
    const existing = have.get(want.name);
    if (existing === undefined) writes.push({ action: "create", slice: want });
    else if (!sameCopy(existing, want)) {
      const resourceVersion = existing.metadata.resourceVersion ?? "";
      writes.push({ action: "update", slice: want, resourceVersion });
    }
  }
  const keep = new Set(wanted.map((w) => w.name));
  for (const copy of found.copies) {
    if (!keep.has(copy.metadata.name)) {
      writes.push({
        action: "delete",
        ref: { namespace: copy.metadata.namespace ?? key.namespace, name: copy.metadata.name },
        resourceVersion: copy.metadata.resourceVersion ?? "",
      });
    }
  }
  return { writes, copies: wanted.length };
}
