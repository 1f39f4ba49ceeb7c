/**
 * manifests/knative/apiserversources.yaml: the sdewan-cnf source watches every rule kind of the
 * registry plus CNF workloads; the other sources (egress, ClusterLink, netpol) are written here as
 * they would be by hand.
 * test/unit/packaging/knative.test.ts checks that the sources watch what the connector routes.
 */
import {
  blockList,
  generatedHeader,
  kindRefsOf,
  registryKinds,
  type KindNames,
} from "./kind-lists.js";

/** One ApiServerSource in sdewan-system: `sdewan-<source>`, its events marked `sdewansource: <source>`. */
function apiServerSource(source: string, resources: string, selectorNote = ""): string {
  return `apiVersion: sources.knative.dev/v1
kind: ApiServerSource
metadata:
  name: sdewan-${source}
  namespace: sdewan-system
  labels: { app.kubernetes.io/part-of: sdewan }
spec:
  mode: Reference
  serviceAccountName: sdewan-apiserversource
  namespaceSelector: {}${selectorNote}
  ceOverrides:
    extensions: { sdewansource: ${source} }
  resources:
${resources}
  sink:
    ref: { apiVersion: eventing.knative.dev/v1, kind: Broker, name: sdewan }
`;
}

export function renderApiServerSources(kinds: readonly KindNames[] = registryKinds()): string {
  const sources = [
    apiServerSource(
      "cnf",
      `    # Every rule kind of the registry.
${blockList(4, kindRefsOf(kinds))}
    # Only CNF workloads carry the sdewanPurpose label.
    - apiVersion: apps/v1
      kind: Deployment
      selector: { matchExpressions: [{ key: sdewanPurpose, operator: Exists }] }
    - apiVersion: v1
      kind: Pod
      selector: { matchExpressions: [{ key: sdewanPurpose, operator: Exists }] }`,
      " # every namespace: one cluster-wide watch per resource",
    ),
    apiServerSource(
      "egress",
      `    - { apiVersion: crd.antrea.io/v1beta1, kind: Egress }
    - { apiVersion: v1, kind: Pod }
    - { apiVersion: v1, kind: Namespace }`,
    ),
    `# ClusterLink: one source per function, so each Trigger takes its own (a Service event goes to both).
${apiServerSource(
  "clusterlink-export",
  `    - { apiVersion: clusterlink.net/v1alpha1, kind: Export }
    - { apiVersion: v1, kind: Service }`,
)}`,
    apiServerSource(
      "clusterlink-import",
      `    - { apiVersion: clusterlink.net/v1alpha1, kind: Import }
    - { apiVersion: v1, kind: Service }
    - { apiVersion: discovery.k8s.io/v1, kind: EndpointSlice }
    - { apiVersion: clusterlink.net/v1alpha1, kind: Peer }`,
    ),
    apiServerSource(
      "clusterlink-peer-health",
      "    - { apiVersion: clusterlink.net/v1alpha1, kind: Peer }",
    ),
    apiServerSource(
      "netpol",
      `    - { apiVersion: networking.k8s.io/v1, kind: NetworkPolicy }
    - { apiVersion: v1, kind: Pod }
    - { apiVersion: v1, kind: Namespace }`,
    ),
  ];
  return `${generatedHeader("scripts/manifests/knative.ts")}
# API changes -> CloudEvents in Reference mode (only kind/namespace/name/apiVersion: the functions
# re-read the object anyway). One source per consumer (cnf, egress, three ClusterLink, netpol), so
# Triggers tell them apart by the \`sdewansource\` extension: a Pod event goes to
# on-deployment-ready only when it comes from sdewan-cnf, i.e. a CNF Pod.
# ServiceAccount and ClusterRole: manifests/rbac/event-sources.yaml. ApiServerSource sends
# nothing for objects that exist when it starts and loses changes while it restarts: the
# PingSource resync (pingsource.yaml) is what heals that.
${sources.join("---\n")}`;
}
