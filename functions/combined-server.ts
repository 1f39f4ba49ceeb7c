/**
 * The combined server, started by server.ts: every function (or those named in FUNCTIONS=a,b) at
 * POST /<name> (a lone function also at POST /) on PORT (default 8080), plus /_/health, /_/ready
 * and /metrics. TLS_CERT_FILE + TLS_KEY_FILE switch the listener to HTTPS (the admission webhook
 * needs it); TLS_CLIENT_CA_FILE also asks clients for a certificate of that CA (clusterlink-authz
 * decides from the verified one). SIGTERM closes gracefully.
 */
import {
  Runtime,
  closeOnSignals,
  createCombinedApp,
  logProcessFaults,
  portFrom,
  selectFunctions,
  startServer,
  type TlsOptions,
} from "../shared/runtime/index.js";
import { FUNCTION_CATALOG } from "./catalog.js";

const env = process.env;
const runtime = new Runtime({ defaultMetrics: true });
logProcessFaults(runtime.logger);

// Only the functions served are imported: one function's pod holds only its own code.
const functions = await Promise.all(
  selectFunctions(FUNCTION_CATALOG, env["FUNCTIONS"]).map((entry) => entry.load()),
);
const certFile = env["TLS_CERT_FILE"];
const keyFile = env["TLS_KEY_FILE"];
const clientCaFile = env["TLS_CLIENT_CA_FILE"];
if (clientCaFile && !(certFile && keyFile))
  throw new Error(
    "TLS_CLIENT_CA_FILE needs TLS_CERT_FILE and TLS_KEY_FILE: client certificates need HTTPS",
  );
const tls: TlsOptions | undefined =
  certFile && keyFile
    ? { certFile, keyFile, ...(clientCaFile ? { clientCaFile } : {}) }
    : undefined;
const shutdownTimeoutMs = env["SHUTDOWN_TIMEOUT_MS"]
  ? Number(env["SHUTDOWN_TIMEOUT_MS"])
  : undefined;

const running = await startServer(createCombinedApp(functions, runtime), runtime, {
  port: portFrom(env["PORT"]),
  ...(env["HOST"] ? { host: env["HOST"] } : {}),
  ...(tls ? { tls } : {}),
  ...(shutdownTimeoutMs ? { shutdownTimeoutMs } : {}),
});
closeOnSignals(running, runtime.logger);
runtime.logger.info(
  { port: running.port, url: running.url, functions: functions.map((fn) => fn.name) },
  "listening",
);
