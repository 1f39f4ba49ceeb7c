/**
 * The connector's only door to the API server: discovery, paged LIST and streaming WATCH as raw
 * GET requests over node:http(s). Authentication and TLS come from the kubeconfig
 * (shared/kube/config.ts, `applyToHTTPSOptions`). Why not @kubernetes/client-node's
 * Watch/ListWatch (2.0.1): Watch aborts any stream silent for a fixed, private 30 s and cannot
 * ask for bookmarks; ListWatch does not send allowWatchBookmarks, stops for good on any error
 * other than 410/timeout, and keeps every object in memory. The connector needs its own inactivity deadline, bookmarks, server-side timeouts and 410 handling.
 */
import http from "node:http";
import https from "node:https";
import { createInterface } from "node:readline";
import { z } from "zod";
import type { KubeConfigSource } from "../shared/kube/config.js";

export class KubeRequestError extends Error {
  readonly code = "kube-request";
  constructor(
    message: string,
    /** HTTP status, or undefined when no answer arrived. */
    readonly status: number | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "KubeRequestError";
  }
}

const metadataSchema = z.looseObject({
  name: z.string(),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
});

export const kubeObjectSchema = z.looseObject({
  apiVersion: z.string().optional(),
  kind: z.string().optional(),
  metadata: metadataSchema,
});
export type KubeObject = z.infer<typeof kubeObjectSchema>;

const listSchema = z.looseObject({
  metadata: z.looseObject({
    resourceVersion: z.string().optional(),
    continue: z.string().optional(),
  }),
  items: z.array(kubeObjectSchema).nullable(),
});

const apiResourceListSchema = z.looseObject({
  resources: z.array(
    z.looseObject({ name: z.string(), kind: z.string(), namespaced: z.boolean() }),
  ),
});

