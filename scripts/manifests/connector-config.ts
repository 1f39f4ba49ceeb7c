/**
 * The connector's configurations: manifests/connector/config.yaml (in a cluster, to the OpenFaaS
 * gateway), manifests/plain/connector-config.yaml (the plain Kubernetes install, to each
 * function's own Service) and manifests/connector/local.yaml (a local run, to `npm start` on this
 * machine).
 * The reconcile-rule route watches every rule kind of the registry; the rest is written here as
 * it would be by hand. connector/config.ts validates both (test/unit/connector/config.test.ts).
 */
import { DEFAULT_PORT } from "../../shared/runtime/select.js";
import {
  blockList,
  generatedHeader,
  kindRefsOf,
  registryKinds,
  type KindNames,
} from "./kind-lists.js";

/** Where a configuration delivers, and where the connector itself listens. */
export interface ConnectorTarget {
  /** Lines of the header that say what this file is for. */
  readonly about: string;
  readonly host: string;
  readonly port: number;
  /** A route's function URL. */
  readonly url: (route: string) => string;
}

/** In a cluster: the OpenFaaS gateway's function URLs. */
export const CLUSTER_TARGET: ConnectorTarget = {
  about: "# Event connector configuration (see docs/connector.md).",
  host: "0.0.0.0",
  port: 8080,
  url: (route) => `http://gateway.openfaas.svc.cluster.local:8080/function/${route}`,
};

/** The namespace of the plain install's function Services (manifests/plain). */
export const PLAIN_NAMESPACE = "sdewan-system";

/**
 * The plain Kubernetes install: each function is a Deployment behind a Service of its name on
 * port 80 (manifests/functions/functions.yaml). `<name>.<namespace>.svc` resolves whatever the
 * cluster's DNS domain is.
 */
export const PLAIN_TARGET: ConnectorTarget = {
  about: `# Event connector configuration for the plain Kubernetes install (manifests/plain, docs/deploy.md):
# every route posts to its function's own Service, http://<function>.${PLAIN_NAMESPACE}.svc/<function>
# (each function serves POST /<function>). manifests/plain makes the ConfigMap of this file.`,
  host: "0.0.0.0",
  port: 8080,
  url: (route) => `http://${route}.${PLAIN_NAMESPACE}.svc/${route}`,
};

/** The connector's own port in a local run: next to `npm start`'s, which it must not take. */
export const LOCAL_CONNECTOR_PORT = DEFAULT_PORT + 1;

/** A local run: every function served by `npm start` on this machine (docs/local-run.md). */
export const LOCAL_TARGET: ConnectorTarget = {
  about: `# Event connector configuration for a local run (docs/local-run.md): every route posts to
# \`npm start\` on this machine (http://127.0.0.1:${DEFAULT_PORT}/<function>), and the connector
# serves /metrics, /healthz and /readyz on ${LOCAL_CONNECTOR_PORT}, so the two run side by side:
#   npm start & npm run connector:local`,
  host: "127.0.0.1",
  port: LOCAL_CONNECTOR_PORT,
  url: (route) => `http://127.0.0.1:${DEFAULT_PORT}/${route}`,
};

export function renderConnectorConfig(
  kinds: readonly KindNames[] = registryKinds(),
  target: ConnectorTarget = CLUSTER_TARGET,
): string {
  return `${generatedHeader("scripts/manifests/connector-config.ts")}
${target.about}
# Routes map watched resources to function URLs. Every route gets ApiServerSource-compatible
# CloudEvents (Reference mode unless \`mode: Resource\`) and, with \`resync\`, a periodic
# org.akraino.sdewan.resync event (data {}: every namespace).
#
# Environment overrides: CONNECTOR_HTTP_HOST, CONNECTOR_HTTP_PORT, CONNECTOR_CONCURRENCY,
# CONNECTOR_SOURCE, CONNECTOR_ROUTE_<NAME>_URL and CONNECTOR_ROUTE_<NAME>_RESYNC
# (NAME = route name upper-cased, "-" -> "_"), LOG_LEVEL.

http:
  host: ${target.host}
  port: ${target.port} # /metrics, /healthz, /readyz

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
    url: ${target.url("reconcile-rule")}
    # No resync here: on-deployment-ready's resync converges every rule of every CNF at once.
    resources:
      # Every rule kind of the registry.
${blockList(6, kindRefsOf(kinds))}

  - name: on-deployment-ready
    url: ${target.url("on-deployment-ready")}
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
    url: ${target.url("egress-group-sync")}
    resync: 5m
    resources:
      - { apiVersion: crd.antrea.io/v1beta1, kind: Egress }
      - { apiVersion: v1, kind: Pod }
      - { apiVersion: v1, kind: Namespace }

  - name: network-policy-sync
    url: ${target.url("network-policy-sync")}
    resync: 5m
    resources:
      - { apiVersion: networking.k8s.io/v1, kind: NetworkPolicy }
      - { apiVersion: v1, kind: Pod }
      - { apiVersion: v1, kind: Namespace }

  - name: clusterlink-export
    url: ${target.url("clusterlink-export")}
    resync: 5m
    resources:
      - { apiVersion: clusterlink.net/v1alpha1, kind: Export }
      - { apiVersion: v1, kind: Service }

  - name: clusterlink-import
    url: ${target.url("clusterlink-import")}
    resync: 5m # heals a lost Import delete and re-checks port losers
    resources:
      - { apiVersion: clusterlink.net/v1alpha1, kind: Import }
      - { apiVersion: v1, kind: Service }
      - { apiVersion: discovery.k8s.io/v1, kind: EndpointSlice }
      - { apiVersion: clusterlink.net/v1alpha1, kind: Peer }

  - name: clusterlink-peer-health
    url: ${target.url("clusterlink-peer-health")}
    # The heartbeat tick: upstream probes a reachable Peer every 1 s, an unreachable one every 10 s;
    # the function picks the Peers due on each tick (CL_HEARTBEAT_INTERVAL_MS must match).
    resync: 1s
    resources:
      - { apiVersion: clusterlink.net/v1alpha1, kind: Peer }
`;
}
