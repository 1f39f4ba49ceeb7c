// The world of the ClusterLink integration tests: Exports, Imports and Services on the real API
// server, the clusterlink functions called directly (as many instances as a test wants, each
// with its own client, as separate function pods would have), and readers for what they write.
// Every world uses the default ClusterLink namespace: the Import function's resync and lease
// rounds look at every Import in the cluster, so files running in parallel must agree on it.
// Imports name the Peer `east` unless told otherwise: setUp keeps it there and reachable (as
// clusterlink-peer-health would write it). So no file resyncs clusterlink-peer-health in that
// namespace (a resync heartbeats every Peer of it): peer-health tests use their own namespace,
// or Peer events for their own Peers.
import { randomBytes } from "node:crypto";
import { createClusterLinkExport } from "../../functions/clusterlink-export/index.js";
import { createClusterLinkImport } from "../../functions/clusterlink-import/index.js";
import { DEFAULT_CL_NAMESPACE, type ClusterLinkCondition } from "../../shared/clusterlink/index.js";
import type { Outcome } from "../../shared/core/outcome.js";
import type { IntakeEvent, ObjectRef, WatchAction } from "../../shared/events/types.js";
import {
  clusterLinkResource,
  createKubeClient,
  isKubeError,
  NAMESPACES,
  SERVICES,
  type KubeClient,
  type KubeObject,
  type ObjectInput,
  type ResourceType,
  type Service,
} from "../../shared/kube/index.js";
import type { EventFunction, HandlerContext } from "../../shared/runtime/function.js";
import { adminKubeConfig } from "./support/cluster.js";

export const EXPORTS = clusterLinkResource("Export");
export const IMPORTS = clusterLinkResource("Import");
export const PEERS = clusterLinkResource("Peer");
/** The Peer Imports name by default, kept reachable in the ClusterLink namespace. */
export const DEFAULT_PEER = "east";

const silentLog = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };

export class ClusterLinkWorld {
  readonly run = randomBytes(3).toString("hex");
  readonly kube: KubeClient = createKubeClient(adminKubeConfig());
  /** The ClusterLink namespace (CL_NAMESPACE of its functions). */
  readonly clNamespace = DEFAULT_CL_NAMESPACE;
  /** API requests the functions made, summed since the last reset. */
  readonly calls = { api: 0, cnf: 0 };

  /** A function instance with its own API client, as one function pod. */
  instance(
    fn: "export" | "import",
    kube: KubeClient = createKubeClient(adminKubeConfig()),
  ): EventFunction {
    const deps = { kube: () => kube, env: { CL_NAMESPACE: this.clNamespace } };
    return fn === "export" ? createClusterLinkExport(deps) : createClusterLinkImport(deps);
  }

  readonly exporter = this.instance("export");
  readonly importer = this.instance("import");

  /** Creates the ClusterLink namespace and the default Peer unless another file already did. */
  async setUp(): Promise<void> {
    await createUnlessThere(this.kube, NAMESPACES, { metadata: { name: this.clNamespace } });
    await createUnlessThere(this.kube, PEERS, {
      metadata: { name: DEFAULT_PEER, namespace: this.clNamespace },
      spec: { gateways: [{ host: "127.0.0.1", port: 1 }] },
    });
    await this.peerReachable(DEFAULT_PEER, true);
  }

  /** Writes a Peer's PeerReachable as clusterlink-peer-health would. */
  async peerReachable(name: string, reachable: boolean, message = ""): Promise<void> {
    const condition = {
      type: "PeerReachable",
      status: reachable ? "True" : "False",
      reason: "Heartbeat",
      message,
      lastTransitionTime: new Date().toISOString(),
    };
    await this.kube.patchStatus(
      PEERS,
      { namespace: this.clNamespace, name },
      { conditions: [condition] },
    );
  }

  async namespace(base: string): Promise<string> {
    const name = `${base}-${this.run}-${randomBytes(2).toString("hex")}`;
    await this.kube.create(NAMESPACES, { metadata: { name } });
    return name;
  }

  async service(
    namespace: string,
    name: string,
    ports: readonly number[],
    labels: Record<string, string> = {},
  ): Promise<Service> {
    return this.kube.create(SERVICES, {
      metadata: { name, namespace, labels },
      spec: {
        type: "ClusterIP",
        selector: { app: name },
        ports: ports.map((port) => ({ name: `p${port}`, port, protocol: "TCP" })),
      },
    });
  }

