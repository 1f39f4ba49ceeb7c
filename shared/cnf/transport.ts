/**
 * One HTTP exchange with a CNF over node:http / node:https with keep-alive agents, a per-request
 * timeout and the caller's abort signal; network failures become typed CNF errors here.
 * Redirects are not followed (the login answer is a 302).
 */
import type { Agent as HttpAgent, IncomingHttpHeaders } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";
import {
  CnfAbortedError,
  CnfBadReplyError,
  CnfTimeoutError,
  CnfUnreachableError,
  type CnfCallSite,
} from "./errors.js";

export interface HttpExchange {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

export interface ExchangeRequest {
  readonly url: URL;
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  readonly timeoutMs: number;
  /** A timeout means the request may still be acted on (a write): say so in the error. */
  readonly inDoubtOnTimeout?: boolean;
  readonly signal?: AbortSignal;
  /** PEM CA bundle for https CNFs. */
  readonly ca?: string;
}

const MAX_REPLY_BYTES = 4 << 20;

// Agents are per process and safe to lose; keep-alive saves a TCP handshake per CNF call.
// Idle sockets are dropped before a typical server keep-alive timeout (uhttpd, node: 5 s+).
const AGENT_OPTIONS = { keepAlive: true, maxSockets: 16, timeout: 4000 } as const;
/** node:http as CommonJS: its ESM facade would load undici at start (see shared/kube/transport). */
const nodeHttp = process.getBuiltinModule("node:http");
const httpAgent = new nodeHttp.Agent(AGENT_OPTIONS);
const httpsAgents = new Map<string, HttpsAgent>();

function agentFor(url: URL, ca: string | undefined): HttpAgent | HttpsAgent {
  if (url.protocol !== "https:") return httpAgent;
  const key = ca ?? "";
  let agent = httpsAgents.get(key);
  if (agent === undefined) {
    agent = new HttpsAgent({ ...AGENT_OPTIONS, ...(ca === undefined ? {} : { ca }) });
    httpsAgents.set(key, agent);
  }
  return agent;
}

export function exchange(site: CnfCallSite, request: ExchangeRequest): Promise<HttpExchange> {
  if (request.signal?.aborted === true) return Promise.reject(new CnfAbortedError(site));
  const timeout = AbortSignal.timeout(request.timeoutMs);
  const signal =
    request.signal === undefined ? timeout : AbortSignal.any([timeout, request.signal]);
  const send = request.url.protocol === "https:" ? httpsRequest : nodeHttp.request;
  const headers: Record<string, string> = { ...request.headers };
  if (request.body !== undefined)
    headers["content-length"] = String(Buffer.byteLength(request.body));

  return new Promise<HttpExchange>((resolve, reject) => {
    const fail = (error: unknown): void => {
      if (timeout.aborted) {
        reject(new CnfTimeoutError(site, request.timeoutMs, request.inDoubtOnTimeout === true));
      } else if (request.signal?.aborted === true) reject(new CnfAbortedError(site));
      else reject(new CnfUnreachableError(site, systemCode(error), error));
    };
    const req = send(
      request.url,
      { method: request.method, headers, agent: agentFor(request.url, request.ca), signal },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > MAX_REPLY_BYTES) {
            res.destroy();
            reject(
              new CnfBadReplyError(
                site,
                res.statusCode ?? 0,
                `reply larger than ${MAX_REPLY_BYTES} bytes`,
              ),
            );
            return;
          }
          chunks.push(chunk);
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", fail);
      },
    );
    req.on("error", fail);
    req.end(request.body);
  });
}

function systemCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "ERR_NETWORK";
}
