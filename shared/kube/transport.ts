/**
 * Every API request of the process, over one kept-alive agent: plain JSON in and out for every
 * group (core, apps, custom resources). The kubeconfig (config.ts) supplies the server, the TLS
 * material and the auth headers.
 */
import type http from "node:http";
import https from "node:https";
import type { KubeConfigSource } from "./config.js";
import {
  collectionPath,
  listQueryString,
  objectPath,
  type ListQuery,
  type ObjectKey,
  type Subresource,
} from "./paths.js";
import type { ResourceType } from "./resources.js";

export type { KubeConfigSource } from "./config.js";
export type { ListQuery, ObjectKey, Subresource } from "./paths.js";

/** Raw requests: JSON in, JSON out; an answer that is not 2xx is thrown as ApiStatusError. */
export interface Transport {
  get(type: ResourceType, key: ObjectKey, resourceVersion?: string): Promise<unknown>;
  list(type: ResourceType, namespace: string | undefined, query: ListQuery): Promise<unknown>;
  create(type: ResourceType, namespace: string | undefined, body: object): Promise<unknown>;
  replace(type: ResourceType, key: ObjectKey, body: object): Promise<unknown>;
  delete(type: ResourceType, key: ObjectKey): Promise<unknown>;
  mergePatch(type: ResourceType, key: ObjectKey, body: object, sub: Subresource): Promise<unknown>;
}

/** The API server answered with a status that is not 2xx; `body` is its text (a metav1.Status). */
export class ApiStatusError extends Error {
  override readonly name = "ApiStatusError";
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`HTTP ${status}`);
  }
}

export interface TransportOptions {
  /** A request (answer included) that takes longer fails as a timeout. Default 30 s. */
  readonly requestTimeoutMs?: number;
}

/** Requests in flight per API server and identity; sync's status writes must fit (>= its limit). */
export const MAX_SOCKETS = 32;
/** An idle kept-alive socket is closed after this, well before the API server's own idle close. */
const FREE_SOCKET_TIMEOUT_MS = 5_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

const agentOptions = {
  keepAlive: true,
  maxSockets: MAX_SOCKETS,
  // On a kept-alive agent `timeout` closes free sockets; a request in flight is bounded separately.
  timeout: FREE_SOCKET_TIMEOUT_MS,
  // The most recently used socket first, so surplus sockets go idle and are released.
  scheduling: "lifo",
} as const;

/**
 * One agent per process for every client: node keys its socket pools by host and TLS identity
 * (CA, client certificate, server name), so clients with other credentials never share a socket.
 */
const httpsAgent = new https.Agent(agentOptions);
/**
 * node:http as CommonJS: an ESM import builds its facade, which reads every export and so loads
 * the lazy undici behind http.WebSocket (~50 ms of a cold start). Likewise in shared/cnf and
 * shared/runtime.
 */
const nodeHttp = process.getBuiltinModule("node:http");
/** Only for an `http:` server, which a kubeconfig may name. */
const httpAgent = new nodeHttp.Agent(agentOptions);

export function createTransport(kc: KubeConfigSource, options: TransportOptions = {}): Transport {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error("the kubeconfig has no current cluster");
  if (cluster.proxyUrl) {
    throw new Error(
      `the kubeconfig's proxy-url (${cluster.proxyUrl}) is not supported by shared/kube`,
    );
  }
  const client = new JsonClient(kc, new URL(cluster.server), {
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
  });
  return {
    get: (type, key, resourceVersion) =>
      client.send("GET", objectPath(type, key) + listQueryString({ resourceVersion })),
    list: (type, namespace, query) =>
      client.send("GET", collectionPath(type, namespace) + listQueryString(query)),
    create: (type, namespace, body) =>
      client.send("POST", collectionPath(type, namespace), { body }),
    replace: (type, key, body) => client.send("PUT", objectPath(type, key), { body }),
    delete: (type, key) => client.send("DELETE", objectPath(type, key)),
    mergePatch: (type, key, body, sub) =>
      client.send("PATCH", objectPath(type, key, sub), {
        body,
        contentType: "application/merge-patch+json",
      }),
  };
}

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";

