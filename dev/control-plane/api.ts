// Minimal HTTPS access to the local kube-apiserver (bearer token + its own CA), for start-up,
// readiness and CRD installation. Tests use @kubernetes/client-node instead.
import http from "node:http";
import https from "node:https";
import { setTimeout as delay } from "node:timers/promises";

export interface ApiEndpoint {
  readonly server: string;
  readonly caPem: string;
  readonly token: string;
}

export interface ApiResponse {
  readonly status: number;
  readonly body: string;
}

export interface ApiRequest {
  readonly method?: string;
  readonly body?: string;
  readonly contentType?: string;
  readonly accept?: string;
  readonly timeoutMs?: number;
  /** More headers, e.g. Impersonate-User. */
  readonly headers?: Readonly<Record<string, string>>;
}

export function apiRequest(
  endpoint: ApiEndpoint,
  path: string,
  request: ApiRequest = {},
): Promise<ApiResponse> {
  const url = new URL(path, endpoint.server);
  const headers: Record<string, string> = {
    ...request.headers,
    authorization: `Bearer ${endpoint.token}`,
    accept: request.accept ?? "application/json",
  };
  if (request.body !== undefined) {
    headers["content-type"] = request.contentType ?? "application/json";
    headers["content-length"] = String(Buffer.byteLength(request.body));
  }
  return send(
    https.request(url, { method: request.method ?? "GET", headers, ca: endpoint.caPem }),
    request,
  );
}

/** Plain HTTP GET, for etcd's /health on loopback. */
export function plainGet(url: string, timeoutMs = 2_000): Promise<ApiResponse> {
  return send(http.request(url, { method: "GET" }), { timeoutMs });
}

function send(req: http.ClientRequest, request: ApiRequest): Promise<ApiResponse> {
  return new Promise((resolve, reject) => {
    req.setTimeout(request.timeoutMs ?? 10_000, () => req.destroy(new Error("request timed out")));
    req.on("error", reject);
    req.on("response", (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", reject);
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
    });
    req.end(request.body);
  });
}

export class DeadlineError extends Error {
  override readonly name = "DeadlineError";
}

export interface PollOptions {
  readonly timeoutMs: number;
  readonly intervalMs?: number;
  /** Rejects (e.g. when the process being waited for exits) end the wait early. */
  readonly abort?: Promise<never>;
}

/**
 * Calls `attempt` until it returns a value other than undefined, or the deadline passes.
 * `describe` tells the caller, in the deadline error, what was awaited and what was last seen.
 */
export async function pollUntil<T>(
  attempt: () => Promise<T | undefined>,
  describe: () => string,
  options: PollOptions,
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  const interval = options.intervalMs ?? 100;
  const aborted = options.abort ?? new Promise<never>(() => undefined);
  for (;;) {
    const value = await Promise.race([attempt(), aborted]);
    if (value !== undefined) return value;
    if (Date.now() >= deadline) {
      throw new DeadlineError(`timed out after ${options.timeoutMs} ms waiting for ${describe()}`);
    }
    await Promise.race([delay(interval), aborted]);
  }
}
