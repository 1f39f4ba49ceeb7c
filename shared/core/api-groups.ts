/**
 * API groups, versions, kinds and plurals that more than one layer names: shared/kinds builds
 * schemas and CRDs for them, shared/kube reaches them. Living here keeps those two layers from
 * importing each other.
 */

/** The SDEWAN rule kinds (their kinds and plurals come from the registry in shared/kinds). */
export const RULE_GROUP = "batch.sdewan.akraino.org";
export const RULE_VERSION = "v1alpha1";
export const RULE_API_VERSION = `${RULE_GROUP}/${RULE_VERSION}`;

/** Antrea's Egress, read as input (cluster-scoped). */
export const EGRESS_API_GROUP = "crd.antrea.io";
export const EGRESS_VERSION = "v1beta1";
export const EGRESS_API_VERSION = `${EGRESS_API_GROUP}/${EGRESS_VERSION}`;
export const EGRESS_KIND = "Egress";
export const EGRESS_PLURAL = "egresses";

/** Our EgressGroup, written by egress-group-sync (cluster-scoped). */
export const EGRESS_GROUP_API_GROUP = "sdewan.akraino.org";
export const EGRESS_GROUP_VERSION = "v1alpha1";
export const EGRESS_GROUP_API_VERSION = `${EGRESS_GROUP_API_GROUP}/${EGRESS_GROUP_VERSION}`;
export const EGRESS_GROUP_KIND = "EgressGroup";
export const EGRESS_GROUP_PLURAL = "egressgroups";

/** Kubernetes NetworkPolicy, read as input (namespaced). */
export const NETWORK_POLICY_API_GROUP = "networking.k8s.io";
export const NETWORK_POLICY_VERSION = "v1";
export const NETWORK_POLICY_KIND = "NetworkPolicy";
export const NETWORK_POLICY_PLURAL = "networkpolicies";

/**
 * Our compiled NetworkPolicy tables, written by network-policy-sync (namespaced): one
 * NetworkPolicyEndpoint per selected Pod, one NetworkPolicyPeerSet per NetworkPolicy.
 */
export const NETPOL_API_GROUP = "netpol.sdewan.akraino.org";
export const NETPOL_VERSION = "v1alpha1";
export const NETPOL_API_VERSION = `${NETPOL_API_GROUP}/${NETPOL_VERSION}`;
export const NETPOL_ENDPOINT_KIND = "NetworkPolicyEndpoint";
export const NETPOL_ENDPOINT_PLURAL = "networkpolicyendpoints";
export const NETPOL_PEER_SET_KIND = "NetworkPolicyPeerSet";
export const NETPOL_PEER_SET_PLURAL = "networkpolicypeersets";

/** ClusterLink's kinds (clusterlink.net/v1alpha1), as upstream names them (reference B.1). */
export const CLUSTERLINK_GROUP = "clusterlink.net";
export const CLUSTERLINK_VERSION = "v1alpha1";
export const CLUSTERLINK_API_VERSION = `${CLUSTERLINK_GROUP}/${CLUSTERLINK_VERSION}`;
export const CLUSTERLINK_KINDS = {
  Peer: { plural: "peers", namespaced: true },
  Export: { plural: "exports", namespaced: true },
  Import: { plural: "imports", namespaced: true },
  AccessPolicy: { plural: "accesspolicies", namespaced: true },
  PrivilegedAccessPolicy: { plural: "privilegedaccesspolicies", namespaced: false },
} as const;
export type ClusterLinkKind = keyof typeof CLUSTERLINK_KINDS;