interface Payload {
  readonly body: object;
  readonly contentType?: string;
}

interface Reply {
  readonly status: number;
  readonly text: string;
}

class JsonClient {
  private readonly module: typeof https | typeof http;
  private readonly agent: https.Agent | http.Agent;
  /** The server's own path prefix (a server URL may carry one, e.g. behind a proxy). */
  private readonly basePath: string;

  constructor(
    private readonly kc: KubeConfigSource,
    private readonly server: URL,
    private readonly options: Required<TransportOptions>,
  ) {
    const secure = server.protocol === "https:";
    this.module = secure ? https : nodeHttp;
    this.agent = secure ? httpsAgent : httpAgent;
    this.basePath = server.pathname.replace(/\/+$/, "");
  }

  async send(method: Method, path: string, payload?: Payload): Promise<unknown> {
    const data = payload === undefined ? undefined : JSON.stringify(payload.body);
    const request = await this.requestOptions(method, path, payload?.contentType, data);
    let reply: Reply;
    try {
      reply = await this.exchange(request, data);
    } catch (error) {
      // A kept-alive socket the server closed while idle fails at once; one retry on a fresh one.
      if (!isStaleSocket(error) || method === "POST") throw error;
      reply = await this.exchange(request, data);
    }
    if (reply.status < 200 || reply.status >= 300) {
      throw new ApiStatusError(reply.status, reply.text);
    }
    return reply.text === "" ? undefined : (JSON.parse(reply.text) as unknown);
  }

  /** Auth headers and TLS material are asked for per request: tokens rotate (files, exec). */
  private async requestOptions(
    method: Method,
    path: string,
    contentType: string | undefined,
    data: string | undefined,
  ): Promise<https.RequestOptions> {
    const auth: https.RequestOptions = {};
    await this.kc.applyToHTTPSOptions(auth);
    const { ca, cert, key, pfx, passphrase, rejectUnauthorized, servername } = auth;
    const headers: http.OutgoingHttpHeaders = { ...headerMap(auth.headers) };
    headers.accept = "application/json";
    if (data !== undefined) {
      headers["content-type"] = contentType ?? "application/json";
      headers["content-length"] = Buffer.byteLength(data);
    }
    return {
      protocol: this.server.protocol,
      hostname: this.server.hostname,
      port: this.server.port,
      path: this.basePath + path,
      method,
      headers,
      agent: this.agent,
      ...(auth.auth === undefined ? {} : { auth: auth.auth }),
      ...{ ca, cert, key, pfx, passphrase, rejectUnauthorized, servername },
    };
  }

  private exchange(request: https.RequestOptions, data: string | undefined): Promise<Reply> {
    const timeoutMs = this.options.requestTimeoutMs;
    const signal = AbortSignal.timeout(timeoutMs);
    return new Promise<Reply>((resolve, reject) => {
      const fail = (error: Error): void =>
        reject(
          signal.aborted ? new Error(`no answer within ${timeoutMs} ms`, { cause: error }) : error,
        );
      const req = this.module.request({ ...request, signal }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", fail);
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
        );
      });
      req.on("error", (error) => fail(Object.assign(error, { reusedSocket: req.reusedSocket })));
      req.end(data);
    });
  }
}

/** Kubeconfig sources set headers as a map; the raw-array form never comes from them. */
const headerMap = (headers: https.RequestOptions["headers"]): http.OutgoingHttpHeaders =>
  headers === undefined || Array.isArray(headers) ? {} : (headers as http.OutgoingHttpHeaders);

/** ECONNRESET / EPIPE on a socket that had served a request before: the server closed it idle. */
function isStaleSocket(error: unknown): boolean {
  if (typeof error !== "object" || error === null) return false;
  const { code, reusedSocket } = error as { code?: unknown; reusedSocket?: unknown };
  return reusedSocket === true && (code === "ECONNRESET" || code === "EPIPE");
}
