/**
 * Events as the connector sends them: binary-mode CloudEvents over HTTP (Reference mode), with
 * `X-Sdewan-Verbose: 1` so the reply carries the outcome and the calls the function made.
 */
import { randomUUID } from "node:crypto";
import * as z from "zod";
import {
  RESYNC_EVENT_TYPE,
  type ObjectRef,
  type ResyncScope,
  type WatchAction,
} from "../../shared/events/types.js";

const verboseReplySchema = z.object({
  status: z.number(),
  outcome: z.string(),
  events: z.array(
    z.object({
      outcome: z.string(),
      result: z.string().optional(),
      reason: z.string().optional(),
      code: z.string().optional(),
      durationMs: z.number(),
      calls: z.object({
        api: z.number(),
        cnf: z.number(),
        eventsRecorded: z.number().optional(),
        eventRequests: z.number().optional(),
      }),
    }),
  ),
});

export interface EventReply {
  readonly status: number;
  readonly outcome: string;
  /** The result or reason of the (single) event. */
  readonly detail: string;
  readonly calls: {
    readonly api: number;
    readonly cnf: number;
    /** Kubernetes Events the function wrote, and the API requests they took (not in `api`). */
    readonly eventsRecorded?: number | undefined;
    readonly eventRequests?: number | undefined;
  };
}

function objectHeaders(ref: ObjectRef, action: WatchAction): Record<string, string> {
  return {
    "content-type": "application/json",
    "ce-specversion": "1.0",
    "ce-id": randomUUID(),
    "ce-source": "https://127.0.0.1/bench",
    "ce-type": `dev.knative.apiserver.ref.${action}`,
    "ce-time": new Date().toISOString(),
    "ce-kind": ref.kind,
    "ce-apiversion": ref.apiVersion,
    "ce-name": ref.name,
    "ce-namespace": ref.namespace,
    "x-sdewan-verbose": "1",
  };
}

async function send(
  url: string,
  headers: Record<string, string>,
  body: string,
): Promise<EventReply> {
  const res = await fetch(url, { method: "POST", headers, body });
  const text = await res.text();
  const parsed = verboseReplySchema.safeParse(text === "" ? null : JSON.parse(text));
  if (!parsed.success) {
    return {
      status: res.status,
      outcome: "unknown",
      detail: text.slice(0, 200),
      calls: { api: 0, cnf: 0 },
    };
  }
  const event = parsed.data.events[0];
  return {
    status: res.status,
    outcome: parsed.data.outcome,
    detail: event?.result ?? event?.reason ?? event?.code ?? "",
    calls: event?.calls ?? { api: 0, cnf: 0 },
  };
}

/** POSTs a Reference-mode object event to a function URL. */
export function postObjectEvent(
  url: string,
  ref: ObjectRef,
  action: WatchAction = "update",
): Promise<EventReply> {
  const body = {
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
    apiVersion: ref.apiVersion,
  };
  return send(url, objectHeaders(ref, action), JSON.stringify(body));
}

/** POSTs the project's resync event. */
export function postResync(url: string, scope: ResyncScope = {}): Promise<EventReply> {
  const headers = {
    "content-type": "application/json",
    "ce-specversion": "1.0",
    "ce-id": randomUUID(),
    "ce-source": "/bench",
    "ce-type": RESYNC_EVENT_TYPE,
    "x-sdewan-verbose": "1",
  };
  return send(url, headers, JSON.stringify(scope));
}
