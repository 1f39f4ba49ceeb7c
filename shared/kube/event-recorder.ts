/**
 * Kubernetes Events (events.k8s.io/v1) on the objects the functions manage, so `kubectl describe`
 * answers "what happened, and since when?". The one Event writer of every function. Series per
 * writer (a repeat is one PATCH, never a read of another's Event), OBJECT_BURST then one per
 * OBJECT_REFILL_MS per object (ADR 0013). Best-effort: `record` never throws nor outlasts its
 * deadline; drops are counted (calls.eventsDropped, calls.eventsLimited).
 */
import { createHash, randomBytes } from "node:crypto";
import type { CallCounters } from "../core/context.js";
import { microTime } from "../core/micro-time.js";
import { kubeObjectSchema, type KubeObject } from "../core/objects.js";
import type { KubeClient } from "./client.js";
import { isKubeError } from "./errors.js";
import type { ResourceType } from "./resources.js";
import { retryOnConflict } from "./retry.js";

export const EVENTS: ResourceType = {
  group: "events.k8s.io",
  version: "v1",
  kind: "Event",
  plural: "events",
  namespaced: true,
  statusSubresource: false,
  schema: kubeObjectSchema,
};

/** The object an Event is about. */
export interface EventRegarding {
  readonly apiVersion: string;
  readonly kind: string;
  /** "" for a cluster-scoped object: its Events go to the "default" namespace. */
  readonly namespace: string;
  readonly name: string;
  readonly uid?: string;
}

export interface EventRecord {
  readonly regarding: EventRegarding;
  readonly type: "Normal" | "Warning";
  /** CamelCase, from a closed catalogue of the caller's. */
  readonly reason: string;
  /** What the controller did: "Sync", "Delete". */
  readonly action: string;
  /** Human-readable; cut to the API's limit of 1 KiB. */
  readonly note: string;
}

export interface EventRecorder {
  record(event: EventRecord): Promise<void>;
}

export const NO_EVENTS: EventRecorder = { record: () => Promise.resolve() };

/** `recorder` with every note passed through `redact` before it is cut and written. */
export function redactingRecorder(
  recorder: EventRecorder,
  redact: (note: string) => string,
): EventRecorder {
  return { record: (event) => recorder.record({ ...event, note: redact(event.note) }) };
}

export interface RecorderOptions {
  /** reportingController: "sdewan.akraino.org/<function>". */
  readonly controller: string;
  /** reportingInstance: the pod's (or process's) name. */
  readonly instance: string;
  /**
   * Where recorded, dropped and limited Events are counted, and the API requests they took
   * (eventRequests); the per-event counters.
   */
  readonly calls?: CallCounters;
  /** Longest a record may take. Default 1 s. */
  readonly deadlineMs?: number;
  readonly now?: () => Date;
}

const NOTE_LIMIT = 1024;
const NAME_LIMIT = 253;

/** New Events one object may get from one process at once (client-go's spam filter: 25). */
export const OBJECT_BURST = 25;
/** After the burst, one more new Event per object this often (client-go's: 5 minutes). */
export const OBJECT_REFILL_MS = 5 * 60 * 1000;

function cut(note: string): string {
  const bytes = Buffer.from(note, "utf8");
  if (bytes.length <= NOTE_LIMIT) return note;
  // Cut on a character boundary, then mark the cut.
  return `${new TextDecoder().decode(bytes.subarray(0, NOTE_LIMIT - 4)).replace(/\uFFFD$/, "")}...`;
}

interface ReportedEvent extends EventRecord {
  readonly controller: string;
  readonly instance: string;
}

/** Entries each per-process memory below keeps, the oldest forgotten first. */
const REMEMBERED = 10_000;

/** A Map that forgets its oldest entry beyond REMEMBERED: what a process may lose, it may forget. */
class Memory<V> {
  private readonly entries = new Map<string, V>();
  get(key: string): V | undefined {
    return this.entries.get(key);
  }
  set(key: string, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= REMEMBERED) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
    this.entries.set(key, value);
  }
  delete(key: string): void {
    this.entries.delete(key);
  }
  clear(): void {
    this.entries.clear();
  }
}

