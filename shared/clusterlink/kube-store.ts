/** The ClusterLinkStore of shared/clusterlink over shared/kube: one method a request. */
import {
  clusterLinkResource,
  ENDPOINT_SLICES,
  PODS,
  SERVICES,
  type KubeClient,
  type ResourceType,
} from "../kube/index.js";
import type { ClusterLinkStore } from "./store.js";

const IMPORTS = clusterLinkResource("Import");
const EXPORTS = clusterLinkResource("Export");
const PEERS = clusterLinkResource("Peer");
const ACCESS_POLICIES = clusterLinkResource("AccessPolicy");
const PRIVILEGED = clusterLinkResource("PrivilegedAccessPolicy");

export function kubeClusterLinkStore(kube: KubeClient): ClusterLinkStore {
  const patchStatus =
    (type: ResourceType): ClusterLinkStore["patchImportStatus"] =>
    (key, status, options) =>
      kube.patchStatus(type, key, status, options);
  return {
    getImport: (key, options) => kube.get(IMPORTS, key, options),
    listImports: (options) => kube.list(IMPORTS, options),
    replaceImport: (object) => kube.replace(IMPORTS, object),
    patchImportStatus: patchStatus(IMPORTS),
    getExport: (key) => kube.get(EXPORTS, key),
    listExports: (options) => kube.list(EXPORTS, options),
    patchExportStatus: patchStatus(EXPORTS),
    getPeer: (key) => kube.get(PEERS, key),
    listPeers: (options) => kube.list(PEERS, options),
    patchPeerStatus: patchStatus(PEERS),
    listAccessPolicies: (options) => kube.list(ACCESS_POLICIES, options),
    patchAccessPolicyStatus: patchStatus(ACCESS_POLICIES),
    listPrivilegedAccessPolicies: (options) => kube.list(PRIVILEGED, options),
    patchPrivilegedAccessPolicyStatus: patchStatus(PRIVILEGED),
    getService: (key) => kube.get(SERVICES, key),
    listServices: (options) => kube.list(SERVICES, options),
    createService: (object) => kube.create(SERVICES, object),
    mergePatchService: (key, patch) => kube.mergePatch(SERVICES, key, patch),
    deleteService: (key, options) => kube.delete(SERVICES, key, options),
    getEndpointSlice: (key) => kube.get(ENDPOINT_SLICES, key),
    listEndpointSlices: (options) => kube.list(ENDPOINT_SLICES, options),
    createEndpointSlice: (object) => kube.create(ENDPOINT_SLICES, object),
    mergePatchEndpointSlice: (key, patch) => kube.mergePatch(ENDPOINT_SLICES, key, patch),
    deleteEndpointSlice: (key, options) => kube.delete(ENDPOINT_SLICES, key, options),
    listPods: (options) => kube.list(PODS, options),
  };
}
