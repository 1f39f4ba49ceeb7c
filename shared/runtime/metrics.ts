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

/** A ClusterLink Peer as its last heartbeat left it. */
export interface PeerReachability {
  readonly peer: string;
  readonly reachable: boolean;
}

/** Endpoint tables (Pods) whose ingress or egress denies everything: more rule bits than fit. */
export interface FailingClosedCount {
  readonly ingress: number;
  readonly egress: number;
}

/** One NetworkPolicy's compiled peer set: the reasons of its problems (none: as written). */
export interface NetpolPolicyProblems {
  readonly namespace: string;
  readonly policy: string;
  /** e.g. PeerSetTooLarge, TooManyRules, InvalidSelector. */
  readonly reasons: readonly string[];
}

/** What a function may report besides its outcome (HandlerContext.metrics). */
export interface FunctionMetrics {
  /**
   * Sets sdewan_rules_not_in_sync for the CNFs just synced. `complete`: the counts cover every
   * CNF of the cluster (a cluster-wide resync), so CNFs not listed are forgotten.
   */
  setRulesNotInSync(counts: readonly CnfSyncCount[], complete: boolean): void;
  /**
   * Sets sdewan_clusterlink_peer_unreachable for the Peers just heartbeaten (one series per Peer
   * of the ClusterLink namespace: as many as the site administrator made). `complete`: every
   * Peer of it (a resync), so Peers not listed (deleted) are forgotten.
   */
  setPeersReachable(peers: readonly PeerReachability[], complete: boolean): void;
  /** Sets sdewan_netpol_endpoints_fail_closed from a recompute that compiled every table. */
  setNetpolFailingClosed(count: FailingClosedCount): void;
  /**
   * Sets sdewan_netpol_policy_problems for the policies just compiled: 1 per problem reason, the
   * policy's other reasons forgotten. `complete`: every policy of the cluster is listed.
   */
  setNetpolPolicyProblems(report: readonly NetpolPolicyProblems[], complete: boolean): void;
}

export class RuntimeMetrics implements FunctionMetrics {
  readonly registry = new Registry();
  private readonly events: Counter<"function" | "type" | "outcome">;
  private readonly durations: Histogram<"function" | "outcome">;
  private readonly apiCalls: Counter<"function">;
  private readonly cnfCalls: Counter<"function">;
  private readonly intakeErrors: Counter<"function" | "code">;
  private readonly kubeEvents: Counter<"function" | "result">;
  private readonly kubeEventRequests: Counter<"function">;
  private readonly cnfFailures: Counter<"function" | "reason">;
  private readonly rulesNotInSync: Gauge<"namespace" | "cnf">;
  private readonly rulesRepeatedDrift: Gauge<"namespace" | "cnf">;
  private readonly peerUnreachable: Gauge<"peer">;
  private readonly netpolFailClosed: Gauge<"direction">;
  private readonly netpolProblems: Gauge<"namespace" | "policy" | "reason">;
  /** Reasons netpolProblems has had, so a policy's series can be removed without a list. */
  private readonly netpolReasons = new Set<string>();
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
    this.peerUnreachable = new Gauge({
      name: "sdewan_clusterlink_peer_unreachable",
      help: "1 while a ClusterLink Peer is unreachable (PeerReachable False after upstream's thresholds), 0 while reachable, per Peer of the ClusterLink namespace, as its last heartbeat left it",
      labelNames: ["peer"],
      registers,
    });
    this.netpolFailClosed = new Gauge({
      name: "sdewan_netpol_endpoints_fail_closed",
      help: "Pods whose ingress or egress enforcement table fails closed (more than 64 rule bits: all traffic of that direction denied), after the last recompute of every table",
      labelNames: ["direction"],
      registers,
    });
    this.netpolProblems = new Gauge({
      name: "sdewan_netpol_policy_problems",
      help: "1 while a NetworkPolicy's compiled tables carry a problem of this reason after its last recompute: PeerSetTooLarge (its label-selected peers are denied), TooManyRules (an endpoint's direction fails closed), InvalidSelector",
      labelNames: ["namespace", "policy", "reason"],
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
      help: "Kubernetes Events written on managed objects (best-effort): recorded, dropped, or limited (held back by the per-object bound)",
      labelNames: ["function", "result"],
      registers,
    });
    this.kubeEventRequests = new Counter({
      name: "sdewan_kube_event_requests_total",
      help: "Kubernetes API requests made to write Events (not in sdewan_api_calls_total): about one per recorded Event",
      labelNames: ["function"],
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
    if (calls.eventsLimited)
      this.kubeEvents.inc({ function: fn, result: "limited" }, calls.eventsLimited);
    if (calls.eventRequests) this.kubeEventRequests.inc({ function: fn }, calls.eventRequests);
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

  setPeersReachable(peers: readonly PeerReachability[], complete: boolean): void {
    if (complete) this.peerUnreachable.reset();
    for (const { peer, reachable } of peers) this.peerUnreachable.set({ peer }, reachable ? 0 : 1);
  }

  setNetpolFailingClosed({ ingress, egress }: FailingClosedCount): void {
    this.netpolFailClosed.set({ direction: "ingress" }, ingress);
    this.netpolFailClosed.set({ direction: "egress" }, egress);
  }

  setNetpolPolicyProblems(report: readonly NetpolPolicyProblems[], complete: boolean): void {
    if (complete) this.netpolProblems.reset();
    for (const { namespace, policy, reasons } of report) {
      if (!complete) {
        for (const reason of this.netpolReasons)
          this.netpolProblems.remove({ namespace, policy, reason });
      }
      for (const reason of reasons) {
        this.netpolReasons.add(reason);
        this.netpolProblems.set({ namespace, policy, reason }, 1);
      }
    }
  }

  recordIntakeError(fn: string, code: string): void {
    this.intakeErrors.inc({ function: fn, code });
  }
}
