/**
 * Every API request of the process, over kept-alive agents: plain JSON in and out for every
 * group (core, apps, custom resources), and watches as a stream of JSON lines. The kubeconfig
 * (config.ts) supplies the server, the TLS material and the auth headers (and, for a cluster
 * behind a proxy-url, the proxy agent).
 */
import type http from "node:http";
import https from "node:https";
import type { Readable } from "node:stream";
import type { KubeConfigSource } from "./config.js";
import { ApiStatusError } from "./errors.js";
import {
  collectionPath,
  listQueryString,
  objectPath,
  watchQueryString,
  type ListQuery,
  type ObjectKey,
  type ResourceLocation,
  type Subresource,
  type WatchQuery,
} from "./paths.js";
import type { ResourceType } from "./resources.js";

export type { KubeConfigSource } from "./config.js";
export type { ListQuery, ObjectKey, ResourceLocation, Subresource, WatchQuery } from "./paths.js";

/**
 * Raw requests: JSON in, JSON out; an answer that is not 2xx is thrown as ApiStatusError, any
 * other failure as it came (errors.ts's toKubeError makes a KubeError of either).
 */
export interface Transport {
  get(type: ResourceType, key: ObjectKey, resourceVersion?: string): Promise<unknown>;
  list(
    type: ResourceLocation,
    namespace: string | undefined,
    query: ListQuery,
    options?: RequestOptions,
  ): Promise<unknown>;
  create(type: ResourceType, namespace: string | undefined, body: object): Promise<unknown>;
  replace(type: ResourceType, key: ObjectKey, body: object): Promise<unknown>;
  /** With a resourceVersion, the API server deletes only that version (else 409). */
  delete(type: ResourceType, key: ObjectKey, resourceVersion?: string): Promise<unknown>;
  mergePatch(type: ResourceType, key: ObjectKey, body: object, sub: Subresource): Promise<unknown>;
  /** Discovery: the APIResourceList of one group version (`v1`, `apps/v1`). */
  apiResources(apiVersion: string, options?: RequestOptions): Promise<unknown>;
  /**
   * Opens a watch of a collection: its body, a stream of JSON lines (one watch event each), once
   * the server answered 2xx. No request timeout: the stream lasts until the server ends it or
   * `signal` aborts it.
   */
  watch(
    type: ResourceLocation,
    namespace: string | undefined,
    query: WatchQuery,
    options: { readonly signal: AbortSignal },
  ): Promise<Readable>;
}

