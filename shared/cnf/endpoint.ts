/**
 * Where a CNF pod's REST API is: pure derivation of scheme and port from the environment and
 * the CNF Deployment's annotations, and the base URL for one pod IP. Plus the client tuning
 * knobs read from the environment.
 */
import { isIP } from "node:net";
import type { Env } from "./credentials.js";
import { CnfConfigError } from "./errors.js";
import { DEFAULT_RESTART_MIN_INTERVAL_MS, DEFAULT_RESTART_QUIET_MS } from "./restarts.js";

/** Per-Deployment override of the CNF REST port (1-65535). */
export const CNF_PORT_ANNOTATION = "sdewan.akraino.org/cnf-port";
/** Per-Deployment override of the CNF REST scheme (`http` or `https`). */
export const CNF_SCHEME_ANNOTATION = "sdewan.akraino.org/cnf-scheme";

export type CnfScheme = "http" | "https";

export interface CnfEndpointConfig {
  readonly scheme: CnfScheme;
  readonly port: number;
}

/**
 * Scheme and port for one CNF Deployment: its annotations win over CNF_SCHEME / CNF_PORT,
 * which win over the defaults (http; port 80 for http, 443 for https, as upstream DESIGN and
 * HEAD). Throws CnfConfigError naming the offending setting.
 */
export function cnfEndpointConfig(
  env: Env,
  annotations?: Readonly<Record<string, string>> | null,
): CnfEndpointConfig {
  const schemeText = annotations?.[CNF_SCHEME_ANNOTATION] ?? env["CNF_SCHEME"];
  const schemeSource =
    annotations?.[CNF_SCHEME_ANNOTATION] === undefined ? "CNF_SCHEME" : CNF_SCHEME_ANNOTATION;
  const scheme = parseScheme(schemeText, schemeSource);
  const portText = annotations?.[CNF_PORT_ANNOTATION] ?? env["CNF_PORT"];
  const portSource =
    annotations?.[CNF_PORT_ANNOTATION] === undefined ? "CNF_PORT" : CNF_PORT_ANNOTATION;
  const port =
    portText === undefined || portText.trim() === ""
      ? defaultPort(scheme)
      : parsePort(portText, portSource);
  return { scheme, port };
}

/** http://<podIP>:<port>/cgi-bin/luci/ (IPv6 in brackets). */
export function cnfBaseUrl(config: CnfEndpointConfig, podIp: string): string {
  const family = isIP(podIp);
  if (family === 0)
    throw new CnfConfigError(`pod IP ${JSON.stringify(podIp)} is not an IP address`);
  const host = family === 6 ? `[${podIp}]` : podIp;
  return `${config.scheme}://${host}:${config.port}/cgi-bin/luci/`;
}

function parseScheme(text: string | undefined, source: string): CnfScheme {
  if (text === undefined || text.trim() === "") return "http";
  const scheme = text.trim().toLowerCase();
  if (scheme === "http" || scheme === "https") return scheme;
  throw new CnfConfigError(`${source} must be http or https, got ${JSON.stringify(text)}`);
}

function parsePort(text: string, source: string): number {
  const port = Number(text.trim());
  if (/^\d+$/.test(text.trim()) && port >= 1 && port <= 65535) return port;
  throw new CnfConfigError(`${source} must be a port number 1-65535, got ${JSON.stringify(text)}`);
}

function defaultPort(scheme: CnfScheme): number {
  return scheme === "https" ? 443 : 80;
}

/** How long and how often the client tries; all in milliseconds. */
export interface CnfRetryPolicy {
  /** Repeats after the first attempt (p-retry `retries`). */
  readonly retries: number;
  readonly minDelayMs: number;
  readonly maxDelayMs: number;
  /** No new attempt starts after this much time since the first (p-retry `maxRetryTime`). */
  readonly budgetMs: number;
}

export interface CnfClientTuning {
  /** Per HTTP request, login included; object writes excepted (writeTimeoutMs). */
  readonly timeoutMs: number;
  /**
   * How long an object write (POST, PUT, DELETE) is waited for. A write is never re-sent after
   * a timeout, so its reply is waited for longer: a write given up on may still be applied
   * later, over a newer one (docs/cnf.md, "Late writes").
   */
  readonly writeTimeoutMs: number;
  /** The service restart runs /etc/init.d scripts synchronously on a real CNF: allow longer. */
  readonly restartTimeoutMs: number;
  readonly retry: CnfRetryPolicy;
  /** How a burst's service restarts are paced (restarts.ts, ADR 0007). */
  readonly restartPacing: { readonly minIntervalMs: number; readonly quietMs: number };
}

export const DEFAULT_CNF_TUNING: CnfClientTuning = {
  timeoutMs: 1500,
  writeTimeoutMs: 10_000,
  restartTimeoutMs: 5000,
  retry: { retries: 2, minDelayMs: 25, maxDelayMs: 150, budgetMs: 600 },
  restartPacing: {
    minIntervalMs: DEFAULT_RESTART_MIN_INTERVAL_MS,
    quietMs: DEFAULT_RESTART_QUIET_MS,
  },
};

/**
 * CNF_TIMEOUT_MS, CNF_WRITE_TIMEOUT_MS, CNF_RESTART_TIMEOUT_MS, CNF_RETRIES, CNF_RETRY_BUDGET_MS,
 * CNF_RESTART_MIN_INTERVAL_MS (0 = restarts never deferred), CNF_RESTART_QUIET_MS over the
 * defaults.
 */
export function cnfClientTuningFromEnv(env: Env): CnfClientTuning {
  const read = (name: string, fallback: number, min: number): number => {
    const text = env[name];
    if (text === undefined || text.trim() === "") return fallback;
    const value = Number(text);
    if (!Number.isInteger(value) || value < min) {
      throw new CnfConfigError(`${name} must be an integer >= ${min}, got ${JSON.stringify(text)}`);
    }
    return value;
  };
  const d = DEFAULT_CNF_TUNING;
  return {
    timeoutMs: read("CNF_TIMEOUT_MS", d.timeoutMs, 1),
    writeTimeoutMs: read("CNF_WRITE_TIMEOUT_MS", d.writeTimeoutMs, 1),
    restartTimeoutMs: read("CNF_RESTART_TIMEOUT_MS", d.restartTimeoutMs, 1),
    retry: {
      ...d.retry,
      retries: read("CNF_RETRIES", d.retry.retries, 0),
      budgetMs: read("CNF_RETRY_BUDGET_MS", d.retry.budgetMs, 0),
    },
    restartPacing: {
      minIntervalMs: read("CNF_RESTART_MIN_INTERVAL_MS", d.restartPacing.minIntervalMs, 0),
      quietMs: read("CNF_RESTART_QUIET_MS", d.restartPacing.quietMs, 0),
    },
  };
}
