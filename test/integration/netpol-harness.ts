// The world of the network-policy-sync integration tests: Namespaces, Pods (with the status a
// kubelet would write, and named container ports) and NetworkPolicies on the real API server,
// the network-policy-sync handler called directly, and `decide` over the tables it stored, read
// back from the API server. Names carry a per-file run id: test files run in parallel.
import { randomBytes } from "node:crypto";
import { CoreV1Api } from "@kubernetes/client-node";
import { NODE_IP } from "../../dev/control-plane/addresses.js";
import { createNetworkPolicySync } from "../../functions/network-policy-sync/index.js";
import type { Outcome } from "../../shared/core/outcome.js";
import type { IntakeEvent, WatchAction } from "../../shared/events/types.js";
import {
  createKubeClient,
  NAMESPACES,
  NETPOL_ENDPOINTS,
  NETPOL_PEER_SETS,
  NETWORK_POLICIES,
  PODS,
  type KubeClient,
} from "../../shared/kube/index.js";
import { decide, storedTablesFromObjects, type Packet } from "../../shared/netpol/index.js";
import type { Env } from "../../shared/runtime/deps.js";
import type { EventFunction, HandlerContext } from "../../shared/runtime/function.js";
import type { FunctionMetrics } from "../../shared/runtime/metrics.js";
import { adminKubeConfig } from "./support/cluster.js";
import { objectEvent } from "./egress-harness.js";

const silentLog = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

export interface NetpolPodOptions {
  readonly ip: string;
  /** status.hostIP. */
  readonly node?: string;
  /** spec.nodeName; default node-1. */
  readonly nodeName?: string;
  readonly ports?: readonly { name: string; port: number }[];
}

export class NetpolWorld {
  readonly run = randomBytes(3).toString("hex");
  readonly kube: KubeClient = createKubeClient(adminKubeConfig());
  readonly core = adminKubeConfig().makeApiClient(CoreV1Api);
  /** API requests the handlers made since the last reset. */
  readonly calls = { api: 0, cnf: 0 };

  /**
   * A handler instance of its own (its own client), as a separate function replica would be;
   * `env`: its settings (e.g. NETPOL_PEER_SET_MAX_BYTES).
   */
  instance(kube: KubeClient = createKubeClient(adminKubeConfig()), env: Env = {}): EventFunction {
    return createNetworkPolicySync({ kube: () => kube, env });
  }

  readonly fn: EventFunction = this.instance();

  name(base: string): string {
    return `${base}-${this.run}`;
  }

  async namespace(base: string, labels: Record<string, string> = {}): Promise<string> {
    const name = this.name(base);
    await this.kube.create(NAMESPACES, { metadata: { name, labels } });
    return name;
  }

  async pod(
    namespace: string,
    name: string,
    labels: Record<string, string>,
    options: NetpolPodOptions,
  ) {
    const ports = (options.ports ?? []).map((p) => ({ name: p.name, containerPort: p.port }));
    await this.kube.create(PODS, {
      metadata: { name, namespace, labels },
      spec: {
        nodeName: options.nodeName ?? "node-1",
        containers: [{ name: "app", image: "example.invalid/app:1", ports }],
      },
    });
    await this.kube.patchStatus(
      PODS,
      { namespace, name },
      {
        phase: "Running",
        hostIP: options.node ?? NODE_IP,
        podIP: options.ip,
        podIPs: [{ ip: options.ip }],
      },
    );
  }

  async relabelPod(namespace: string, name: string, labels: Record<string, string | null>) {
    await this.kube.mergePatch(PODS, { namespace, name }, { metadata: { labels } });
  }

  /** Deleted at once: without a kubelet a graceful delete of a scheduled Pod never finishes. */
  async deletePod(namespace: string, name: string): Promise<void> {
    await this.core.deleteNamespacedPod({ namespace, name, gracePeriodSeconds: 0 });
  }

  async policy(namespace: string, name: string, spec: Record<string, unknown>): Promise<void> {
    await this.kube.create(NETWORK_POLICIES, { metadata: { name, namespace }, spec });
  }

  async deletePolicy(namespace: string, name: string): Promise<void> {
    await this.kube.delete(NETWORK_POLICIES, { namespace, name });
  }

  /** Hands `event` to `fn`; `metrics`: where its gauges go (none by default). */
  send(
    event: IntakeEvent,
    fn: EventFunction = this.fn,
    metrics?: FunctionMetrics,
  ): Promise<Outcome> {
    const ctx: HandlerContext = {
      correlationId: event.id,
      log: silentLog,
      calls: this.calls,
      signal: new AbortController().signal,
      ...(metrics === undefined ? {} : { metrics }),
    };
    return fn.handle(event, ctx);
  }

  podEvent(namespace: string, name: string, action: WatchAction = "update"): IntakeEvent {
    return objectEvent(action, { apiVersion: "v1", kind: "Pod", namespace, name });
  }

  namespaceEvent(name: string, action: WatchAction = "update"): IntakeEvent {
    return objectEvent(action, { apiVersion: "v1", kind: "Namespace", namespace: "", name });
  }

  policyEvent(namespace: string, name: string, action: WatchAction = "update"): IntakeEvent {
    const ref = { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", namespace, name };
    return objectEvent(action, ref);
  }

  resyncEvent(): IntakeEvent {
    return { type: "resync", id: `resync-${randomBytes(4).toString("hex")}`, scope: {} };
  }

  /** The stored tables of a namespace, as raw objects sorted by kind and name. */
  async tables(namespace: string): Promise<{ endpoints: unknown[]; peerSets: unknown[] }> {
    const [endpoints, peerSets] = await Promise.all([
      this.kube.list(NETPOL_ENDPOINTS, { namespace }),
      this.kube.list(NETPOL_PEER_SETS, { namespace }),
    ]);
    return { endpoints, peerSets };
  }

  /** The tables' content only (no metadata): what two computations must agree on. */
  async tableContents(namespace: string): Promise<string> {
    const { endpoints, peerSets } = await this.tables(namespace);
    const content = (objects: unknown[]) =>
      objects.map((o) => {
        const { metadata, spec, status } = o as {
          metadata: { name: string };
          spec: unknown;
          status: unknown;
        };
        return { name: metadata.name, spec, status };
      });
    return JSON.stringify({ endpoints: content(endpoints), peerSets: content(peerSets) });
  }

  /** Would this packet pass? Judged from the stored tables alone. */
  async allows(packet: Packet): Promise<boolean> {
    const { endpoints, peerSets } = await this.tables(packet.namespace);
    return decide(storedTablesFromObjects(endpoints, peerSets), packet).allow;
  }
}
