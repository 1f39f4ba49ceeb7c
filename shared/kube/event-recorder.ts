/**
 * Kubernetes Events (events.k8s.io/v1) on the objects the functions manage, so `kubectl describe`
 * answers "what happened to this rule, and since when?". One Event per (object, reason, note):
 * its name is derived from them, so a repeat finds the Event and raises its series count instead
 * of creating another, as client-go's event broadcaster does.
 *
 * Best-effort by contract: `record` never throws and never takes longer than its deadline. A
 * write that fails or times out is counted (calls.eventsDropped) and logged by the caller's
 * metrics, never turned into the event's outcome.
 */
import { createHash } from "node:crypto";
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

export interface RecorderOptions {
  /** reportingController: "sdewan.akraino.org/<function>". */
  readonly controller: string;
  /** reportingInstance: the pod's (or process's) name. */
  readonly instance: string;
  /** Where recorded and dropped Events are counted; the per-event counters. */
  readonly calls?: CallCounters;
  /** Longest a record may take. Default 1 s. */
  readonly deadlineMs?: number;
  readonly now?: () => Date;
}

const NOTE_LIMIT = 1024;
const NAME_LIMIT = 253;

function cut(note: string): string {
  const bytes = Buffer.from(note, "utf8");
  if (bytes.length <= NOTE_LIMIT) return note;
  // Cut on a character boundary, then mark the cut.
  return `${new TextDecoder().decode(bytes.subarray(0, NOTE_LIMIT - 4)).replace(/\uFFFD$/, "")}...`;
}

/** `<object>.<digest of uid, reason and note>`: the same occurrence always has the same name. */
export function eventName(event: EventRecord): string {
  const { regarding, reason, note } = event;
  const digest = createHash("sha256")
    .update(`${regarding.uid ?? ""}\n${regarding.kind}\n${reason}\n${note}`)
    .digest("hex")
    .slice(0, 16);
  return `${regarding.name.slice(0, NAME_LIMIT - digest.length - 1)}.${digest}`;
}

interface SeriesFields {
  readonly series?: { readonly count?: number };
  readonly deprecatedCount?: number;
}

interface ReportedEvent extends EventRecord {
  readonly controller: string;
  readonly instance: string;
}

const KNOWN_SERIES_LIMIT = 10_000;

/** Where an Event lives. */
interface EventKey {
  readonly namespace: string;
  readonly name: string;
}

/**
 * Per process: the series count and resourceVersion this process last wrote for an Event, so
 * that its next repeat is one PATCH (with that resourceVersion as precondition) instead of a
 * refused create, a read and a patch. Safe to lose: a miss or a stale entry costs the long way.
 */
const knownSeries = new Map<string, { readonly resourceVersion: string; readonly count: number }>();

const seriesKey = (target: EventKey): string => `${target.namespace}/${target.name}`;

function rememberSeries(target: EventKey, written: KubeObject, count: number): void {
  const key = seriesKey(target);
  const { resourceVersion } = written.metadata;
  knownSeries.delete(key);
  if (resourceVersion === undefined) return;
  if (knownSeries.size >= KNOWN_SERIES_LIMIT) {
    const oldest = knownSeries.keys().next().value;
    if (oldest !== undefined) knownSeries.delete(oldest);
  }
  knownSeries.set(key, { resourceVersion, count });
}

/** Sets the series count of the Event as it was at `resourceVersion` (409 if it changed since). */
async function writeCount(
  kube: KubeClient,
  target: EventKey,
  resourceVersion: string | undefined,
  count: number,
  now: Date,
): Promise<void> {
  const patched = await kube.mergePatch(EVENTS, target, {
    metadata: { resourceVersion },
    series: { count, lastObservedTime: microTime(now) },
  });
  rememberSeries(target, patched, count);
}

/**
 * One more in a series this process wrote last: "counted"; "exists" when another writer counted
 * since (re-read it), "unknown" when it is not known here or has expired (create it).
 */
async function countKnown(
  kube: KubeClient,
  target: EventKey,
  now: Date,
): Promise<"counted" | "exists" | "unknown"> {
  const known = knownSeries.get(seriesKey(target));
  if (known === undefined) return "unknown";
  try {
    await writeCount(kube, target, known.resourceVersion, known.count + 1, now);
    return "counted";
  } catch (error) {
    knownSeries.delete(seriesKey(target));
    if (isKubeError(error, "conflict")) return "exists";
    if (isKubeError(error, "notFound")) return "unknown";
    throw error;
  }
}

async function createOrCount(kube: KubeClient, event: ReportedEvent, now: Date): Promise<void> {
  const namespace = event.regarding.namespace === "" ? "default" : event.regarding.namespace;
  const target = { namespace, name: eventName(event) };
  const known = await countKnown(kube, target, now);
  if (known === "counted") return;
  if (known === "unknown" && (await create(kube, event, target, now))) return;
  await countRead(kube, target, now);
}

/** Creates the Event; false when it exists already (this occurrence was recorded before). */
async function create(
  kube: KubeClient,
  event: ReportedEvent,
  target: EventKey,
  now: Date,
): Promise<boolean> {
  try {
    const created = await kube.create(EVENTS, {
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
    rememberSeries(target, created, 1);
    return true;
  } catch (error) {
    // 409 AlreadyExists: this occurrence has been recorded before.
    if (!isKubeError(error, "conflict")) throw error;
    return false;
  }
}

/** One more in the series of an Event read now (re-read on a concurrent count: none is lost). */
async function countRead(kube: KubeClient, target: EventKey, now: Date): Promise<void> {
  await retryOnConflict({ attempts: 3 }, async () => {
    const existing = await kube.get(EVENTS, target);
    if (existing === undefined) return;
    const { series } = existing as KubeObject & SeriesFields;
    const count = (series?.count ?? 1) + 1;
    await writeCount(kube, target, existing.metadata.resourceVersion, count, now);
  });
}

/** Records through `kube`; `kube` should not count into the event's API calls (see calls). */
export function kubeEventRecorder(kube: KubeClient, options: RecorderOptions): EventRecorder {
  const deadlineMs = options.deadlineMs ?? 1000;
  const now = options.now ?? (() => new Date());
  const calls = options.calls;
  return {
    async record(event) {
      const full = { ...event, controller: options.controller, instance: options.instance };
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<"dropped">((resolve) => {
        timer = setTimeout(() => resolve("dropped"), deadlineMs);
      });
      // A write that outlives the deadline finishes (or fails) unobserved, never unhandled.
      const write = createOrCount(kube, full, now()).then(
        () => "recorded" as const,
        () => "dropped" as const,
      );
      const result = await Promise.race([write, deadline]);
      clearTimeout(timer);
      if (calls === undefined) return;
      if (result === "recorded") calls.eventsRecorded = (calls.eventsRecorded ?? 0) + 1;
      else calls.eventsDropped = (calls.eventsDropped ?? 0) + 1;
    },
  };
}
