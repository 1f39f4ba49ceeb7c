/**
 * KubeClient: typed reads (validated with zod), writes, status patches and finalizer changes,
 * with every request counted into the event's CallCounters and every failure a KubeError.
 */
import type { CallCounters } from "../core/context.js";
import { loadKubeConfig } from "./config.js";
import { KubeError, isKubeError, toKubeError } from "./errors.js";
import type { KubeObject } from "../core/objects.js";
import type { KnownFinalizers } from "./plan-finalizers.js";

export type { KnownFinalizers } from "./plan-finalizers.js";
import { planFinalizers, type FinalizerChange } from "./plan-finalizers.js";
import { retryOnConflict } from "./retry.js";
import { apiVersionOf, type ResourceType } from "./resources.js";
import { formatLabelSelector, type LabelSelectorInput } from "./selectors.js";
import {
  createTransport,
  type KubeConfigSource,
  type ObjectKey,
  type Subresource,
  type Transport,
} from "./transport.js";

export type { ObjectKey } from "./transport.js";

export interface ListOptions {
  /** Omit to list every namespace (or a cluster-scoped kind). */
  readonly namespace?: string;
  readonly labelSelector?: LabelSelectorInput;
  readonly fieldSelector?: string;
  /**
   * "0" reads from the API server's watch cache without waiting for it to catch up with etcd:
   * faster, possibly a little stale. Omit for a consistent list.
   */
  readonly resourceVersion?: string;
}

export interface GetOptions {
  /** "0" reads from the API server's watch cache (see ListOptions.resourceVersion). */
  readonly resourceVersion?: string;
}

/** An object to create or replace: at least a name; apiVersion and kind default from the type. */
export interface ObjectInput {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata: { readonly name: string; readonly namespace?: string } & Readonly<
    Record<string, unknown>
  >;
  readonly [field: string]: unknown;
}

export interface DeleteOptions {
  readonly resourceVersion?: string;
}

export type FinalizerResult = "added" | "alreadyPresent" | "removed" | "alreadyAbsent" | "gone";

export interface KubeClient {
  /** The object, or undefined when it does not exist. */
  get<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    options?: GetOptions,
  ): Promise<T | undefined>;
  list<T extends KubeObject>(type: ResourceType<T>, options?: ListOptions): Promise<T[]>;
  create<T extends KubeObject>(type: ResourceType<T>, object: ObjectInput): Promise<T>;
  /** Update; with metadata.resourceVersion set it fails with `conflict` if the object changed. */
  replace<T extends KubeObject>(type: ResourceType<T>, object: ObjectInput): Promise<T>;
  /**
   * True when deleted, false when it was already gone. With `resourceVersion` it deletes only
   * the object as read: `conflict` if it changed since (a precondition, like replace's).
   */
  delete(type: ResourceType, key: ObjectKey, options?: DeleteOptions): Promise<boolean>;
  /** JSON merge patch of the object (not its status). */
  mergePatch<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    patch: object,
  ): Promise<T>;
  /**
   * Merge patch of `status` (through the /status subresource when the kind has one). With a
   * resourceVersion it fails with `conflict` if the object changed since it was read.
   */
  patchStatus<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    status: Readonly<Record<string, unknown>>,
    options?: { readonly resourceVersion?: string },
  ): Promise<T>;
  /**
   * Adds `finalizer` unless present; safe under concurrent writers (see changeFinalizer). With
   * `known` (the metadata the caller just read) the first attempt needs no read of its own;
   * `written` is told the object as the write answered (e.g. to know its own write's echo).
   */
  addFinalizer(
    type: ResourceType,
    key: ObjectKey,
    finalizer: string,
    known?: KnownFinalizers,
    written?: (object: KubeObject) => void,
  ): Promise<FinalizerResult>;
  removeFinalizer(
    type: ResourceType,
    key: ObjectKey,
    finalizer: string,
    known?: KnownFinalizers,
  ): Promise<FinalizerResult>;
  /** The same client, counting its requests into `calls.api` (HandlerContext.calls). */
  withCalls(calls: CallCounters): KubeClient;
}

export interface KubeClientOptions {
  /** Where requests are counted. Default: a private counter. */
  readonly calls?: CallCounters;
  /** Attempts at a finalizer change before giving up with `conflict`. Default 10. */
  readonly maxConflictAttempts?: number;
  /** A request (answer included) that takes longer fails as `unavailable`. Default 30 s. */
  readonly requestTimeoutMs?: number;
}

