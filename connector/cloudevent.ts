/**
 * PendingEvent -> the binary-mode HTTP message Knative's ApiServerSource would have sent
 * (reference 1.2): same type strings, source, subject, extensions and data, so a function cannot
 * tell the connector from Knative. Pure: the id comes from the event, the time from the caller.
 */
import { CloudEvent, HTTP } from "cloudevents";
import { RESYNC_EVENT_TYPE, type ObjectRef, type WatchAction } from "../shared/events/types.js";
import type { PendingEvent } from "./pending-event.js";

export type EventMode = "Reference" | "Resource";

export interface CloudEventOptions {
  readonly mode: EventMode;
  /** ce-source of object events: the API server URL, as ApiServerSource uses its REST host. */
  readonly source: string;
  /** ce-source of resync events. */
  readonly resyncSource: string;
  readonly time: Date;
}

export interface BinaryMessage {
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export function apiServerEventType(action: WatchAction, mode: EventMode): string {
  return `dev.knative.apiserver.${mode === "Resource" ? "resource" : "ref"}.${action}`;
}

/** apimachinery's UnsafeGuessKindToResource, which Knative uses for the subject's plural. */
export function guessPlural(kind: string): string {
  const singular = kind.toLowerCase();
  if (singular.endsWith("endpoints")) return singular;
  if (singular.endsWith("s")) return `${singular}es`;
  if (singular.endsWith("y")) return `${singular.slice(0, -1)}ies`;
  return `${singular}s`;
}

/**
 * ApiServerSource's synthesized self-link: always `/apis/`, even for core kinds; an empty namespace
 * segment for cluster-scoped objects; `/versionUnknown` when the apiVersion is a bare group.
 */
export function apiServerSubject(ref: ObjectRef): string {
  const version =
    ref.apiVersion.includes(".") && !ref.apiVersion.includes("/")
      ? `${ref.apiVersion}/versionUnknown`
      : ref.apiVersion;
  return `/apis/${version}/namespaces/${ref.namespace}/${guessPlural(ref.kind)}/${ref.name}`;
}

export function toBinaryMessage(event: PendingEvent, options: CloudEventOptions): BinaryMessage {
  const time = options.time.toISOString();
  if (event.action === "resync") {
    const ce = new CloudEvent({
      id: event.id,
      type: RESYNC_EVENT_TYPE,
      source: options.resyncSource,
      time,
      datacontenttype: "application/json",
      data: {},
    });
    return asMessage(ce);
  }
  const { ref } = event;
  const data =
    options.mode === "Resource" && event.object !== undefined ? event.object : referenceData(ref);
  const ce = new CloudEvent({
    id: event.id,
    type: apiServerEventType(event.action, options.mode),
    source: options.source,
    subject: apiServerSubject(ref),
    time,
    datacontenttype: "application/json",
    data,
    kind: ref.kind,
    apiversion: ref.apiVersion,
    name: ref.name,
    namespace: ref.namespace,
  });
  return asMessage(ce);
}

/** corev1.ObjectReference as Knative marshals it: namespace omitted when empty, nothing else. */
function referenceData(ref: ObjectRef): Record<string, string> {
  return ref.namespace === ""
    ? { kind: ref.kind, name: ref.name, apiVersion: ref.apiVersion }
    : { kind: ref.kind, namespace: ref.namespace, name: ref.name, apiVersion: ref.apiVersion };
}

function asMessage(ce: CloudEvent<unknown>): BinaryMessage {
  const message = HTTP.binary(ce);
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(message.headers)) {
    if (value !== undefined) headers[name] = String(value);
  }
  return {
    headers,
    body: typeof message.body === "string" ? message.body : JSON.stringify(message.body),
  };
}
