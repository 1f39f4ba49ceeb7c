/** The NetpolStore of shared/netpol over shared/kube: raw reads, table reads and writes. */
import {
  NAMESPACES,
  NETPOL_ENDPOINTS,
  NETPOL_PEER_SETS,
  NETWORK_POLICIES,
  PODS,
  readOptions,
  type KubeClient,
  type KubeObject,
} from "../kube/index.js";
import type { NetpolStore } from "./store.js";
import { isMemberLabelKey } from "./member-index.js";
import { storedTable, tableFits, type DesiredTable, type TableKind } from "./table-objects.js";

/** Terminated Pods never take part; the server drops them before they cross the wire. */
const RUNNING_OR_PENDING = "status.phase!=Succeeded,status.phase!=Failed";

const resourceOf = (kind: TableKind) => (kind === "endpoint" ? NETPOL_ENDPOINTS : NETPOL_PEER_SETS);

const stored = (kind: TableKind, object: KubeObject) => storedTable(kind, object);

/** Peer sets up to this size are created in one request, managedFields and all (at most ~45 KiB). */
const TRACKED_UP_TO_BYTES = 65_536;

const withoutMemberIndex = (
  labels: Readonly<Record<string, string>> | undefined,
): Record<string, string> =>
  Object.fromEntries(Object.entries(labels ?? {}).filter(([key]) => !isMemberLabelKey(key)));

export function kubeNetpolStore(kube: KubeClient): NetpolStore {
  return {
    listPolicies: (namespace, freshness = "consistent") =>
      kube.list(NETWORK_POLICIES, {
        ...(namespace === undefined ? {} : { namespace }),
        ...readOptions(freshness),
      }),
    listPods: () => kube.list(PODS, { fieldSelector: RUNNING_OR_PENDING }),
    listNamespaces: () => kube.list(NAMESPACES),
    getPod: async (namespace, name) => (await kube.get(PODS, { namespace, name })) ?? null,
    getNamespace: async (name) => (await kube.get(NAMESPACES, { name })) ?? null,
    listTables: async (kind, namespace, labelSelector, freshness = "consistent") =>
      (
        await kube.list(resourceOf(kind), {
          ...(namespace === null ? {} : { namespace }),
          ...(labelSelector === undefined ? {} : { labelSelector }),
          ...readOptions(freshness),
        })
      ).map((o) => stored(kind, o)),
    getTable: async (kind, namespace, name) => {
      const object = await kube.get(resourceOf(kind), { namespace, name });
      return object === undefined ? null : stored(kind, object);
    },
    createTable: async (desired: DesiredTable) => {
      const resource = resourceOf(desired.kind);
      if (desired.kind === "endpoint" || tableFits(desired, TRACKED_UP_TO_BYTES)) {
        await kube.create(resource, desired.object);
        return;
      }
      // A create records managedFields whatever it is sent, one entry per label: ~60 bytes a
      // member, which could push a peer set within its bound past etcd's limit. Created without
      // its member index, then replaced in full with none ([{}] clears them on a replace).
      const { metadata } = desired.object;
      const created = await kube.create(resource, {
        ...desired.object,
        metadata: { ...metadata, labels: withoutMemberIndex(metadata.labels) },
      });
      await kube.replace(resource, {
        ...desired.object,
        metadata: { ...metadata, resourceVersion: created.metadata.resourceVersion },
      });
    },
    replaceTable: async (desired, resourceVersion) => {
      const { metadata } = desired.object;
      await kube.replace(resourceOf(desired.kind), {
        ...desired.object,
        metadata: { ...metadata, resourceVersion },
      });
    },
    deleteTable: async (table) => {
      await kube.delete(
        resourceOf(table.kind),
        { namespace: table.namespace, name: table.name },
        { resourceVersion: table.resourceVersion },
      );
    },
  };
}
