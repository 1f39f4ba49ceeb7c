/**
 * manifests/connector/config.yaml, the connector's example configuration: the reconcile-rule
 * route watches every rule kind of the registry; the rest is written here as it would be by
 * hand. connector/config.ts validates the result (test/unit/connector/config.test.ts).
 */
import {
  blockList,
  generatedHeader,
  kindRefsOf,
  registryKinds,
  type KindNames,
} from "./kind-lists.js";

export function renderConnectorConfig(kinds: readonly KindNames[] = registryKinds()): string {
  return `${generatedHeader("scripts/manifests/connector-config.ts")}
# Event connector configuration (see docs/connector.md).
# Routes map watched resources to function URLs. Every route gets ApiServerSource-compatible
# CloudEvents (Reference mode unless \`mode: Resource\`) and, with \`resync\`, a periodic
# org.akraino.sdewan.resync event (data {}: every namespace).
#
# Environment overrides: CONNECTOR_HTTP_HOST, CONNECTOR_HTTP_PORT, CONNECTOR_CONCURRENCY,
# CONNECTOR_SOURCE, CONNECTOR_ROUTE_<NAME>_URL and CONNECTOR_ROUTE_<NAME>_RESYNC
# (NAME = route name upper-cased, "-" -> "_"), LOG_LEVEL.

http:
  host: 0.0.0.0
  port: 8080 # /metrics, /healthz, /readyz

delivery:
  concurrency: 16 # deliveries in flight across all routes (one per object at a time)
  timeout: 30s # per request
  backoff: { initial: 200ms, max: 30s } # exponential, equal jitter
  maxAttempts: 12
  maxAge: 15m # give up (dead-letter) when the next attempt would start later than this
  retryAfterMax: 5m # honour a function's Retry-After up to this long

watch:
  timeout: 5m # server-side timeoutSeconds of each watch; the stream then resumes
  inactivity: 3m # no event and no bookmark for this long: the watch is dead, list again
  pageSize: 500
  backoff: { initial: 1s, max: 30s }

shutdownGrace: 20s

routes:
  - name: reconcile-rule
    url: http://gateway.openfaas.svc.cluster.local:8080/function/reconcile-rule
    # No resync here: on-deployment-ready's resync converges every rule of every CNF at once.
    resources:
      # Every rule kind of the registry.
${blockList(6, kindRefsOf(kinds))}

  - name: on-deployment-ready
    url: http://gateway.openfaas.svc.cluster.local:8080/function/on-deployment-ready
    resync: 2m
    resources:
      # Only CNF workloads carry the sdewanPurpose label.
      - apiVersion: apps/v1
        kind: Deployment
        selector: { matchExpressions: [{ key: sdewanPurpose, operator: Exists }] }
      - apiVersion: v1
        kind: Pod
        selector: sdewanPurpose

  - name: egress-group-sync
    url: http://gateway.openfaas.svc.cluster.local:8080/function/egress-group-sync
    resync: 5m
    resources:
      - { apiVersion: crd.antrea.io/v1beta1, kind: Egress }
      - { apiVersion: v1, kind: Pod }
      - { apiVersion: v1, kind: Namespace }

  - name: network-policy-sync
    url: http://gateway.openfaas.svc.cluster.local:8080/function/network-policy-sync
    resync: 5m
    resources:
      - { apiVersion: networking.k8s.io/v1, kind: NetworkPolicy }
      - { apiVersion: v1, kind: Pod }
      - { apiVersion: v1, kind: Namespace }

  - name: clusterlink-export
    url: http://gateway.openfaas.svc.cluster.local:8080/function/clusterlink-export
    resync: 5m
    resources:
      - { apiVersion: clusterlink.net/v1alpha1, kind: Export }
      - { apiVersion: v1, kind: Service }

  - name: clusterlink-import
    url: http://gateway.openfaas.svc.cluster.local:8080/function/clusterlink-import
    resync: 5m # heals a lost Import delete and re-checks port losers
    resources:
      - { apiVersion: clusterlink.net/v1alpha1, kind: Import }
      - { apiVersion: v1, kind: Service }
      - { apiVersion: discovery.k8s.io/v1, kind: EndpointSlice }
      - { apiVersion: clusterlink.net/v1alpha1, kind: Peer }

  - name: clusterlink-peer-health
    url: http://gateway.openfaas.svc.cluster.local:8080/function/clusterlink-peer-health
    # The heartbeat tick: upstream probes a reachable Peer every 1 s, an unreachable one every 10 s;
    # the function picks the Peers due on each tick (CL_HEARTBEAT_INTERVAL_MS must match).
    resync: 1s
    resources:
      - { apiVersion: clusterlink.net/v1alpha1, kind: Peer }
`;
}
