/**
 * The identities of manifests/rbac whose roles name the rule kinds: reconcile-rule,
 * on-deployment-ready and the event sources. Everything else in those files is written here as
 * it would be by hand; only the kind lists come from the registry. test/integration/rbac.test.ts
 * proves each role sufficient and tight against the real API server.
 */
import { RULE_GROUP } from "../../shared/kinds/index.js";
import { DEFAULT_LEDGER_NAMESPACE as LEDGER_NAMESPACE } from "../../shared/sync/index.js";
import {
  blockList,
  generatedHeader,
  pluralsOf,
  registryKinds,
  statusResourcesOf,
  type KindNames,
} from "./kind-lists.js";

const SOURCE = "scripts/manifests/rbac.ts";

/** What both rule-sync functions may do to every rule kind of the registry. */
const ruleAccess = (kinds: readonly KindNames[]): string => `  # Every rule kind of the registry.
  # patch: finalizers go in a merge patch; no update, no create, no delete.
  - apiGroups: ["${RULE_GROUP}"]
    resources:
${blockList(6, pluralsOf(kinds))}
    verbs: ["get", "list", "patch"]
  - apiGroups: ["${RULE_GROUP}"]
    resources:
${blockList(6, statusResourcesOf(kinds))}
    verbs: ["patch"]`;

/** Kubernetes Events on `objects`: created once, then their series counted (a patch). */
const eventsRule = (objects: string): string => `  # Events on ${objects} (kubectl describe);
  # never deleted, never read in bulk.
  - apiGroups: ["events.k8s.io"]
    resources: ["events"]
    verbs: ["create", "get", "patch"]`;

export function renderReconcileRuleRbac(kinds: readonly KindNames[] = registryKinds()): string {
  return `${generatedHeader(SOURCE)}
# Identity of reconcile-rule: reads a rule and its CNF (Deployment + Pods), writes the rule's
# finalizer (a merge patch on the rule, with resourceVersion) and its status. Nothing else.
# test/integration/rbac.test.ts runs the function with exactly this role.
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sdewan-reconcile-rule
  namespace: sdewan-system
  labels: { app.kubernetes.io/name: reconcile-rule, app.kubernetes.io/part-of: sdewan }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: sdewan-reconcile-rule
  labels: { app.kubernetes.io/name: reconcile-rule, app.kubernetes.io/part-of: sdewan }
  annotations:
    # validate-admission's bucket policy: where the API server lacks matchConditions, finalizer
    # writes on bucket-labelled rules are reviewed UPDATEs, so the controller's identity is granted
    # every bucket (manifests/webhook/README.md, ADR 0010).
    sdewan-bucket-type-permission: '{"*":["*"]}'
rules:
${ruleAccess(kinds)}
  # The rule's CNF: its Deployment (by sdewanPurpose) and that Deployment's Pods.
  - apiGroups: ["apps"]
    resources: ["deployments"]
    verbs: ["get", "list"]
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["get", "list"]
${eventsRule("the rules it manages")}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: sdewan-reconcile-rule
  labels: { app.kubernetes.io/name: reconcile-rule, app.kubernetes.io/part-of: sdewan }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: sdewan-reconcile-rule }
subjects:
  - { kind: ServiceAccount, name: sdewan-reconcile-rule, namespace: sdewan-system }
`;
}

