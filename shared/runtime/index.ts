/**
 * The function runtime: serves functions over HTTP and owns everything a handler should not see
 * (HTTP serving, logging, metrics, readiness, shutdown, the outcome -> HTTP reply mapping).
 * It does not parse events itself (shared/events) nor talk to the API server (shared/kube).
 *
 * Example:
 *   const runtime = new Runtime();
 *   const app = createFunctionApp(reconcileRule, runtime);       // POST /
 *   const running = await startServer(app, runtime, { port: 8080 });
 *   closeOnSignals(running, runtime.logger);
 */
export { createCombinedApp, createFunctionApp } from "./app.js";
export type { FunctionApp } from "./app.js";
export { Runtime } from "./runtime.js";
export type { RuntimeOptions } from "./runtime.js";
export {
  DEFAULT_SHUTDOWN_TIMEOUT_MS,
  closeOnSignals,
  createServer,
  logProcessFaults,
  startServer,
} from "./server.js";
export type { RunningServer, ServeOptions, TlsOptions } from "./server.js";
export { portFrom, selectFunctions } from "./select.js";
export { createLogger } from "./log.js";
export type { Logger, LoggerOptions } from "./log.js";
export { RuntimeMetrics } from "./metrics.js";
export type {
  CnfSyncCount,
  FailingClosedCount,
  FunctionMetrics,
  NetpolPolicyProblems,
  PeerReachability,
} from "./metrics.js";
export { BATCH_SEVERITY_ORDER, HEADER, worstResult } from "./reply.js";
export type { EventResult, ResultLabel } from "./reply.js";
export * from "../core/outcome.js";
export type * from "./function.js";
