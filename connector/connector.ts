/**
 * connector/: the project's own event source for OpenFaaS and local runs (Knative users have
 * ApiServerSource + PingSource instead). It owns watching the API server and delivering
 * ApiServerSource-compatible CloudEvents to function URLs, at least once, in order per object,
 * plus periodic resync events. It does not reconcile anything, and keeps no state that a restart
 * cannot rebuild: the initial list re-announces every object.
 *
 * Layout: pure core (pending-event, delivery-queue, retry-policy, plan-relist, cloudevent),
 * effectful shells (dispatcher, watch-stream over kube-api, http-sender), this file wiring them
 * with logs, metrics and the health/metrics HTTP server, and main.ts (the CLI).
 *
 * Example:
 *   const connector = await startConnector(loadConfig("manifests/connector/config.yaml"),
 *                                          { kubeConfig, logger });
 *   await connector.whenReady();
 *   const report = await connector.stop();
 */
import { randomUUID } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { KubeConfigSource } from "../shared/kube/config.js";
import type { ConnectorConfig, RouteConfig } from "./config.js";
import { Dispatcher, type DispatcherObserver, type DrainReport } from "./dispatcher.js";
import { HttpSender, type RouteTarget } from "./http-sender.js";
import { KubeApi, type KubeObject } from "./kube-api.js";
import { createMetrics, type ConnectorMetrics } from "./metrics.js";
import type { PendingEvent } from "./pending-event.js";
import { failureReason } from "./retry-policy.js";
import type { ObservedChange } from "./plan-relist.js";
import { WatchStream, type StreamObserver, type StreamSpec } from "./watch-stream.js";

export interface ConnectorDeps {
  readonly kubeConfig: KubeConfigSource;
  readonly logger: Logger;
  /** Default true; tests running several connectors in one process turn it off. */
  readonly processMetrics?: boolean;
}

export interface ShutdownReport extends DrainReport {
  /** Handed-back events per route and action, for the final log line. */
  readonly handedBackByRoute: Readonly<Record<string, Readonly<Record<string, number>>>>;
}

export const resyncSource = (route: string): string => `/sdewan-connector/routes/${route}`;

export class Connector {
  readonly metrics: ConnectorMetrics;
  readonly streams: readonly WatchStream[];
  private readonly dispatcher: Dispatcher;
  private readonly server: http.Server;
  private readonly resyncTimers: NodeJS.Timeout[] = [];
  private readonly readyWaiters: Array<() => void> = [];
  private stopping: Promise<ShutdownReport> | undefined;

