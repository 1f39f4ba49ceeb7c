/**
 * The NetworkPolicy node agent (docs/netpol.md "The node agent"; ADR 0014): one per node (a
 * DaemonSet), it keeps the node's packet filter equal to the tables of the node's Pods. Wiring
 * only: watches become hints, shared/netpol/agent-loop.ts decides when to sync, agent-sync.ts
 * re-reads and reloads; /_/health, /_/ready and /metrics on PORT. Environment
 * (agentConfigFromEnv): NODE_NAME, NETPOL_AGENT_POD_INTERFACES, NETPOL_AGENT_TABLE,
 * NETPOL_AGENT_RESYNC_SECONDS, NFT_COMMAND, PORT, HOST.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import * as z from "zod";
import { KubeApi } from "../../connector/kube-api.js";
import { WatchStream, type StreamObserver, type StreamSpec } from "../../connector/watch-stream.js";
import {
  NETPOL_API_VERSION,
  NETPOL_ENDPOINT_KIND,
  NETPOL_PEER_SET_KIND,
} from "../../shared/core/api-groups.js";
import { messageOf } from "../../shared/core/error-message.js";
import { createKubeClient } from "../../shared/kube/index.js";
import type { KubeConfigSource } from "../../shared/kube/config.js";
import {
  NodeAgentLoop,
  kubeNodeAgentStore,
  nftApplier,
  syncNode,
  type HintKind,
  type NftApply,
  type LoadedRuleset,
  type NodeSyncResult,
  type SyncTrigger,
} from "../../shared/netpol/index.js";

/** Interface names as the kernel allows them (15 bytes), with nft's trailing `*` wildcard. */
const INTERFACE = /^[A-Za-z0-9_.:+-]{1,15}\*?$/;

const configSchema = z.object({
  NODE_NAME: z
    .string({ error: "NODE_NAME is required: set it from the downward API (spec.nodeName)" })
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { error: "NODE_NAME must be a node name" }),
  NETPOL_AGENT_POD_INTERFACES: z
    .string({
      error:
        "NETPOL_AGENT_POD_INTERFACES is required: the interfaces the node's Pods are reached through (e.g. cni0, or veth*)",
    })
    .transform((text) =>
      text
        .split(",")
        .map((s) => s.trim())
        .filter(Boolean),
    )
    .pipe(
      z
        .array(
          z
            .string()
            .regex(INTERFACE, { error: "an interface name (15 bytes), or a prefix with *" }),
        )
        .min(1, { error: "name at least one interface" }),
    ),
  NETPOL_AGENT_TABLE: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]{0,30}$/, { error: "an nftables table name: letters, digits, _" })
    .default("sdewan_netpol"),
  NETPOL_AGENT_RESYNC_SECONDS: z.coerce.number().int().min(1).default(60),
  NFT_COMMAND: z
    .string()
    .default("nft")
    .transform((text) => text.split(" ").filter(Boolean)),
  PORT: z.coerce.number().int().min(0).max(65535).default(9910),
  HOST: z.string().default("0.0.0.0"),
});

export interface NodeAgentConfig {
  readonly node: string;
  readonly podInterfaces: readonly string[];
  readonly table: string;
  readonly resyncMs: number;
  readonly nftCommand: readonly string[];
  readonly port: number;
  readonly host: string;
}

export class AgentConfigError extends Error {
  readonly code = "agent-config";
}

export function agentConfigFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): NodeAgentConfig {
  const parsed = configSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new AgentConfigError(`invalid netpol node agent settings:\n${lines.join("\n")}`);
  }
  const c = parsed.data;
  return {
    node: c.NODE_NAME,
    podInterfaces: c.NETPOL_AGENT_POD_INTERFACES,
    table: c.NETPOL_AGENT_TABLE,
    resyncMs: c.NETPOL_AGENT_RESYNC_SECONDS * 1000,
    nftCommand: c.NFT_COMMAND,
    port: c.PORT,
    host: c.HOST,
  };
}