type ApiClientOptions = Required<Pick<KubeClientOptions, "calls" | "maxConflictAttempts">>;

export function createKubeClient(
  kc: KubeConfigSource = loadKubeConfig(),
  options: KubeClientOptions = {},
): KubeClient {
  const transport = createTransport(kc, { requestTimeoutMs: options.requestTimeoutMs });
  return new ApiClient(transport, {
    calls: options.calls ?? { api: 0, cnf: 0 },
    maxConflictAttempts: options.maxConflictAttempts ?? 10,
  });
}

let processClient: KubeClient | undefined;

/**
 * One client per process, made on first use: a function module can hold it without needing a
 * cluster at import time. Per event: `defaultKubeClient().withCalls(ctx.calls)`.
 */
export function defaultKubeClient(): KubeClient {
  processClient ??= createKubeClient();
  return processClient;
}

const describeKey = (type: ResourceType, key: ObjectKey): string =>
  `${type.kind} ${key.namespace ? `${key.namespace}/` : ""}${key.name}`;

class ApiClient implements KubeClient {
  constructor(
    private readonly transport: Transport,
    private readonly options: ApiClientOptions,
  ) {}

  withCalls(calls: CallCounters): KubeClient {
    return new ApiClient(this.transport, { ...this.options, calls });
  }

