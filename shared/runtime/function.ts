/**
 * The contract between a function (functions/<name>/) and the runtime (shared/runtime).
 * A function is data: a name and a handler. The runtime owns HTTP, logging, metrics and the
 * outcome -> reply mapping, so handlers never see a request or response object.
 */
import type { IntakeEvent } from "../events/types.js";
import type { CallCounters, Log } from "../core/context.js";
import type { Outcome } from "../core/outcome.js";
import type { FunctionMetrics } from "./metrics.js";

export type { CallCounters, Log } from "../core/context.js";

export interface HandlerContext {
  readonly correlationId: string;
  readonly log: Log;
  readonly calls: CallCounters;
  /** Aborted when the runtime shuts down or the request is abandoned. */
  readonly signal: AbortSignal;
  /** Gauges a function sets from what it computed (the runtime's metrics); absent in some tests. */
  readonly metrics?: FunctionMetrics;
  /** Who is calling, as the connection proves it (JSON functions; absent in some tests). */
  readonly caller?: CallerIdentity;
}

/**
 * The caller as its TLS connection proves it, never as the request says. `verified` only when
 * the server asked for client certificates (TlsOptions.clientCaFile) and the one presented
 * chains to that CA.
 */
export interface CallerIdentity {
  readonly verified: boolean;
  /** The verified certificate's DNS subject alternative names, else its subject CN. */
  readonly names: readonly string[];
  /** Why a presented certificate was not verified (OpenSSL's reason). */
  readonly problem?: string;
}

/**
 * A CloudEvent-triggered function: reconcile-rule, on-deployment-ready, egress-group-sync,
 * network-policy-sync, clusterlink-export, clusterlink-import, clusterlink-peer-health.
 */
export interface EventFunction {
  readonly name: string;
  readonly kind: "event";
  handle(event: IntakeEvent, ctx: HandlerContext): Promise<Outcome>;
}

/** A JSON request/response function, not a CloudEvent sink: validate-admission, clusterlink-authz. */
export interface JsonFunction {
  readonly name: string;
  readonly kind: "json";
  /**
   * Its own request body limit, when the runtime's (1 MiB) is too small for what its caller
   * sends: the API server sends AdmissionReviews up to its own 3 MiB request limit.
   */
  readonly maxBodyBytes?: number;
  /** Returns the HTTP status and JSON body. Malformed input is answered by the function itself. */
  handle(body: unknown, ctx: HandlerContext): Promise<{ status: number; body: unknown }>;
}

export type SdewanFunction = EventFunction | JsonFunction;
