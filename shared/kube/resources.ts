/**
 * What shared/kube needs to know about a resource to reach it: group, version, plural, scope,
 * whether it has a status subresource, and the schema its objects are read with.
 */
import type * as z from "zod";
import {
  CLUSTERLINK_GROUP,
  CLUSTERLINK_KINDS,
  CLUSTERLINK_VERSION,
  type ClusterLinkKind,
  EGRESS_API_GROUP,
  EGRESS_GROUP_API_GROUP,
  EGRESS_GROUP_KIND,
  EGRESS_GROUP_PLURAL,
  EGRESS_GROUP_VERSION,
  EGRESS_KIND,
  EGRESS_PLURAL,
  EGRESS_VERSION,
  NETPOL_API_GROUP,
  NETPOL_ENDPOINT_KIND,
  NETPOL_ENDPOINT_PLURAL,
  NETPOL_PEER_SET_KIND,
  NETPOL_PEER_SET_PLURAL,
  NETPOL_VERSION,
  NETWORK_POLICY_API_GROUP,
  NETWORK_POLICY_KIND,
  NETWORK_POLICY_PLURAL,
  NETWORK_POLICY_VERSION,
  RULE_GROUP,
  RULE_VERSION,
} from "../core/api-groups.js";
import {
  configMapSchema,
  deploymentSchema,
  kubeObjectSchema,
  leaseSchema,
  namespaceSchema,
  podSchema,
  replicaSetSchema,
  secretSchema,
  serviceSchema,
  type ConfigMap,
  type Deployment,
  type KubeObject,
  type Lease,
  type Namespace,
  type Pod,
  type ReplicaSet,
  type Secret,
  type Service,
} from "../core/objects.js";

export interface ResourceType<T extends KubeObject = KubeObject> {
  /** "" for the core group (Pods, Namespaces). */
  readonly group: string;
  readonly version: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Whether status is written through the /status subresource. */
  readonly statusSubresource: boolean;
  readonly schema: z.ZodType<T>;
}

export const apiVersionOf = (type: ResourceType): string =>
  type.group === "" ? type.version : `${type.group}/${type.version}`;

export const DEPLOYMENTS: ResourceType<Deployment> = {
  group: "apps",
  version: "v1",
  kind: "Deployment",
  plural: "deployments",
  namespaced: true,
  statusSubresource: true,
  schema: deploymentSchema,
};

export const REPLICA_SETS: ResourceType<ReplicaSet> = {
  group: "apps",
  version: "v1",
  kind: "ReplicaSet",
  plural: "replicasets",
  namespaced: true,
  statusSubresource: true,
  schema: replicaSetSchema,
};

export const PODS: ResourceType<Pod> = {
  group: "",
  version: "v1",
  kind: "Pod",
  plural: "pods",
  namespaced: true,
  statusSubresource: true,
  schema: podSchema,
};

export const NAMESPACES: ResourceType<Namespace> = {
  group: "",
  version: "v1",
  kind: "Namespace",
  plural: "namespaces",
  namespaced: false,
  statusSubresource: true,
  schema: namespaceSchema,
};

/** Core ConfigMaps (the prune ledgers of shared/sync live in them). */
export const CONFIG_MAPS: ResourceType<ConfigMap> = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
  statusSubresource: false,
  schema: configMapSchema,
};

/** Leases (shared/sync holds one per CNF while it syncs the whole CNF). */
export const LEASES: ResourceType<Lease> = {
  group: "coordination.k8s.io",
  version: "v1",
  kind: "Lease",
  plural: "leases",
  namespaced: true,
  statusSubresource: false,
  schema: leaseSchema,
};

/** Core Secrets (key material a rule names by reference). */
export const SECRETS: ResourceType<Secret> = {
  group: "",
  version: "v1",
  kind: "Secret",
  plural: "secrets",
  namespaced: true,
  statusSubresource: false,
  schema: secretSchema,
};

/** Antrea's Egress (cluster-scoped). Its spec is parsed by shared/egress, leniently. */
export const EGRESSES: ResourceType = {
  group: EGRESS_API_GROUP,
  version: EGRESS_VERSION,
  kind: EGRESS_KIND,
  plural: EGRESS_PLURAL,
  namespaced: false,
  statusSubresource: true,
  schema: kubeObjectSchema,
};

/** Our EgressGroup (cluster-scoped, no status subresource: status is written with the object). */
export const EGRESS_GROUPS: ResourceType = {
  group: EGRESS_GROUP_API_GROUP,
  version: EGRESS_GROUP_VERSION,
  kind: EGRESS_GROUP_KIND,
  plural: EGRESS_GROUP_PLURAL,
  namespaced: false,
  statusSubresource: false,
  schema: kubeObjectSchema,
};

/** Kubernetes NetworkPolicy. Its spec is parsed by shared/netpol, leniently. */
export const NETWORK_POLICIES: ResourceType = {
  group: NETWORK_POLICY_API_GROUP,
  version: NETWORK_POLICY_VERSION,
  kind: NETWORK_POLICY_KIND,
  plural: NETWORK_POLICY_PLURAL,
  namespaced: true,
  statusSubresource: false,
  schema: kubeObjectSchema,
};

/** Our per-Pod NetworkPolicy tables (no status subresource: written whole). */
export const NETPOL_ENDPOINTS: ResourceType = {
  group: NETPOL_API_GROUP,
  version: NETPOL_VERSION,
  kind: NETPOL_ENDPOINT_KIND,
  plural: NETPOL_ENDPOINT_PLURAL,
  namespaced: true,
  statusSubresource: false,
  schema: kubeObjectSchema,
};

/** Our per-NetworkPolicy address groups (no status subresource: written whole). */
export const NETPOL_PEER_SETS: ResourceType = {
  group: NETPOL_API_GROUP,
  version: NETPOL_VERSION,
  kind: NETPOL_PEER_SET_KIND,
  plural: NETPOL_PEER_SET_PLURAL,
  namespaced: true,
  statusSubresource: false,
  schema: kubeObjectSchema,
};

/** A rule kind from the registry (shared/kinds): `ruleResource(requireKind("Mwan3Rule"))`. */
export function ruleResource(entry: {
  readonly kind: string;
  readonly plural: string;
}): ResourceType {
  return {
    group: RULE_GROUP,
    version: RULE_VERSION,
    kind: entry.kind,
    plural: entry.plural,
    namespaced: true,
    statusSubresource: true,
    schema: kubeObjectSchema,
  };
}

export const SERVICES: ResourceType<Service> = {
  group: "",
  version: "v1",
  kind: "Service",
  plural: "services",
  namespaced: true,
  statusSubresource: true,
  schema: serviceSchema,
};

/** discovery.k8s.io EndpointSlices; read leniently, their endpoints are copied as they are. */
export const ENDPOINT_SLICES: ResourceType = {
  group: "discovery.k8s.io",
  version: "v1",
  kind: "EndpointSlice",
  plural: "endpointslices",
  namespaced: true,
  statusSubresource: false,
  schema: kubeObjectSchema,
};

/** A ClusterLink kind (clusterlink.net/v1alpha1); specs are parsed by shared/clusterlink. */
export function clusterLinkResource(kind: ClusterLinkKind): ResourceType {
  const { plural, namespaced } = CLUSTERLINK_KINDS[kind];
  return {
    group: CLUSTERLINK_GROUP,
    version: CLUSTERLINK_VERSION,
    kind,
    plural,
    namespaced,
    statusSubresource: true,
    schema: kubeObjectSchema,
  };
}