export function renderOnDeploymentReadyRbac(kinds: readonly KindNames[] = registryKinds()): string {
  return `${generatedHeader(SOURCE)}
# Identity of on-deployment-ready: reads CNF Deployments and Pods and every rule of a CNF (a
# resync lists them in all namespaces), writes rule finalizers (merge patch), status, and its
# own state in ${LEDGER_NAMESPACE}, a namespace that holds nothing else, so the function may
# write that state but no workload: the prune ledgers of CNFs that opt in (ConfigMaps,
# docs/adr/0001) and one Lease per CNF while it syncs that CNF (docs/adr/0008).
# test/integration/rbac.test.ts runs the function with exactly this role.
apiVersion: v1
kind: Namespace
metadata:
  name: ${LEDGER_NAMESPACE}
  labels: { app.kubernetes.io/part-of: sdewan }
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sdewan-on-deployment-ready
  namespace: sdewan-system
  labels: { app.kubernetes.io/name: on-deployment-ready, app.kubernetes.io/part-of: sdewan }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: sdewan-on-deployment-ready
  labels: { app.kubernetes.io/name: on-deployment-ready, app.kubernetes.io/part-of: sdewan }
  annotations:
    # Finalizer writes on bucket-labelled rules are UPDATEs (manifests/webhook/README.md).
    sdewan-bucket-type-permission: '{"*":["*"]}'
rules:
${ruleAccess(kinds)}
  # CNF Deployments and their Pods: read only (the prune ledger is a ConfigMap, below).
  - apiGroups: ["apps"]
    resources: ["deployments"]
    verbs: ["get", "list"]
  - apiGroups: [""]
    resources: ["pods"]
    verbs: ["get", "list"]
${eventsRule("the rules it manages and on their CNF Deployments")}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: sdewan-on-deployment-ready
  labels: { app.kubernetes.io/name: on-deployment-ready, app.kubernetes.io/part-of: sdewan }
roleRef:
  { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: sdewan-on-deployment-ready }
subjects:
  - { kind: ServiceAccount, name: sdewan-on-deployment-ready, namespace: sdewan-system }
---
# The prune ledgers, one ConfigMap per CNF that opts in (sdewan.akraino.org/prune), each written
# with the resourceVersion it was computed from, and the CNF sync Leases (taken, taken over when
# expired, deleted when done). Only in ${LEDGER_NAMESPACE}: no list; no delete of ledgers.
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata:
  name: sdewan-on-deployment-ready
  namespace: ${LEDGER_NAMESPACE}
  labels: { app.kubernetes.io/name: on-deployment-ready, app.kubernetes.io/part-of: sdewan }
rules:
  - apiGroups: [""]
    resources: ["configmaps"]
    verbs: ["get", "create", "update"]
  - apiGroups: ["coordination.k8s.io"]
    resources: ["leases"]
    verbs: ["get", "create", "update", "delete"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  name: sdewan-on-deployment-ready
  namespace: ${LEDGER_NAMESPACE}
  labels: { app.kubernetes.io/name: on-deployment-ready, app.kubernetes.io/part-of: sdewan }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: Role, name: sdewan-on-deployment-ready }
subjects:
  - { kind: ServiceAccount, name: sdewan-on-deployment-ready, namespace: sdewan-system }
`;
}

export function renderEventSourcesRbac(kinds: readonly KindNames[] = registryKinds()): string {
  return `${generatedHeader(SOURCE)}
# Identity of whatever turns API changes into events: the project's connector (docs/connector.md)
# and Knative's ApiServerSource adapter (manifests/knative). Both only LIST and WATCH what they
# route (ApiServerSource's permission check also asks for get). They never write.
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sdewan-connector
  namespace: sdewan-system
  labels: { app.kubernetes.io/name: connector, app.kubernetes.io/part-of: sdewan }
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: sdewan-apiserversource
  namespace: sdewan-system
  labels: { app.kubernetes.io/name: apiserversource, app.kubernetes.io/part-of: sdewan }
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: sdewan-event-source
  labels: { app.kubernetes.io/name: event-source, app.kubernetes.io/part-of: sdewan }
rules:
  # Every rule kind of the registry.
  - apiGroups: ["${RULE_GROUP}"]
    resources:
${blockList(6, pluralsOf(kinds))}
    verbs: ["get", "list", "watch"]
  - apiGroups: ["apps"]
    resources: ["deployments"]
    verbs: ["get", "list", "watch"]
  - apiGroups: [""]
    resources: ["pods", "namespaces"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["crd.antrea.io"]
    resources: ["egresses"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["clusterlink.net"]
    resources: ["exports", "imports", "peers"]
    verbs: ["get", "list", "watch"]
  - apiGroups: [""]
    resources: ["services"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["discovery.k8s.io"]
    resources: ["endpointslices"]
    verbs: ["get", "list", "watch"]
  - apiGroups: ["networking.k8s.io"]
    resources: ["networkpolicies"]
    verbs: ["get", "list", "watch"]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: sdewan-event-source
  labels: { app.kubernetes.io/name: event-source, app.kubernetes.io/part-of: sdewan }
roleRef: { apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: sdewan-event-source }
subjects:
  - { kind: ServiceAccount, name: sdewan-connector, namespace: sdewan-system }
  - { kind: ServiceAccount, name: sdewan-apiserversource, namespace: sdewan-system }
`;
}
