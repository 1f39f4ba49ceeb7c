/**
 * Observed state the policies decide on. The shell (observe.ts) reads only what
 * planObservation() asks for; everything not needed stays empty.
 */
import type { AnnotatedRole, Binding } from "./rbac.js";

/** A rule object as read from the API server, reduced to what the dependency policies need. */
export interface ObservedRule {
  readonly kind: string;
  readonly name: string;
  readonly purpose?: string | undefined;
  readonly deleting: boolean;
  readonly spec: unknown;
}

/** A Deployment in the request's namespace that carries the same sdewanPurpose. */
export interface ObservedCnf {
  readonly name: string;
  readonly deleting: boolean;
  /** Raw `k8s.plugin.opnfv.org/nfn-network` annotation of the pod template, when present. */
  readonly nfnNetworkAnnotation?: string | undefined;
}

export interface RbacSnapshot {
  /** RoleBindings in the object's namespace. */
  readonly roleBindings: readonly Binding[];
  readonly clusterRoleBindings: readonly Binding[];
  /** The Roles and ClusterRoles granted to the user by those bindings (others may be absent). */
  readonly roles: readonly AnnotatedRole[];
}

/** Whether the requesting user may get a Secret, as the API server answered (or why it did not). */
export type SecretAccess =
  | { readonly name: string; readonly allowed: boolean }
  | { readonly name: string; readonly allowed: "unknown"; readonly why: string };

export interface AdmissionSnapshot {
  readonly cnfDeployments: readonly ObservedCnf[];
  /** The objects a created/updated rule references that exist; a missing one is simply absent. */
  readonly referencedObjects: readonly ObservedRule[];
  readonly rbac: RbacSnapshot;
  /** Rules of the kinds sharing the admitted rule's CNF-unique names, in its namespace. */
  readonly cnfPeers: readonly ObservedRule[];
  /** The answers for each Secret the admitted rule newly references. */
  readonly secretAccess: readonly SecretAccess[];
}

export const EMPTY_SNAPSHOT: AdmissionSnapshot = {
  cnfDeployments: [],
  referencedObjects: [],
  rbac: { roleBindings: [], clusterRoleBindings: [], roles: [] },
  cnfPeers: [],
  secretAccess: [],
};
