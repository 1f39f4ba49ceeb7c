/**
 * The thin HTTP edge: POSTs one PendingEvent as a binary-mode CloudEvent to its route's URL and
 * reports what happened as a SendResult. Never throws; never follows redirects (a 3xx is an
 * answer, and not a delivery).
 */
import type { Sender } from "./dispatcher.js";
import { toBinaryMessage, type EventMode } from "./cloudevent.js";
import type { PendingEvent } from "./pending-event.js";
import type { SendResult } from "./retry-policy.js";

export interface RouteTarget {
  readonly url: string;
  readonly mode: EventMode;
}

export interface HttpSenderOptions {
  readonly routes: ReadonlyMap<string, RouteTarget>;
  readonly source: string;
  readonly resyncSource: (route: string) => string;
  readonly timeoutMs: number;
}

const BODY_SNIPPET = 512;

export class HttpSender implements Sender {
  constructor(private readonly options: HttpSenderOptions) {}

  async send(event: PendingEvent, signal: AbortSignal): Promise<SendResult> {
    const route = this.options.routes.get(event.route);
    if (route === undefined) {
      return { kind: "network-error", message: `no route named ${event.route}` };
    }
    const message = toBinaryMessage(event, {
      mode: route.mode,
      source: this.options.source,
      resyncSource: this.options.resyncSource(event.route),
      time: new Date(),
    });
    try {
      const response = await fetch(route.url, {
        method: "POST",
        headers: message.headers,
        body: message.body,
        redirect: "manual",
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.options.timeoutMs)]),
      });
      // Read the (normally empty) answer so the connection can be reused.
      const text = await response.text();
      const retryAfter = response.headers.get("retry-after");
      return {
        kind: "response",
        status: response.status,
        ...(retryAfter === null ? {} : { retryAfter }),
        ...(text === "" ? {} : { body: text.slice(0, BODY_SNIPPET) }),
      };
    } catch (error) {
      return { kind: "network-error", message: describeFetchError(error) };
    }
  }
}

/** undici hides the useful part (ECONNREFUSED, timeout) in `cause`. */
function describeFetchError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause;
  if (cause instanceof Error) {
    const code = (cause as NodeJS.ErrnoException).code;
    return `${error.message}: ${code ?? cause.message}`;
  }
  return error.name === "TimeoutError" ? "request timed out" : error.message;
}