/** A watch line. ERROR carries a metav1.Status; BOOKMARK an object with only a resourceVersion. */
export const watchEventSchema = z.object({
  type: z.enum(["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "ERROR"]),
  object: z.looseObject({
    metadata: z.looseObject({ resourceVersion: z.string().optional() }).optional(),
    code: z.number().optional(),
    reason: z.string().optional(),
    message: z.string().optional(),
  }),
});
export type WatchEvent = z.infer<typeof watchEventSchema>;

export interface ResourceInfo {
  readonly plural: string;
  readonly namespaced: boolean;
}

export interface ListPage {
  readonly items: KubeObject[];
  readonly resourceVersion: string;
  readonly continueToken: string | undefined;
}

/** How a watch stream ended. `closed`: the server ended it (timeoutSeconds); resume is safe. */
export type WatchEnd =
  | { readonly kind: "closed" }
  | { readonly kind: "inactive" }
  | { readonly kind: "stopped" }
  | { readonly kind: "error"; readonly error: KubeRequestError };

export interface WatchHandlers {
  readonly onEvent: (event: WatchEvent) => void;
  readonly onOpen?: () => void;
}

export interface WatchHandle {
  stop(): void;
  readonly done: Promise<WatchEnd>;
}

type Query = Record<string, string | number | boolean | undefined>;

export class KubeApi {
  constructor(private readonly kubeConfig: KubeConfigSource) {}

  /** The API server URL (ApiServerSource uses it as ce-source). */
  server(): string {
    const cluster = this.kubeConfig.getCurrentCluster();
    if (cluster === null)
      throw new KubeRequestError("kubeconfig has no current cluster", undefined);
    return cluster.server;
  }

  /** Finds the resource serving `kind` in `apiVersion` (plural and scope) from discovery. */
  async discover(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ResourceInfo> {
    const path = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
    const parsed = apiResourceListSchema.safeParse(await this.getJson(path, {}, signal));
    if (!parsed.success)
      throw new KubeRequestError(`unexpected discovery answer from ${path}`, 200);
    const resource = parsed.data.resources.find((r) => r.kind === kind && !r.name.includes("/"));
    if (resource === undefined) {
      throw new KubeRequestError(`${path} serves no kind ${kind}`, 404);
    }
    return { plural: resource.name, namespaced: resource.namespaced };
  }

  async listPage(path: string, query: Query, signal?: AbortSignal): Promise<ListPage> {
    const parsed = listSchema.safeParse(await this.getJson(path, query, signal));
    if (!parsed.success) {
      throw new KubeRequestError(
        `unexpected list answer from ${path}: ${parsed.error.message}`,
        200,
      );
    }
    const { metadata, items } = parsed.data;
    return {
      items: items ?? [],
      resourceVersion: metadata.resourceVersion ?? "",
      continueToken: metadata.continue === "" ? undefined : metadata.continue,
    };
  }

  async getJson(path: string, query: Query, signal?: AbortSignal): Promise<unknown> {
    const response = await this.get(path, query, signal);
    const text = await readAll(response).catch((error: unknown) => {
      throw requestError(path, error, signal);
    });
    if (response.statusCode !== 200) throw statusError(path, response.statusCode, text);
    try {
      return JSON.parse(text) as unknown;
    } catch (cause) {
      throw new KubeRequestError(`invalid JSON from ${path}`, 200, { cause });
    }
  }

  /**
   * Opens a watch and feeds each line to `onEvent` in order (`onOpen` once the server answered
   * 200). The stream ends as `inactive` when nothing (not even a bookmark) arrives for
   * `inactivityMs`: a silent stream is treated as dead.
   */
  watch(path: string, query: Query, handlers: WatchHandlers, inactivityMs: number): WatchHandle {
    const abort = new AbortController();
    let ended: WatchEnd | undefined;
    let resolveEnd!: (end: WatchEnd) => void;
    const done = new Promise<WatchEnd>((resolve) => (resolveEnd = resolve));
    let timer: NodeJS.Timeout | undefined;
    const finish = (end: WatchEnd): void => {
      if (ended !== undefined) return;
      ended = end;
      clearTimeout(timer);
      abort.abort();
      resolveEnd(end);
    };
    const armInactivity = (): void => {
      clearTimeout(timer);
      timer = setTimeout(() => finish({ kind: "inactive" }), inactivityMs);
    };
    armInactivity();
    this.get(path, { ...query, watch: "true" }, abort.signal).then(
      (response) => this.consumeWatch(path, response, { ...handlers, finish, armInactivity }),
      (error: unknown) => finish(asWatchError(path, error)),
    );
    return { stop: () => finish({ kind: "stopped" }), done };
  }

  private consumeWatch(
    path: string,
    response: http.IncomingMessage,
    hooks: WatchHandlers & { finish: (end: WatchEnd) => void; armInactivity: () => void },
  ): void {
    const { onEvent, onOpen, finish, armInactivity } = hooks;
    if (response.statusCode !== 200) {
      void readAll(response).then(
        (text) => finish({ kind: "error", error: statusError(path, response.statusCode, text) }),
        (error: unknown) => finish(asWatchError(path, error)),
      );
      return;
    }
    armInactivity();
    onOpen?.();
    response.on("data", armInactivity);
    response.on("error", (error) => finish(asWatchError(path, error)));
    const lines = createInterface({ input: response, crlfDelay: Infinity });
    lines.on("error", (error) => finish(asWatchError(path, error)));
    lines.on("line", (line) => {
      if (line.trim() === "") return;
      const parsed = safeJson(line);
      const event = watchEventSchema.safeParse(parsed);
      if (!event.success) {
        finish({
          kind: "error",
          error: new KubeRequestError(`unreadable watch line on ${path}`, 200),
        });
        return;
      }
      onEvent(event.data);
    });
    // `close` follows the last `line`, so every event is handed over before the end is reported.
    lines.on("close", () => finish({ kind: "closed" }));
  }

  private async get(
    path: string,
    query: Query,
    signal?: AbortSignal,
  ): Promise<http.IncomingMessage> {
    const url = new URL(this.server().replace(/\/+$/, "") + path);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const options: https.RequestOptions = {
      method: "GET",
      headers: { Accept: "application/json" },
    };
    await this.kubeConfig.applyToHTTPSOptions(options);
    const transport = url.protocol === "http:" ? http : https;
    return new Promise((resolve, reject) => {
      const request = transport.request(
        url,
        { ...options, ...(signal ? { signal } : {}) },
        resolve,
      );
      request.on("error", (error) => reject(requestError(path, error, signal)));
      request.end();
    });
  }
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

async function readAll(response: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function statusError(path: string, status: number | undefined, body: string): KubeRequestError {
  let detail = body.slice(0, 300);
  try {
    const parsed = JSON.parse(body) as { message?: unknown };
    if (typeof parsed.message === "string") detail = parsed.message;
  } catch {
    // not a Status object; keep the raw start of the body
  }
  return new KubeRequestError(`GET ${path}: HTTP ${status ?? "?"}: ${detail}`, status);
}

/** Names the cause once: a timeout or a stop (our abort), else the socket's own error. */
function requestError(path: string, error: unknown, signal: AbortSignal | undefined): Error {
  if (error instanceof KubeRequestError) return error;
  const reason: unknown = signal?.aborted ? signal.reason : undefined;
  if (reason instanceof Error && reason.name === "TimeoutError") {
    return new KubeRequestError(`GET ${path}: no answer in time (connection silent)`, undefined, {
      cause: error,
    });
  }
  if (reason !== undefined) {
    const aborted = new Error(`GET ${path}: aborted`, { cause: error });
    aborted.name = "AbortError";
    return aborted;
  }
  const message = error instanceof Error ? error.message : String(error);
  return new KubeRequestError(`GET ${path}: ${message}`, undefined, { cause: error });
}

function asWatchError(path: string, error: unknown): WatchEnd {
  if (error instanceof Error && error.name === "AbortError") return { kind: "stopped" };
  const message = error instanceof Error ? error.message : String(error);
  return {
    kind: "error",
    error:
      error instanceof KubeRequestError
        ? error
        : new KubeRequestError(`watch ${path}: ${message}`, undefined, { cause: error }),
  };
}