export interface RequestOptions {
  /** Abandons the request (an AbortError) when aborted, e.g. when the caller stops. */
  readonly signal?: AbortSignal;
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
/**
 * Watches have agents of their own, uncapped: a watch holds its socket for minutes, so within
 * MAX_SOCKETS a process with many watches would queue every other request behind them. A socket
 * whose watch the server ended cleanly is kept alive for the next watch.
 */
const streamAgentOptions = { ...agentOptions, maxSockets: Infinity };
const streamHttpsAgent = new https.Agent(streamAgentOptions);
const streamHttpAgent = new nodeHttp.Agent(streamAgentOptions);

export function createTransport(kc: KubeConfigSource, options: TransportOptions = {}): Transport {
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error("the kubeconfig has no current cluster");
  const client = new JsonClient(kc, new URL(cluster.server), {
    requestTimeoutMs: options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS,
    proxied: Boolean(cluster.proxyUrl),
  });
  return {
    get: (type, key, resourceVersion) =>
      client.send("GET", objectPath(type, key) + listQueryString({ resourceVersion })),
    list: (type, namespace, query, requestOptions) =>
      client.send(
        "GET",
        collectionPath(type, namespace) + listQueryString(query),
        undefined,
        requestOptions,
      ),
    create: (type, namespace, body) =>
      client.send("POST", collectionPath(type, namespace), { body }),
    replace: (type, key, body) => client.send("PUT", objectPath(type, key), { body }),
    delete: (type, key, resourceVersion) =>
      client.send(
        "DELETE",
        objectPath(type, key),
        resourceVersion === undefined
          ? undefined
          : {
              body: { apiVersion: "v1", kind: "DeleteOptions", preconditions: { resourceVersion } },
            },
      ),
    mergePatch: (type, key, body, sub) =>
      client.send("PATCH", objectPath(type, key, sub), {
        body,
        contentType: "application/merge-patch+json",
      }),
    apiResources: (apiVersion, requestOptions) =>
      client.send(
        "GET",
        apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`,
        undefined,
        requestOptions,
      ),
    watch: (type, namespace, query, { signal }) =>
      client.stream(collectionPath(type, namespace) + watchQueryString(query), signal),
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

interface ClientOptions extends Required<TransportOptions> {
  /** The cluster is behind a proxy-url: requests use the agent the kubeconfig source supplies. */
  readonly proxied: boolean;
}

class JsonClient {
  private readonly module: typeof https | typeof http;
  private readonly agent: https.Agent | http.Agent;
  private readonly streamAgent: https.Agent | http.Agent;
  /** The server's own path prefix (a server URL may carry one, e.g. behind a proxy). */
  private readonly basePath: string;

  constructor(
    private readonly kc: KubeConfigSource,
    private readonly server: URL,
    private readonly options: ClientOptions,
  ) {
    const secure = server.protocol === "https:";
    this.module = secure ? https : nodeHttp;
    this.agent = secure ? httpsAgent : httpAgent;
    this.streamAgent = secure ? streamHttpsAgent : streamHttpAgent;
    this.basePath = server.pathname.replace(/\/+$/, "");
  }

  async send(
    method: Method,
    path: string,
    payload?: Payload,
    { signal }: RequestOptions = {},
  ): Promise<unknown> {
    const data = payload === undefined ? undefined : JSON.stringify(payload.body);
    const request = await this.requestOptions(method, path, this.agent, payload?.contentType, data);
    const reply = await this.retryStale(method, () => this.exchange(request, data, signal));
    if (reply.status < 200 || reply.status >= 300) {
      throw new ApiStatusError(reply.status, reply.text);
    }
    return reply.text === "" ? undefined : (JSON.parse(reply.text) as unknown);
  }

  /** A GET whose answer is handed over as it arrives; a status that is not 2xx is read and thrown. */
  async stream(path: string, signal: AbortSignal): Promise<Readable> {
    const request = await this.requestOptions("GET", path, this.streamAgent, undefined, undefined);
    const response = await this.retryStale("GET", () => this.open({ ...request, signal }));
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) throw new ApiStatusError(status, await readText(response));
    return response;
  }

  /** A kept-alive socket the server closed while idle fails at once; one retry on a fresh one. */
  private async retryStale<T>(method: Method, attempt: () => Promise<T>): Promise<T> {
    try {
      return await attempt();
    } catch (error) {
      if (!isStaleSocket(error) || method === "POST") throw error;
      return attempt();
    }
  }

  /** Auth headers and TLS material are asked for per request: tokens rotate (files, exec). */
  private async requestOptions(
    method: Method,
    path: string,
    agent: https.Agent | http.Agent,
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
      agent: this.options.proxied ? this.proxyAgent(auth) : agent,
      ...(auth.auth === undefined ? {} : { auth: auth.auth }),
      ...{ ca, cert, key, pfx, passphrase, rejectUnauthorized, servername },
    };
  }

  /** client-node's source (config.ts) picks the proxy agent for a proxy-url cluster. */
  private proxyAgent(auth: https.RequestOptions): https.RequestOptions["agent"] {
    if (auth.agent === undefined) {
      throw new Error("the kubeconfig names a proxy-url but its source supplies no proxy agent");
    }
    return auth.agent;
  }

  /** One request and its whole answer, within requestTimeoutMs (and until `caller` aborts). */
  private async exchange(
    request: https.RequestOptions,
    data: string | undefined,
    caller: AbortSignal | undefined,
  ): Promise<Reply> {
    const timeoutMs = this.options.requestTimeoutMs;
    const timeout = AbortSignal.timeout(timeoutMs);
    const signal = caller === undefined ? timeout : AbortSignal.any([timeout, caller]);
    try {
      const response = await this.open({ ...request, signal }, data);
      return { status: response.statusCode ?? 0, text: await readText(response) };
    } catch (error) {
      if (!timeout.aborted || caller?.aborted === true) throw error;
      throw new Error(`no answer within ${timeoutMs} ms`, { cause: error });
    }
  }

  /** Sends the request; resolves with the answer once its status line and headers arrived. */
  private open(request: https.RequestOptions, data?: string): Promise<http.IncomingMessage> {
    return new Promise((resolve, reject) => {
      const req = this.module.request(request, resolve);
      req.on("error", (error) => reject(Object.assign(error, { reusedSocket: req.reusedSocket })));
      req.end(data);
    });
  }
}

async function readText(response: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
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