/**
 * What this process knows of the Events it writes, all of it safe to lose: its own name in
 * every Event name, the series count and resourceVersion it last wrote for each Event (so a
 * repeat is one PATCH with that resourceVersion as precondition), the writes in flight per Event
 * (a repeat waits for the write before it instead of racing it), and each object's budget of new
 * Events.
 */
class ProcessEvents {
  nonce = randomBytes(6).toString("hex");
  readonly series = new Memory<{ readonly resourceVersion: string; readonly count: number }>();
  readonly writing = new Map<string, Promise<unknown>>();
  readonly budgets = new Memory<{ readonly tokens: number; readonly since: number }>();

  /** As a new process: no Event known, new names (tests' "the function restarts"). */
  restart(): void {
    this.nonce = randomBytes(6).toString("hex");
    this.series.clear();
    this.budgets.clear();
  }
}

export const processEvents = new ProcessEvents();

/**
 * `<object>.<digest>` of the writer (function, pod, process), the object, the reason and the
 * note: the same occurrence from the same process always has the same name.
 */
function eventName(event: ReportedEvent): string {
  const { regarding, reason, note } = event;
  const digest = createHash("sha256")
    .update(
      [
        event.controller,
        event.instance,
        processEvents.nonce,
        regarding.uid ?? "",
        regarding.kind,
        regarding.namespace,
        regarding.name,
        reason,
        note,
      ].join("\n"),
    )
    .digest("hex")
    .slice(0, 16);
  return `${regarding.name.slice(0, NAME_LIMIT - digest.length - 1)}.${digest}`;
}

/** Where an Event lives. */
interface EventKey {
  readonly namespace: string;
  readonly name: string;
}

const keyOf = (target: EventKey): string => `${target.namespace}/${target.name}`;

/** The Event API calls of one recorder, each counted as it is made. */
class EventApi {
  constructor(
    private readonly kube: KubeClient,
    private readonly calls: CallCounters | undefined,
  ) {}

  private count(): void {
    if (this.calls !== undefined) this.calls.eventRequests = (this.calls.eventRequests ?? 0) + 1;
  }

  create(object: Record<string, unknown>): Promise<KubeObject> {
    this.count();
    return this.kube.create(EVENTS, object as Parameters<KubeClient["create"]>[1]);
  }

  get(target: EventKey): Promise<KubeObject | undefined> {
    this.count();
    return this.kube.get(EVENTS, target);
  }

  /** Sets the series count of the Event as it was at `resourceVersion` (409 if it changed). */
  async writeCount(
    target: EventKey,
    resourceVersion: string | undefined,
    count: number,
    now: Date,
  ): Promise<void> {
    this.count();
    const patched = await this.kube.mergePatch(EVENTS, target, {
      metadata: { resourceVersion },
      series: { count, lastObservedTime: microTime(now) },
    });
    remember(target, patched, count);
  }
}

function remember(target: EventKey, written: KubeObject, count: number): void {
  const { resourceVersion } = written.metadata;
  if (resourceVersion === undefined) processEvents.series.delete(keyOf(target));
  else processEvents.series.set(keyOf(target), { resourceVersion, count });
}

/** Runs `write` after every earlier write of the same Event in this process has settled. */
async function inTurn<T>(target: EventKey, write: () => Promise<T>): Promise<T> {
  const key = keyOf(target);
  const before = processEvents.writing.get(key) ?? Promise.resolve();
  const mine = before.then(write, write);
  const settled = mine.catch(() => undefined);
  processEvents.writing.set(key, settled);
  try {
    return await mine;
  } finally {
    if (processEvents.writing.get(key) === settled) processEvents.writing.delete(key);
  }
}

/** Whether the Event's object may get one more new Event from this process now (spent if so). */
function withinBudget(event: ReportedEvent, now: Date): boolean {
  const { regarding } = event;
  const key = [event.controller, regarding.uid ?? "", regarding.kind, regarding.namespace]
    .concat(regarding.name)
    .join("/");
  const at = now.getTime();
  let budget = processEvents.budgets.get(key) ?? { tokens: OBJECT_BURST, since: at };
  const refills = Math.floor((at - budget.since) / OBJECT_REFILL_MS);
  if (refills > 0) {
    const tokens = Math.min(OBJECT_BURST, budget.tokens + refills);
    budget = { tokens, since: budget.since + refills * OBJECT_REFILL_MS };
  }
  const allowed = budget.tokens > 0;
  processEvents.budgets.set(key, {
    tokens: budget.tokens - (allowed ? 1 : 0),
    since: budget.since,
  });
  return allowed;
}

