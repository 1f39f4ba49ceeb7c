/**
 * Listening and stopping: plain HTTP for event functions, HTTPS when given a cert and key (the
 * admission webhook must speak TLS). Graceful close: readiness 503, stop accepting, let in-flight
 * requests finish (up to a deadline, then abort them), then close every connection.
 */
import { readFileSync } from "node:fs";
import type { Server } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { FunctionApp } from "./app.js";
import type { Logger } from "./log.js";
import type { Runtime } from "./runtime.js";

export type TlsOptions = (
  | { readonly certFile: string; readonly keyFile: string }
  | { readonly cert: string | Buffer; readonly key: string | Buffer }
) & {
  /**
   * Ask every client for a certificate and verify it against this CA (PEM file). The handshake
   * still completes without one, so health probes work and a JSON function answers 401 with the
   * reason; a JsonFunction sees the verified identity in `ctx.caller`.
   */
  readonly clientCaFile?: string;
};

export interface ServeOptions {
  /** 0 picks a free port. */
  readonly port: number;
  /** Default: all interfaces. */
  readonly host?: string;
  /** Serve HTTPS with this certificate and key. */
  readonly tls?: TlsOptions;
  /** How long close() waits for in-flight requests before aborting them. Default 25 s. */
  readonly shutdownTimeoutMs?: number;
}

export interface RunningServer {
  readonly server: Server;
  readonly port: number;
  /** e.g. "http://127.0.0.1:8080" (the host as given, or 127.0.0.1). */
  readonly url: string;
  /** Graceful close; idempotent. Resolves when every connection is closed. */
  close(): Promise<void>;
}

/** Kubernetes waits 30 s (terminationGracePeriodSeconds) before SIGKILL; finish before that. */
export const DEFAULT_SHUTDOWN_TIMEOUT_MS = 25_000;

const ABORTED_REPLY_GRACE_MS = 1_000;

/** node:http as CommonJS: its ESM facade would load undici at start (see shared/kube/transport). */
const { createServer: createHttpServer } = process.getBuiltinModule("node:http");

/**
 * How long an idle keep-alive connection stays open: longer than the callers keep theirs idle (Go's
 * http.Transport, used by Knative's dispatchers, OpenFaaS and the API server: 90 s). Node's 5 s
 * default closes sockets a caller is about to reuse, and a POST on one fails before it is sent.
 */
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;

/** Both servers' keep-alive settings; headersTimeout must exceed keepAliveTimeout (Node's rule). */
function keptAlive<T extends Server>(server: T): T {
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;
  return server;
}

export function createServer(app: FunctionApp, tls?: TlsOptions): Server {
  if (tls === undefined) return keptAlive(createHttpServer(app));
  const material =
    "certFile" in tls
      ? { cert: readFileSync(tls.certFile), key: readFileSync(tls.keyFile) }
      : { cert: tls.cert, key: tls.key };
  const clients =
    tls.clientCaFile === undefined
      ? {}
      : { requestCert: true, rejectUnauthorized: false, ca: readFileSync(tls.clientCaFile) };
  return keptAlive(createHttpsServer({ ...material, ...clients }, app));
}

export async function startServer(
  app: FunctionApp,
  runtime: Runtime,
  options: ServeOptions,
): Promise<RunningServer> {
  const server = createServer(app, options.tls);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const scheme = options.tls === undefined ? "http" : "https";
  const host = options.host && options.host !== "0.0.0.0" ? options.host : "127.0.0.1";
  let closing: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closing ??= closeGracefully(server, runtime, options.shutdownTimeoutMs);
    return closing;
  };
  return { server, port, url: `${scheme}://${host}:${port}`, close };
}

async function closeGracefully(
  server: Server,
  runtime: Runtime,
  timeoutMs = DEFAULT_SHUTDOWN_TIMEOUT_MS,
): Promise<void> {
  runtime.beginShutdown();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeIdleConnections();
  const inFlight = runtime.requestsInFlight;
  const drained = await runtime.drain(timeoutMs);
  runtime.logger.info(
    { inFlight, drained },
    drained ? "in-flight requests finished" : "aborted in-flight requests at the deadline",
  );
  // Aborted handlers get a moment to answer (a retry, typically) before their sockets are cut.
  if (!drained) await runtime.drain(ABORTED_REPLY_GRACE_MS);
  // Nothing is in flight any more: cut every socket, idle or not. A keep-alive client (the API
  // server calling the webhook over TLS) otherwise holds close() open past the grace period.
  server.closeAllConnections();
  await closed;
}

/** SIGTERM / SIGINT -> graceful close, then `exit` (process.exit by default). */
export function closeOnSignals(
  running: RunningServer,
  logger: Logger,
  exit: (code: number) => void = (code) => process.exit(code),
): void {
  const onSignal = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, "shutting down: no new connections, finishing in-flight requests");
    running.close().then(
      () => {
        logger.info({ signal }, "stopped");
        exit(0);
      },
      (error: unknown) => {
        logger.error({ err: error }, "shutdown failed");
        exit(1);
      },
    );
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
}

/** An unhandled rejection is logged, not fatal: one bad event must not take the others down. */
export function logProcessFaults(logger: Logger): void {
  process.on("unhandledRejection", (reason) => {
    logger.error({ err: reason }, "unhandled promise rejection");
  });
}