export interface NodeAgentDeps {
  readonly kubeConfig: KubeConfigSource;
  readonly logger: Logger;
  /** Loads a script; default nft -f - through config.nftCommand. */
  readonly apply?: NftApply;
  /** Default true; tests running several agents in one process turn it off. */
  readonly processMetrics?: boolean;
  /** Told every sync's result (tests wait on it). */
  readonly onSynced?: (result: NodeSyncResult, trigger: SyncTrigger) => void;
}

/** What the agent watches: each change is a hint. Pods of this node only (the server filters). */
function streamSpecs(node: string): StreamSpec[] {
  const spec = (apiVersion: string, kind: HintKind, fieldSelector?: string): StreamSpec => ({
    route: "netpol-node-agent",
    apiVersion,
    kind,
    namespace: undefined,
    labelSelector: undefined,
    ...(fieldSelector === undefined ? {} : { fieldSelector }),
    keepObjects: false,
  });
  return [
    spec("v1", "Pod", `spec.nodeName=${node}`),
    spec(NETPOL_API_VERSION, NETPOL_ENDPOINT_KIND),
    spec(NETPOL_API_VERSION, NETPOL_PEER_SET_KIND),
    spec("networking.k8s.io/v1", "NetworkPolicy"),
  ];
}

function createMetrics(processMetrics: boolean) {
  const registry = new Registry();
  const registers = [registry];
  if (processMetrics) collectDefaultMetrics({ register: registry, prefix: "sdewan_netpol_agent_" });
  return {
    registry,
    syncs: new Counter({
      name: "sdewan_netpol_agent_syncs_total",
      help: "Syncs by trigger (start, hint, resync, retry) and result (table, update, table after a refused update, none, failed)",
      labelNames: ["trigger", "result"] as const,
      registers,
    }),
    syncSeconds: new Histogram({
      name: "sdewan_netpol_agent_sync_seconds",
      help: "One sync by stage: read (API server), plan, apply (nft -f)",
      labelNames: ["stage"] as const,
      buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers,
    }),
    ruleset: new Gauge({
      name: "sdewan_netpol_agent_ruleset",
      help: "The ruleset last planned: bytes, chains, rules, sets, elements",
      labelNames: ["measure"] as const,
      registers,
    }),
    pods: new Gauge({
      name: "sdewan_netpol_agent_pods",
      help: "The node's Pods by state: tables, unselected, awaiting-tables, unreadable, address-clash",
      labelNames: ["state"] as const,
      registers,
    }),
    lastApplied: new Gauge({
      name: "sdewan_netpol_agent_last_applied_timestamp_seconds",
      help: "When a ruleset was last loaded into the packet filter",
      registers,
    }),
    ready: new Gauge({
      name: "sdewan_netpol_agent_ready",
      help: "1 once a ruleset has been loaded since start",
      registers,
    }),
  };
}

type AgentMetrics = ReturnType<typeof createMetrics>;

function recordSync(metrics: AgentMetrics, result: NodeSyncResult, trigger: SyncTrigger): void {
  metrics.syncs.inc({ trigger, result: result.loaded });
  for (const [stage, ms] of [
    ["read", result.timings.readMs],
    ["plan", result.timings.planMs],
    ["apply", result.timings.applyMs],
  ] as const) {
    if (stage !== "apply" || result.applied) metrics.syncSeconds.observe({ stage }, ms / 1000);
  }
  const stats: Readonly<Record<string, number>> = { ...result.stats };
  for (const [measure, value] of Object.entries(stats)) metrics.ruleset.set({ measure }, value);
  for (const [state, count] of Object.entries(result.pods)) metrics.pods.set({ state }, count);
  if (result.applied) {
    metrics.lastApplied.set(Date.now() / 1000);
    metrics.ready.set(1);
  }
}

export class RunningNodeAgent {
  private constructor(
    readonly loop: NodeAgentLoop,
    private readonly streams: readonly WatchStream[],
    private readonly server: http.Server,
    readonly metrics: AgentMetrics,
  ) {}

