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
import { storedTable, type DesiredTable, type TableKind } from "./table-objects.js";

/** Terminated Pods never take part; the server drops them before they cross the wire. */
const RUNNING_OR_PENDING = "status.phase!=Succeeded,status.phase!=Failed";

const resourceOf = (kind: TableKind) => (kind === "endpoint" ? NETPOL_ENDPOINTS : NETPOL_PEER_SETS);

const stored = (kind: TableKind, object: KubeObject) => storedTable(kind, object);

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
      await kube.create(resourceOf(desired.kind), desired.object);
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
