/**
 * The connector's reads of the API server: discovery, paged LIST and streaming WATCH, sent through
 * shared/kube's transport (the kubeconfig's auth and TLS, kept-alive agents, the retry on a stale
 * socket) and failing as its KubeError (410 Gone keeps its status; 429, 5xx and network failures
 * are `unavailable`). The connector's own part: the schemas of what it reads (objects keep every
 * field they carry), splitting a watch into events, and the watch's inactivity deadline.
 *
 * Why not @kubernetes/client-node's Watch/ListWatch (2.0.1): Watch aborts any stream silent for a
 * fixed, private 30 s and cannot ask for bookmarks; ListWatch does not send allowWatchBookmarks,
 * stops for good on any error other than 410/timeout, and keeps every object in memory. The
 * connector needs its own inactivity deadline, bookmarks, server-side timeouts and 410 handling.
 */
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import * as z from "zod";
import type { KubeConfigSource } from "../shared/kube/config.js";
import { KubeError, toKubeError } from "../shared/kube/errors.js";
import {
  createTransport,
  type ListQuery,
  type ResourceLocation,
  type Transport,
  type WatchQuery,
} from "../shared/kube/transport.js";

import { kubeObjectSchema, type KubeObject } from "./objects.js";

export { kubeObjectSchema, type KubeObject } from "./objects.js";

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

/** A resource found by discovery: where its collection is, and its kind for messages. */
export interface ResourceInfo extends ResourceLocation {
  readonly kind: string;
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
  | { readonly kind: "error"; readonly error: KubeError };

export interface WatchHandlers {
  readonly onEvent: (event: WatchEvent) => void;
  readonly onOpen?: () => void;
}

export interface WatchHandle {
  stop(): void;
  readonly done: Promise<WatchEnd>;
}

export interface KubeApiOptions {
  /** Discovery and each LIST page (answer included) fail as `unavailable` after this long. */
  readonly requestTimeoutMs: number;
}

export class KubeApi {
  private readonly transport: Transport;

  constructor(
    private readonly kubeConfig: KubeConfigSource,
    options: KubeApiOptions,
  ) {
    this.transport = createTransport(kubeConfig, options);
  }

  /** The API server URL (ApiServerSource uses it as ce-source). */
  server(): string {
    return (this.kubeConfig.getCurrentCluster()?.server ?? "").replace(/\/+$/, "");
  }

  /** Finds the resource serving `kind` in `apiVersion` (plural and scope) from discovery. */
  async discover(apiVersion: string, kind: string, signal?: AbortSignal): Promise<ResourceInfo> {
    const operation = `discover ${apiVersion}`;
    const raw = await request(operation, () => this.transport.apiResources(apiVersion, { signal }));
    const parsed = apiResourceListSchema.safeParse(raw);
    if (!parsed.success) throw new KubeError("unexpected", `${operation}: unexpected answer`);
    const resource = parsed.data.resources.find((r) => r.kind === kind && !r.name.includes("/"));
    if (resource === undefined) {
      throw new KubeError("notFound", `${operation}: the API serves no kind ${kind}`);
    }
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    return {
      group: group ?? "",
      version: version ?? "",
      kind,
      plural: resource.name,
      namespaced: resource.namespaced,
    };
  }

  async listPage(
    resource: ResourceInfo,
    namespace: string | undefined,
    query: ListQuery,
    signal?: AbortSignal,
  ): Promise<ListPage> {
    const operation = `list ${describe(resource, namespace)}`;
    const raw = await request(operation, () =>
      this.transport.list(resource, namespace, query, { signal }),
    );
    const parsed = listSchema.safeParse(raw);
    if (!parsed.success) {
      throw new KubeError("unexpected", `${operation}: unexpected answer: ${parsed.error.message}`);
    }
    const { metadata, items } = parsed.data;
    return {
      items: items ?? [],
      resourceVersion: metadata.resourceVersion ?? "",
      continueToken: metadata.continue === "" ? undefined : metadata.continue,
    };
  }

  /**
   * Opens a watch and feeds each line to `onEvent` in order (`onOpen` once the server answered
   * 200). The stream ends as `inactive` when nothing (not even a bookmark) arrives for
   * `inactivityMs`: a silent stream is treated as dead.
   */
  watch(
    resource: ResourceInfo,
    namespace: string | undefined,
    query: WatchQuery,
    handlers: WatchHandlers,
    inactivityMs: number,
  ): WatchHandle {
    const operation = `watch ${describe(resource, namespace)}`;
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
    this.transport.watch(resource, namespace, query, { signal: abort.signal }).then(
      (body) => consumeWatch(operation, body, { ...handlers, finish, armInactivity }),
      (error: unknown) => finish(watchError(operation, error)),
    );
    return { stop: () => finish({ kind: "stopped" }), done };
  }
}

/** One request; whatever it fails with becomes a KubeError naming the operation. */
async function request(operation: string, send: () => Promise<unknown>): Promise<unknown> {
  try {
    return await send();
  } catch (error) {
    throw toKubeError(operation, error);
  }
}

function consumeWatch(
  operation: string,
  body: Readable,
  hooks: WatchHandlers & { finish: (end: WatchEnd) => void; armInactivity: () => void },
): void {
  const { onEvent, onOpen, finish, armInactivity } = hooks;
  armInactivity();
  onOpen?.();
  body.on("data", armInactivity);
  body.on("error", (error) => finish(watchError(operation, error)));
  const lines = createInterface({ input: body, crlfDelay: Infinity });
  lines.on("error", (error) => finish(watchError(operation, error)));
  lines.on("line", (line) => {
    if (line.trim() === "") return;
    const event = watchEventSchema.safeParse(safeJson(line));
    if (!event.success) {
      finish({
        kind: "error",
        error: new KubeError("unexpected", `${operation}: unreadable watch line`),
      });
      return;
    }
    onEvent(event.data);
  });
  // `close` follows the last `line`, so every event is handed over before the end is reported.
  lines.on("close", () => finish({ kind: "closed" }));
}

function safeJson(line: string): unknown {
  try {
    return JSON.parse(line) as unknown;
  } catch {
    return undefined;
  }
}

/** Our own abort (a stop, the inactivity deadline) ended it: not a failure. */
function watchError(operation: string, error: unknown): WatchEnd {
  if (error instanceof Error && error.name === "AbortError") return { kind: "stopped" };
  return { kind: "error", error: toKubeError(operation, error) };
}

const describe = (resource: ResourceInfo, namespace: string | undefined): string =>
  `${resource.kind} in ${namespace === undefined ? "all namespaces" : namespace}`;