  constructor(
    private readonly config: ConnectorConfig,
    private readonly deps: ConnectorDeps,
  ) {
    // A request that stays silent as long as a dead watch would is dead too (a frozen connection).
    const api = new KubeApi(deps.kubeConfig, { requestTimeoutMs: config.watch.inactivity });
    const routes = new Map<string, RouteTarget>(config.routes.map((r) => [r.name, r]));
    const log = deps.logger;
    const sender = new HttpSender({
      routes,
      source: config.source ?? api.server(),
      resyncSource,
      timeoutMs: config.delivery.timeout,
    });
    this.dispatcher = new Dispatcher({
      maxInFlight: config.delivery.concurrency,
      policy: {
        initialDelayMs: config.delivery.backoff.initial,
        maxDelayMs: config.delivery.backoff.max,
        maxAttempts: config.delivery.maxAttempts,
        maxAgeMs: config.delivery.maxAge,
        retryAfterMaxMs: config.delivery.retryAfterMax,
      },
      sender,
      observer: this.deliveryObserver(routes),
    });
    this.metrics = createMetrics(() => this.dispatcher.stats(), deps.processMetrics ?? true);
    const timing = {
      pageSize: config.watch.pageSize,
      watchTimeoutSeconds: Math.round(config.watch.timeout / 1000),
      inactivityMs: config.watch.inactivity,
      backoff: {
        initialDelayMs: config.watch.backoff.initial,
        maxDelayMs: config.watch.backoff.max,
      },
    };
    const observer = this.streamObserver();
    this.streams = config.routes.flatMap((route) =>
      streamSpecs(route).map((spec) => new WatchStream(api, spec, timing, observer)),
    );
    this.server = http.createServer((req, res) => this.serveHttp(req, res));
    log.info(
      {
        routes: config.routes.map((r) => ({ name: r.name, url: r.url, mode: r.mode })),
        streams: this.streams.length,
      },
      "connector configured",
    );
  }

  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(this.config.http.port, this.config.http.host, () => resolve());
    });
    this.deps.logger.info({ address: this.url() }, "health and metrics listening");
    for (const stream of this.streams) stream.start();
    for (const route of this.config.routes) this.startResync(route);
    this.checkReady();
  }

  /** Base URL of /metrics, /healthz and /readyz. */
  url(): string {
    const { address, port } = this.server.address() as AddressInfo;
    const host = address.includes(":") ? `[${address}]` : address;
    return `http://${host}:${port}`;
  }

  isReady(): boolean {
    return this.stopping === undefined && this.streams.every((s) => s.synced);
  }

  whenReady(): Promise<void> {
    if (this.isReady()) return Promise.resolve();
    return new Promise((resolve) => this.readyWaiters.push(resolve));
  }

  /** Stops watches and resync, drains deliveries within the grace period, reports what is left. */
  stop(graceMs = this.config.shutdownGrace): Promise<ShutdownReport> {
    this.stopping ??= this.shutdown(graceMs);
    return this.stopping;
  }

  private async shutdown(graceMs: number): Promise<ShutdownReport> {
    const log = this.deps.logger;
    log.info({ graceMs }, "connector stopping: watches stop, deliveries drain");
    this.metrics.ready.set(0);
    for (const timer of this.resyncTimers) clearInterval(timer);
    await Promise.all(this.streams.map((s) => s.stop()));
    const drain = await this.dispatcher.shutdown(graceMs);
    const byRoute: Record<string, Record<string, number>> = {};
    for (const { event } of drain.handedBack) {
      const counts = (byRoute[event.route] ??= {});
      counts[event.action] = (counts[event.action] ?? 0) + 1;
      this.metrics.handedBack.inc({ route: event.route });
    }
    const report = { ...drain, handedBackByRoute: byRoute };
    const deletes = drain.handedBack.filter((h) => h.event.action === "delete").length;
    log.info(
      {
        finished: drain.finished,
        handedBack: drain.handedBack.length,
        handedBackByRoute: byRoute,
        handedBackSample: drain.handedBack
          .slice(0, 20)
          .map((h) => ({ key: h.key, action: h.event.action, why: h.why })),
        ...(deletes > 0
          ? {
              note: `${deletes} delete(s) handed back: the next start's initial list cannot replay them; resync covers them`,
            }
          : {}),
      },
      "connector stopped",
    );
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
    return report;
  }

  private startResync(route: RouteConfig): void {
    if (route.resync === undefined) return;
    const timer = setInterval(() => {
      this.metrics.observed.inc({ route: route.name, action: "resync" });
      this.dispatcher.enqueue({ route: route.name, action: "resync", id: randomUUID() });
    }, route.resync);
    this.resyncTimers.push(timer);
  }

  private checkReady(): void {
    if (!this.isReady()) return;
    this.metrics.ready.set(1);
    for (const resolve of this.readyWaiters.splice(0)) resolve();
  }

  private serveHttp(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method !== "GET") {
      res.writeHead(405, { allow: "GET" }).end();
    } else if (path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    } else if (path === "/readyz") {
      const waiting = this.streams.filter((s) => !s.synced).map((s) => describeStream(s.spec));
      const ready = this.isReady();
      res
        .writeHead(ready ? 200 : 503, { "content-type": "application/json" })
        .end(
          JSON.stringify(
            ready
              ? { ready }
              : { ready, stopping: this.stopping !== undefined, waitingForInitialList: waiting },
          ),
        );
    } else if (path === "/metrics") {
      this.metrics.registry.metrics().then(
        (text) =>
          res.writeHead(200, { "content-type": this.metrics.registry.contentType }).end(text),
        (error: unknown) => res.writeHead(500).end(String(error)),
      );
    } else {
      res.writeHead(404).end();
    }
  }

  private streamObserver(): StreamObserver {
    const log = this.deps.logger;
    const modeOf = new Map(this.config.routes.map((r) => [r.name, r.mode]));
    return {
      change: (spec, change) => {
        this.metrics.observed.inc({ route: spec.route, action: change.action });
        this.dispatcher.enqueue(
          toPendingEvent(spec, change, modeOf.get(spec.route) === "Resource"),
        );
      },
      synced: (spec, objects) => {
        log.info({ stream: describeStream(spec), objects }, "initial list queued as add events");
        this.checkReady();
        if (this.isReady()) log.info({}, "connector ready: every route listed");
      },
      restarted: (spec, reason, relist, detail) => {
        const labels = { route: spec.route, kind: spec.kind };
        this.metrics.watchRestarts.inc({ ...labels, reason });
        if (relist) this.metrics.relists.inc(labels);
        const fields = {
          stream: describeStream(spec),
          reason,
          relist,
          ...(detail ? { detail } : {}),
        };
        if (reason === "closed" || reason === "forced") log.debug(fields, "watch restarted");
        else log.info(fields, "watch restarted");
      },
      failed: (spec, stage, error, retryInMs) => {
        log.warn(
          { stream: describeStream(spec), stage, err: error.message, retryInMs },
          "list/watch failed",
        );
      },
    };
  }

  private deliveryObserver(routes: ReadonlyMap<string, RouteTarget>): DispatcherObserver {
    const log = this.deps.logger;
    return {
      queued: (event, how) => {
        if (how === "coalesced") this.metrics.coalesced.inc({ route: event.route });
      },
      delivered: ({ event, attempt }, result, durationMs) => {
        this.metrics.sent.inc({ route: event.route });
        this.metrics.deliverySeconds.observe({ route: event.route }, durationMs / 1000);
        log.debug(
          {
            ...describeEvent(event),
            attempt,
            status: result.kind === "response" ? result.status : undefined,
            durationMs,
          },
          "delivered",
        );
      },
      retrying: ({ event, attempt }, result, delayMs) => {
        this.metrics.retried.inc({ route: event.route, reason: failureReason(result) });
        log.info(
          { ...describeEvent(event), attempt, reason: failureReason(result), retryInMs: delayMs },
          "delivery failed, will retry",
        );
      },
      deadLettered: ({ event, attempt }, reason, result, ageMs) => {
        this.metrics.deadLettered.inc({ route: event.route, reason });
        log.error(
          {
            deadLetter: true,
            ...describeEvent(event),
            url: routes.get(event.route)?.url,
            reason,
            attempts: attempt,
            ageMs,
            lastStatus: result.kind === "response" ? result.status : undefined,
            lastError: result.kind === "network-error" ? result.message : undefined,
            sinkAnswer: result.kind === "response" ? result.body : undefined,
          },
          "event dead-lettered",
        );
      },
    };
  }
}

