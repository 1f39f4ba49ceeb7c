/**
 * What the node agent reads of the API server (issue 31), and only that: it never writes. The
 * Pods bound to its node, each Pod's NetworkPolicyEndpoint, the peer sets those reference, and,
 * for namespaces where a Pod has no table yet, the NetworkPolicies that may select it.
 */
import {
  NETPOL_ENDPOINTS,
  NETPOL_PEER_SETS,
  NETWORK_POLICIES,
  PODS,
  type KubeClient,
} from "../kube/index.js";

export interface NodeAgentStore {
  /** Pods bound to the node that have not terminated. */
  listNodePods(node: string): Promise<readonly unknown[]>;
  /** A NetworkPolicyEndpoint; undefined when none is stored. */
  getEndpoint(namespace: string, name: string): Promise<unknown>;
  /** A NetworkPolicyPeerSet; undefined when none is stored. */
  getPeerSet(namespace: string, name: string): Promise<unknown>;
  listPolicies(namespace: string): Promise<readonly unknown[]>;
}

export function kubeNodeAgentStore(kube: KubeClient): NodeAgentStore {
  return {
    listNodePods: (node) =>
      kube.list(PODS, {
        // The node's Pods only (the server filters); terminated ones never take part.
        fieldSelector: `spec.nodeName=${node},status.phase!=Succeeded,status.phase!=Failed`,
      }),
    getEndpoint: (namespace, name) => kube.get(NETPOL_ENDPOINTS, { namespace, name }),
    getPeerSet: (namespace, name) => kube.get(NETPOL_PEER_SETS, { namespace, name }),
    listPolicies: (namespace) => kube.list(NETWORK_POLICIES, { namespace }),
  };
}