  getService(namespace: string, name: string): Promise<Service | undefined> {
    return this.kube.get(SERVICES, { namespace, name });
  }

  async exportOf(namespace: string, name: string, spec: Record<string, unknown>): Promise<void> {
    await this.kube.create(EXPORTS, { metadata: { name, namespace }, spec });
  }

  async importOf(
    namespace: string,
    name: string,
    spec: Record<string, unknown>,
  ): Promise<KubeObject> {
    return this.kube.create(IMPORTS, {
      metadata: { name, namespace },
      spec: {
        sources: [{ peer: DEFAULT_PEER, exportName: name, exportNamespace: "data" }],
        ...spec,
      },
    });
  }

  async conditions(
    type: typeof EXPORTS,
    namespace: string,
    name: string,
  ): Promise<Record<string, Pick<ClusterLinkCondition, "status" | "reason" | "message">>> {
    const object = await this.kube.get(type, { namespace, name });
    const status = object?.status as { conditions?: ClusterLinkCondition[] } | undefined;
    return Object.fromEntries(
      (status?.conditions ?? []).map((c) => [
        c.type,
        { status: c.status, reason: c.reason, message: c.message },
      ]),
    );
  }

  send(fn: EventFunction, event: IntakeEvent): Promise<Outcome> {
    const ctx: HandlerContext = {
      correlationId: event.id,
      log: silentLog,
      calls: this.calls,
      signal: new AbortController().signal,
    };
    return fn.handle(event, ctx);
  }

  exportEvent(namespace: string, name: string, action: WatchAction = "update"): Promise<Outcome> {
    const ref = { apiVersion: "clusterlink.net/v1alpha1", kind: "Export", namespace, name };
    return this.send(this.exporter, objectEvent(action, ref));
  }

  serviceEvent(
    fn: EventFunction,
    namespace: string,
    name: string,
    action: WatchAction = "update",
  ): Promise<Outcome> {
    return this.send(
      fn,
      objectEvent(action, { apiVersion: "v1", kind: "Service", namespace, name }),
    );
  }

  importEvent(
    namespace: string,
    name: string,
    action: WatchAction = "update",
    fn: EventFunction = this.importer,
  ): Promise<Outcome> {
    const ref = { apiVersion: "clusterlink.net/v1alpha1", kind: "Import", namespace, name };
    return this.send(fn, objectEvent(action, ref));
  }

  resync(fn: EventFunction): Promise<Outcome> {
    return this.send(fn, {
      type: "resync",
      id: `resync-${randomBytes(4).toString("hex")}`,
      scope: {},
    });
  }
}

/**
 * `kube` seeing only the Peers named: the heartbeat tick of a file that shares the ClusterLink
 * namespace with others then probes its own Peers only (as the e2e relay narrows a resync to
 * its namespace); every other read and write goes through unchanged.
 */
export function peersLimitedTo(kube: KubeClient, names: readonly string[]): KubeClient {
  const limited = Object.create(kube) as KubeClient;
  limited.list = async <T extends KubeObject>(
    type: ResourceType<T>,
    options?: Parameters<KubeClient["list"]>[1],
  ): Promise<T[]> => {
    const all = await kube.list(type, options);
    return type === PEERS ? all.filter((p) => names.includes(p.metadata.name)) : all;
  };
  limited.withCalls = (calls) => peersLimitedTo(kube.withCalls(calls), names);
  return limited;
}

/** The first tick of a 10 s window: every Peer is due for a heartbeat, unreachable ones too. */
export const heartbeatWindowStart = (): Date => new Date(Math.floor(Date.now() / 10_000) * 10_000);

async function createUnlessThere(
  kube: KubeClient,
  type: ResourceType,
  object: ObjectInput,
): Promise<void> {
  try {
    await kube.create(type, object);
  } catch (error) {
    if (!isKubeError(error, "conflict")) throw error;
  }
}

export function objectEvent(action: WatchAction, ref: ObjectRef): IntakeEvent {
  return { type: "object", id: `e-${randomBytes(4).toString("hex")}`, action, ref };
}