  async get<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    options: GetOptions = {},
  ): Promise<T | undefined> {
    const operation = `get ${describeKey(type, key)}`;
    try {
      const raw = await this.request(operation, () =>
        this.transport.get(type, key, options.resourceVersion),
      );
      return this.validate(type, raw, operation);
    } catch (error) {
      if (isKubeError(error, "notFound")) return undefined;
      throw error;
    }
  }

  async list<T extends KubeObject>(type: ResourceType<T>, options: ListOptions = {}): Promise<T[]> {
    const where = options.namespace ? ` in ${options.namespace}` : "";
    const operation = `list ${type.kind}${where}`;
    const query = {
      ...(options.labelSelector === undefined
        ? {}
        : { labelSelector: formatLabelSelector(options.labelSelector) }),
      ...(options.fieldSelector === undefined ? {} : { fieldSelector: options.fieldSelector }),
      ...(options.resourceVersion === undefined
        ? {}
        : { resourceVersion: options.resourceVersion }),
    };
    const raw = await this.request(operation, () =>
      this.transport.list(type, options.namespace, query),
    );
    const items = (raw as { items?: unknown } | null)?.items;
    if (!Array.isArray(items)) {
      throw new KubeError("unexpected", `${operation}: the reply has no items list`);
    }
    return items.map((item) => this.validate(type, item, operation));
  }

  async create<T extends KubeObject>(type: ResourceType<T>, object: ObjectInput): Promise<T> {
    const operation = `create ${describeKey(type, object.metadata)}`;
    const body = { apiVersion: apiVersionOf(type), kind: type.kind, ...object };
    const raw = await this.request(operation, () =>
      this.transport.create(type, object.metadata.namespace, body),
    );
    return this.validate(type, raw, operation);
  }

  async replace<T extends KubeObject>(type: ResourceType<T>, object: ObjectInput): Promise<T> {
    const operation = `replace ${describeKey(type, object.metadata)}`;
    const body = { apiVersion: apiVersionOf(type), kind: type.kind, ...object };
    const raw = await this.request(operation, () =>
      this.transport.replace(type, object.metadata, body),
    );
    return this.validate(type, raw, operation);
  }

  async delete(type: ResourceType, key: ObjectKey, options: DeleteOptions = {}): Promise<boolean> {
    try {
      await this.request(`delete ${describeKey(type, key)}`, () =>
        this.transport.delete(type, key, options.resourceVersion),
      );
      return true;
    } catch (error) {
      if (isKubeError(error, "notFound")) return false;
      throw error;
    }
  }

  mergePatch<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    patch: object,
  ): Promise<T> {
    return this.patch(type, key, patch, "", `patch ${describeKey(type, key)}`);
  }

  patchStatus<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    status: Readonly<Record<string, unknown>>,
    options: { readonly resourceVersion?: string } = {},
  ): Promise<T> {
    const precondition =
      options.resourceVersion === undefined
        ? {}
        : { metadata: { resourceVersion: options.resourceVersion } };
    const sub: Subresource = type.statusSubresource ? "status" : "";
    const operation = `patch status of ${describeKey(type, key)}`;
    return this.patch(type, key, { ...precondition, status }, sub, operation);
  }

  addFinalizer(
    type: ResourceType,
    key: ObjectKey,
    finalizer: string,
    known?: KnownFinalizers,
    written?: (object: KubeObject) => void,
  ): Promise<FinalizerResult> {
    return this.changeFinalizer(type, key, { finalizer, change: "add" }, known, written);
  }

  removeFinalizer(
    type: ResourceType,
    key: ObjectKey,
    finalizer: string,
    known?: KnownFinalizers,
  ): Promise<FinalizerResult> {
    return this.changeFinalizer(type, key, { finalizer, change: "remove" }, known);
  }

  /**
   * Read (or take `known` for the first attempt), compute the new list, write it with the
   * resourceVersion that was read: a merge patch carrying metadata.resourceVersion is refused
   * with 409 if anyone wrote in between, so no other writer's finalizer is lost. On 409, re-read
   * and try again.
   */
  private async changeFinalizer(
    type: ResourceType,
    key: ObjectKey,
    { finalizer, change }: { readonly finalizer: string; readonly change: FinalizerChange },
    known: KnownFinalizers | undefined,
    written?: (object: KubeObject) => void,
  ): Promise<FinalizerResult> {
    const attempts = this.options.maxConflictAttempts;
    try {
      return await retryOnConflict({ attempts }, async (attempt) => {
        const current =
          attempt === 1 && known !== undefined ? known : await this.readFinalizers(type, key);
        if (current === undefined) return "gone";
        const next = planFinalizers(current.finalizers, finalizer, change);
        if (next === null) return change === "add" ? "alreadyPresent" : "alreadyAbsent";
        const patch = { metadata: { resourceVersion: current.resourceVersion, finalizers: next } };
        const operation = `${change} finalizer on ${describeKey(type, key)}`;
        const answer = await this.patch(type, key, patch, "", operation);
        written?.(answer);
        return change === "add" ? "added" : "removed";
      });
    } catch (error) {
      if (isKubeError(error, "notFound")) return "gone";
      throw error;
    }
  }

  private async readFinalizers(
    type: ResourceType,
    key: ObjectKey,
  ): Promise<KnownFinalizers | undefined> {
    const object = await this.get(type, key);
    if (object === undefined) return undefined;
    const { resourceVersion = "", finalizers = [] } = object.metadata;
    return { resourceVersion, finalizers };
  }

  private async patch<T extends KubeObject>(
    type: ResourceType<T>,
    key: ObjectKey,
    body: object,
    sub: Subresource,
    operation: string,
  ): Promise<T> {
    const raw = await this.request(operation, () =>
      this.transport.mergePatch(type, key, body, sub),
    );
    return this.validate(type, raw, operation);
  }

  /** One API request: counted, and its failure converted to a KubeError. */
  private async request(operation: string, send: () => Promise<unknown>): Promise<unknown> {
    this.options.calls.api += 1;
    try {
      return await send();
    } catch (error) {
      throw toKubeError(operation, error);
    }
  }

  /** List items of built-in kinds carry no apiVersion/kind: fill them in from the type. */
  private validate<T extends KubeObject>(
    type: ResourceType<T>,
    raw: unknown,
    operation: string,
  ): T {
    dropManagedFields(raw);
    const object =
      typeof raw === "object" && raw !== null
        ? { apiVersion: apiVersionOf(type), kind: type.kind, ...raw }
        : raw;
    const parsed = type.schema.safeParse(object);
    if (parsed.success) return parsed.data;
    const issues = parsed.error.issues
      .map((issue) => `${issue.path.join(".") || "(root)"}: ${issue.message}`)
      .join("; ");
    throw new KubeError(
      "unexpected",
      `${operation}: the object does not match the ${type.kind} schema: ${issues}`,
    );
  }
}

/**
 * Nothing here reads metadata.managedFields, and a replace that leaves them out keeps them as
 * they are on the server. They were ~20 small objects per rule, a fifth of what a 1,000-rule CNF
 * sync holds at once (docs/benchmarks.md#memory), so they are dropped as each object is read.
 */
function dropManagedFields(raw: unknown): void {
  if (typeof raw !== "object" || raw === null) return;
  const metadata = (raw as { metadata?: unknown }).metadata;
  if (typeof metadata === "object" && metadata !== null && "managedFields" in metadata) {
    delete (metadata as { managedFields?: unknown }).managedFields;
  }
}