/**
 * One occurrence: a PATCH of the series this process knows, else a create; the long way (a read,
 * then a PATCH) only when someone else wrote the Event since, or this process forgot it.
 */
async function createOrCount(
  api: EventApi,
  event: ReportedEvent,
  now: Date,
  given: { up: boolean },
): Promise<"recorded" | "limited" | "dropped"> {
  const namespace = event.regarding.namespace === "" ? "default" : event.regarding.namespace;
  const target = { namespace, name: eventName(event) };
  return inTurn(target, async () => {
    // Its turn came after its deadline (a write before it hung): it was counted dropped.
    if (given.up) return "dropped";
    const known = processEvents.series.get(keyOf(target));
    if (known !== undefined) {
      try {
        await api.writeCount(target, known.resourceVersion, known.count + 1, now);
        return "recorded";
      } catch (error) {
        processEvents.series.delete(keyOf(target));
        if (isKubeError(error, "conflict")) {
          await countRead(api, target, now);
          return "recorded";
        }
        // Gone (expired after the API server's event TTL): a new one is created below.
        if (!isKubeError(error, "notFound")) throw error;
      }
    }
    if (!withinBudget(event, now)) return "limited";
    if (!(await create(api, event, target, now))) await countRead(api, target, now);
    return "recorded";
  });
}

/** Creates the Event; false when it exists already (written by this process, then forgotten). */
async function create(
  api: EventApi,
  event: ReportedEvent,
  target: EventKey,
  now: Date,
): Promise<boolean> {
  try {
    const created = await api.create({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { namespace: target.namespace, name: target.name },
      eventTime: microTime(now),
      reportingController: event.controller,
      reportingInstance: event.instance,
      action: event.action,
      reason: event.reason,
      note: cut(event.note),
      type: event.type,
      regarding: event.regarding,
    });
    remember(target, created, 1);
    return true;
  } catch (error) {
    // 409 AlreadyExists: this occurrence has been recorded before.
    if (!isKubeError(error, "conflict")) throw error;
    return false;
  }
}

/** One more in the series of an Event read now (re-read on a concurrent count: none is lost). */
async function countRead(api: EventApi, target: EventKey, now: Date): Promise<void> {
  await retryOnConflict({ attempts: 3 }, async () => {
    const existing = await api.get(target);
    if (existing === undefined) return;
    const { series } = existing as KubeObject & { readonly series?: { readonly count?: number } };
    await api.writeCount(target, existing.metadata.resourceVersion, (series?.count ?? 1) + 1, now);
  });
}

/** Records through `kube`; `kube` should not count into the event's API calls (see calls). */
export function kubeEventRecorder(kube: KubeClient, options: RecorderOptions): EventRecorder {
  const deadlineMs = options.deadlineMs ?? 1000;
  const now = options.now ?? (() => new Date());
  const calls = options.calls;
  const api = new EventApi(kube, calls);
  return {
    async record(event) {
      const full = { ...event, controller: options.controller, instance: options.instance };
      let timer: NodeJS.Timeout | undefined;
      const given = { up: false };
      const deadline = new Promise<"dropped">((resolve) => {
        timer = setTimeout(() => {
          given.up = true;
          resolve("dropped");
        }, deadlineMs);
      });
      // A write that outlives the deadline finishes (or fails) unobserved, never unhandled.
      const write = createOrCount(api, full, now(), given).catch(() => "dropped" as const);
      const result = await Promise.race([write, deadline]);
      clearTimeout(timer);
      if (calls === undefined) return;
      const counter = (
        { recorded: "eventsRecorded", dropped: "eventsDropped", limited: "eventsLimited" } as const
      )[result];
      calls[counter] = (calls[counter] ?? 0) + 1;
    },
  };
}