export async function startConnector(
  config: ConnectorConfig,
  deps: ConnectorDeps,
): Promise<Connector> {
  const connector = new Connector(config, deps);
  await connector.start();
  return connector;
}

function streamSpecs(route: RouteConfig): StreamSpec[] {
  return route.resources.flatMap((resource) =>
    (resource.namespaces ?? [undefined]).map((namespace) => ({
      route: route.name,
      apiVersion: resource.apiVersion,
      kind: resource.kind,
      namespace,
      labelSelector: resource.selector,
      keepObjects: route.mode === "Resource",
    })),
  );
}

function toPendingEvent(
  spec: StreamSpec,
  change: ObservedChange,
  resourceMode: boolean,
): PendingEvent {
  const ref = {
    apiVersion: spec.apiVersion,
    kind: spec.kind,
    namespace: change.namespace,
    name: change.name,
  };
  const base = { route: spec.route, action: change.action, ref, id: randomUUID() };
  if (!resourceMode || change.object === undefined) return base;
  return { ...base, object: withTypeMeta(change.object, spec) };
}

/** List items come without apiVersion/kind; Resource-mode data must carry them like a watch object. */
function withTypeMeta(object: KubeObject, spec: StreamSpec): KubeObject {
  return {
    ...object,
    apiVersion: object.apiVersion ?? spec.apiVersion,
    kind: object.kind ?? spec.kind,
  };
}

function describeStream(spec: StreamSpec): string {
  const where = spec.namespace === undefined ? "all namespaces" : `namespace ${spec.namespace}`;
  const selector = spec.labelSelector === undefined ? "" : ` (${spec.labelSelector})`;
  return `${spec.route}: ${spec.apiVersion} ${spec.kind} in ${where}${selector}`;
}

function describeEvent(event: PendingEvent): Record<string, unknown> {
  const base = { route: event.route, ceId: event.id, action: event.action };
  if (event.action === "resync") return base;
  const { apiVersion, kind, namespace, name } = event.ref;
  return { ...base, object: { apiVersion, kind, namespace, name } };
}