  static async start(config: NodeAgentConfig, deps: NodeAgentDeps): Promise<RunningNodeAgent> {
    const log = deps.logger;
    const metrics = createMetrics(deps.processMetrics ?? true);
    const store = kubeNodeAgentStore(createKubeClient(deps.kubeConfig));
    const apply = deps.apply ?? nftApplier(config.nftCommand);
    let previous: LoadedRuleset | undefined;
    const ruleset = { table: config.table, podInterfaces: config.podInterfaces };
    const loop = new NodeAgentLoop({
      resyncMs: config.resyncMs,
      log,
      sync: async (force) => {
        const result = await syncNode(store, {
          node: config.node,
          ruleset,
          apply,
          force,
          ...(previous === undefined ? {} : { previous }),
        });
        previous = { plan: result.plan, script: result.script };
        return result;
      },
      onSynced: (result, trigger) => {
        recordSync(metrics, result, trigger);
        const fields = {
          trigger,
          loaded: result.loaded,
          loadedBytes: result.loadedBytes,
          pods: result.pods,
          ruleset: result.stats,
          ms: result.timings,
          ...(result.problems.length > 0 ? { problems: result.problems.slice(0, 20) } : {}),
        };
        if (result.problems.length > 0)
          log.warn(fields, "netpol ruleset synced; some Pods fail closed");
        else if (result.applied && trigger !== "resync") log.info(fields, "netpol ruleset loaded");
        else
          log.debug(
            fields,
            result.applied ? "netpol ruleset reloaded" : "netpol ruleset unchanged",
          );
        deps.onSynced?.(result, trigger);
      },
      onFailed: (error, trigger) => {
        metrics.syncs.inc({ trigger, result: "failed" });
        log.error({ trigger, err: messageOf(error) }, "netpol ruleset sync failed");
      },
    });
    const api = new KubeApi(deps.kubeConfig, { requestTimeoutMs: 180_000 });
    const observer: StreamObserver = {
      change: (spec, change) =>
        loop.hint({ kind: spec.kind as HintKind, namespace: change.namespace, name: change.name }),
      synced: () => undefined,
      // A re-list reports what changed meanwhile as changes; a resumed watch lost nothing.
      restarted: (spec, reason, relist) =>
        log.debug({ kind: spec.kind, reason, relist }, "netpol agent watch restarted"),
      failed: (spec, stage, error, retryInMs) =>
        log.warn(
          { kind: spec.kind, stage, err: error.message, retryInMs },
          "netpol agent watch failed",
        ),
    };
    const timing = {
      pageSize: 500,
      watchTimeoutSeconds: 300,
      inactivityMs: 180_000,
      backoff: { initialDelayMs: 1_000, maxDelayMs: 30_000 },
    };
    const streams = streamSpecs(config.node).map(
      (spec) => new WatchStream(api, spec, timing, observer),
    );
    const server = http.createServer((req, res) => serve(req, res, loop, metrics));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, resolve);
    });
    loop.start();
    for (const stream of streams) stream.start();
    const agent = new RunningNodeAgent(loop, streams, server, metrics);
    log.info(
      {
        node: config.node,
        table: config.table,
        podInterfaces: config.podInterfaces,
        url: agent.url(),
      },
      "netpol node agent started",
    );
    return agent;
  }

  /** Base URL of /_/health, /_/ready and /metrics. */
  url(): string {
    const { address, port } = this.server.address() as AddressInfo;
    return `http://${address.includes(":") ? `[${address}]` : address}:${port}`;
  }

  /**
   * Stops watching and syncing. The packet filter keeps the ruleset last loaded: a restarting
   * agent (a rollout) never leaves the node's Pods open; `nft delete table` removes it.
   */
  async stop(): Promise<void> {
    await Promise.all(this.streams.map((s) => s.stop()));
    await this.loop.stop();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function serve(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  loop: NodeAgentLoop,
  metrics: AgentMetrics,
): void {
  const path = (req.url ?? "/").split("?")[0];
  if (req.method !== "GET") {
    res.writeHead(405, { allow: "GET" }).end();
  } else if (path === "/_/health") {
    res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
  } else if (path === "/_/ready") {
    res
      .writeHead(loop.ready ? 200 : 503, { "content-type": "text/plain" })
      .end(loop.ready ? "ready\n" : "no ruleset loaded yet\n");
  } else if (path === "/metrics") {
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text),
      (error: unknown) => res.writeHead(500).end(messageOf(error)),
    );
  } else {
    res.writeHead(404).end();
  }
}
