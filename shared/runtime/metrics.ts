/**
 * Prometheus metrics of one runtime. Each runtime has its own registry, so tests (and two apps in
 * one process) never collide on metric names.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { CallCounters } from "../core/context.js";

export interface EventSample {
  readonly fn: string;
  /** The CloudEvent type, "plain-ref", or "json" for a JsonFunction. */
  readonly type: string;
  /** done | retry | permanent | malformed | error, or "http-<status>" for JSON. */
  readonly outcome: string;
  readonly seconds: number;
  readonly calls: CallCounters;
}

/** One CNF's rules after a sync of it: how many are not in sync on every ready pod. */
export interface CnfSyncCount {
  readonly namespace: string;
  /** The CNF's sdewanPurpose label. */
  readonly cnf: string;
  readonly notInSync: number;
  /** Of those, the rules the CNF keeps losing after they are written back (RepeatedDrift). */
  readonly repeatedDrift: number;
}

/** What a function may report besides its outcome (HandlerContext.metrics). */
export interface FunctionMetrics {
  /**
   * Sets sdewan_rules_not_in_sync for the CNFs just synced. `complete`: the counts cover every
   * CNF of the cluster (a cluster-wide resync), so CNFs not listed are forgotten.
   */
  setRulesNotInSync(counts: readonly CnfSyncCount[], complete: boolean): void;
}

export class RuntimeMetrics implements FunctionMetrics {
  readonly registry = new Registry();
  private readonly events: Counter<"function" | "type" | "outcome">;
  private readonly durations: Histogram<"function" | "outcome">;
  private readonly apiCalls: Counter<"function">;
  private readonly cnfCalls: Counter<"function">;
  private readonly intakeErrors: Counter<"function" | "code">;
  private readonly kubeEvents: Counter<"function" | "result">;
  private readonly cnfFailures: Counter<"function" | "reason">;
  private readonly rulesNotInSync: Gauge<"namespace" | "cnf">;
  private readonly rulesRepeatedDrift: Gauge<"namespace" | "cnf">;
  readonly inFlight: Gauge;

  constructor(options: { readonly defaultMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.events = new Counter({
      name: "sdewan_events_total",
      help: "Events handled, by function, CloudEvent type and outcome",
      labelNames: ["function", "type", "outcome"],
      registers,
    });
    this.durations = new Histogram({
      name: "sdewan_event_duration_seconds",
      help: "Time to handle one event, by function and outcome",
      labelNames: ["function", "outcome"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
    this.apiCalls = new Counter({
      name: "sdewan_api_calls_total",
      help: "Kubernetes API requests made while handling events",
      labelNames: ["function"],
      registers,
    });
    this.cnfCalls = new Counter({
      name: "sdewan_cnf_calls_total",
      help: "CNF REST requests made while handling events",
      labelNames: ["function"],
      registers,
    });
    this.cnfFailures = new Counter({
      name: "sdewan_cnf_failures_total",
      help: "CNF REST calls that failed after the in-process retry, by reason: unreachable, timeout, login-failed, bad-reply, or the CNF's rejection (invalid, server-error, busy, ...)",
      labelNames: ["function", "reason"],
      registers,
    });
    this.rulesNotInSync = new Gauge({
      name: "sdewan_rules_not_in_sync",
      help: "Rules of a CNF (namespace, sdewanPurpose) not in sync on every ready pod after its last sync: rejected, failing, stalled or waiting for the CNF",
      labelNames: ["namespace", "cnf"],
      registers,
    });
    this.rulesRepeatedDrift = new Gauge({
      name: "sdewan_rules_repeated_drift",
      help: "Rules of a CNF (namespace, sdewanPurpose) its pods keep losing after they are written back (condition RepeatedDrift), after its last sync",
      labelNames: ["namespace", "cnf"],
      registers,
    });
    this.intakeErrors = new Counter({
      name: "sdewan_intake_errors_total",
      help: "Requests refused before any function ran, by intake error code",
      labelNames: ["function", "code"],
      registers,
    });
    this.kubeEvents = new Counter({
      name: "sdewan_kube_events_total",
      help: "Kubernetes Events written on managed objects (best-effort), recorded or dropped",
      labelNames: ["function", "result"],
      registers,
    });
    this.inFlight = new Gauge({
      name: "sdewan_requests_in_flight",
      help: "Requests being handled now",
      registers,
    });
    if (options.defaultMetrics === true) collectDefaultMetrics({ register: this.registry });
  }

  recordEvent({ fn, type, outcome, seconds, calls }: EventSample): void {
    this.events.inc({ function: fn, type, outcome });
    this.durations.observe({ function: fn, outcome }, seconds);
    if (calls.api > 0) this.apiCalls.inc({ function: fn }, calls.api);
    if (calls.cnf > 0) this.cnfCalls.inc({ function: fn }, calls.cnf);
    if (calls.eventsRecorded)
      this.kubeEvents.inc({ function: fn, result: "recorded" }, calls.eventsRecorded);
    if (calls.eventsDropped)
      this.kubeEvents.inc({ function: fn, result: "dropped" }, calls.eventsDropped);
    for (const [reason, n] of Object.entries(calls.cnfFailures ?? {}))
      this.cnfFailures.inc({ function: fn, reason }, n);
  }

  setRulesNotInSync(counts: readonly CnfSyncCount[], complete: boolean): void {
    if (complete) {
      this.rulesNotInSync.reset();
      this.rulesRepeatedDrift.reset();
    }
    for (const { namespace, cnf, notInSync, repeatedDrift } of counts) {
      this.rulesNotInSync.set({ namespace, cnf }, notInSync);
      this.rulesRepeatedDrift.set({ namespace, cnf }, repeatedDrift);
    }
  }

  recordIntakeError(fn: string, code: string): void {
    this.intakeErrors.inc({ function: fn, code });
  }
}
