/**
 * The connector's Prometheus metrics, on a registry of its own (never prom-client's global one,
 * so tests and an embedding process can run several connectors).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { QueueStats } from "./delivery-queue.js";

export interface ConnectorMetrics {
  readonly registry: Registry;
  readonly observed: Counter<"route" | "action">;
  readonly coalesced: Counter<"route">;
  readonly sent: Counter<"route">;
  readonly retried: Counter<"route" | "reason">;
  readonly deadLettered: Counter<"route" | "reason">;
  readonly handedBack: Counter<"route">;
  readonly deliverySeconds: Histogram<"route">;
  readonly watchRestarts: Counter<"route" | "kind" | "reason">;
  readonly relists: Counter<"route" | "kind">;
  readonly ready: Gauge;
}

export function createMetrics(
  queueStats: () => QueueStats,
  withProcessMetrics = true,
): ConnectorMetrics {
  const registry = new Registry();
  const registers = [registry];
  if (withProcessMetrics)
    collectDefaultMetrics({ register: registry, prefix: "sdewan_connector_" });
  new Gauge({
    name: "sdewan_connector_queue_depth",
    help: "Events waiting for delivery (state=waiting, incl. delayed retries) or being sent (state=in_flight)",
    labelNames: ["state"] as const,
    registers,
    collect() {
      const stats = queueStats();
      this.set({ state: "waiting" }, stats.waiting);
      this.set({ state: "in_flight" }, stats.inFlight);
    },
  });
  return {
    registry,
    observed: new Counter({
      name: "sdewan_connector_events_observed_total",
      help: "Object changes seen by list/watch, and resync ticks (action=resync)",
      labelNames: ["route", "action"] as const,
      registers,
    }),
    coalesced: new Counter({
      name: "sdewan_connector_events_coalesced_total",
      help: "Events merged into a queued event for the same object",
      labelNames: ["route"] as const,
      registers,
    }),
    sent: new Counter({
      name: "sdewan_connector_events_sent_total",
      help: "Events a route's function accepted (2xx)",
      labelNames: ["route"] as const,
      registers,
    }),
    retried: new Counter({
      name: "sdewan_connector_events_retried_total",
      help: "Failed attempts that will be retried, by HTTP status or 'network'",
      labelNames: ["route", "reason"] as const,
      registers,
    }),
    deadLettered: new Counter({
      name: "sdewan_connector_events_dead_lettered_total",
      help: "Events given up on: rejected, attempts-exhausted or age-exhausted",
      labelNames: ["route", "reason"] as const,
      registers,
    }),
    handedBack: new Counter({
      name: "sdewan_connector_events_handed_back_total",
      help: "Events left undelivered at shutdown",
      labelNames: ["route"] as const,
      registers,
    }),
    deliverySeconds: new Histogram({
      name: "sdewan_connector_delivery_duration_seconds",
      help: "Duration of successful deliveries (one attempt)",
      labelNames: ["route"] as const,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    }),
    watchRestarts: new Counter({
      name: "sdewan_connector_watch_restarts_total",
      help: "Watch streams ended and restarted: closed (server timeout), expired (410), inactive (silent), error, forced",
      labelNames: ["route", "kind", "reason"] as const,
      registers,
    }),
    relists: new Counter({
      name: "sdewan_connector_relists_total",
      help: "LISTs after the initial one (410 Gone, silent or failed watch)",
      labelNames: ["route", "kind"] as const,
      registers,
    }),
    ready: new Gauge({
      name: "sdewan_connector_ready",
      help: "1 once every route finished its initial list",
      registers,
    }),
  };
}
