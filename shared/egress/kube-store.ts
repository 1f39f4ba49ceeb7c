/** The EgressStore of shared/egress over shared/kube: typed reads and EgressGroup writes. */
import {
  EGRESSES,
  EGRESS_GROUPS,
  NAMESPACES,
  PODS,
  readOptions,
  type KubeClient,
  type ListOptions,
} from "../kube/index.js";
import type { EgressStore } from "./apply-event.js";
import { groupObjectFromDesired, observedGroupFromObject } from "./group-object.js";
import {
  egressSnapshotFromObject,
  namespaceSnapshotFromObject,
  podSnapshotFromObject,
} from "./observed.js";
import type { ListQuery } from "./plan-scope.js";

/** "" means "all namespaces" / "no label filter" in a ListQuery; the client wants them absent. */
function listOptions(query: ListQuery, fieldSelector?: string): ListOptions {
  return {
    ...(query.namespace === "" ? {} : { namespace: query.namespace }),
    ...(query.labelSelector === "" ? {} : { labelSelector: query.labelSelector }),
    ...(fieldSelector === undefined ? {} : { fieldSelector }),
  };
}

export function kubeEgressStore(kube: KubeClient): EgressStore {
  return {
    listEgresses: async (freshness = "consistent") =>
      (await kube.list(EGRESSES, readOptions(freshness))).map(egressSnapshotFromObject),
    getEgress: async (name) => {
      const egress = await kube.get(EGRESSES, { name });
      return egress === undefined ? null : egressSnapshotFromObject(egress);
    },
    listGroups: async () => (await kube.list(EGRESS_GROUPS)).map(observedGroupFromObject),
    listGroupsBySelector: async (labelSelector, freshness = "consistent") =>
      (await kube.list(EGRESS_GROUPS, { labelSelector, ...readOptions(freshness) })).map(
        observedGroupFromObject,
      ),
    getGroup: async (name) => {
      const group = await kube.get(EGRESS_GROUPS, { name });
      return group === undefined ? null : observedGroupFromObject(group);
    },
    getPod: async (namespace, name) => {
      const pod = await kube.get(PODS, { namespace, name });
      return pod === undefined ? null : podSnapshotFromObject(pod);
    },
    getNamespace: async (name) => {
      const namespace = await kube.get(NAMESPACES, { name });
      return namespace === undefined ? null : namespaceSnapshotFromObject(namespace);
    },
    listNamespaces: async (query) =>
      (await kube.list(NAMESPACES, listOptions(query))).map(namespaceSnapshotFromObject),
    listPods: async (query, fieldSelector) =>
      (await kube.list(PODS, listOptions(query, fieldSelector))).map(podSnapshotFromObject),
    createGroup: async (desired) =>
      (await kube.create(EGRESS_GROUPS, groupObjectFromDesired(desired))).metadata.uid ?? "",
    replaceGroup: async (desired, resourceVersion) =>
      (await kube.replace(EGRESS_GROUPS, groupObjectFromDesired(desired, resourceVersion))).metadata
        .uid ?? "",
    deleteGroup: async (name) => {
      await kube.delete(EGRESS_GROUPS, { name });
    },
  };
}
