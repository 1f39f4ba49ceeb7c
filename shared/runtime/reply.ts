/**
 * What one request's handling comes to, and the HTTP reply for it. Status codes come from
 * OUTCOME_TABLE only; the runtime adds one non-outcome: a handler that threw (500 + error id).
 */
import type { ObjectRef } from "../events/types.js";
import { OUTCOME_TABLE, type Outcome } from "../core/outcome.js";

/** How one event ended. */
export type EventResult =
  | { readonly kind: "outcome"; readonly outcome: Outcome }
  | { readonly kind: "error"; readonly errorId: string; readonly message: string };

export type ResultLabel = Outcome["kind"] | "error";

/** A request's reply: status, headers, and the body sent only when the caller asked (verbose). */
export interface Reply {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly label: ResultLabel;
}

export const HEADER = {
  outcome: "X-Sdewan-Outcome",
  code: "X-Sdewan-Code",
  reason: "X-Sdewan-Reason",
  errorId: "X-Sdewan-Error-Id",
  correlationId: "X-Sdewan-Correlation-Id",
  /** Request header: "1" asks for a JSON body describing the outcome. */
  verbose: "X-Sdewan-Verbose",
} as const;

export const labelOf = (result: EventResult): ResultLabel =>
  result.kind === "outcome" ? result.outcome.kind : result.kind;

/**
 * Worst first: a batch is answered for its worst event. Redelivery must win (the whole batch is
 * redelivered; handlers are idempotent, so the events that were done cost a no-op), then the
 * permanent failure that needs a human, then the malformed one.
 */
const SEVERITY: Readonly<Record<ResultLabel, number>> = {
  error: 4,
  retry: 3,
  permanent: 2,
  malformed: 1,
  done: 0,
};

export const BATCH_SEVERITY_ORDER: readonly ResultLabel[] = (
  Object.keys(SEVERITY) as ResultLabel[]
).sort((a, b) => SEVERITY[b] - SEVERITY[a]);

/** The result a batch is answered with; ties keep the first, except the longest Retry-After wins. */
export function worstResult(results: readonly EventResult[]): EventResult {
  const [first, ...rest] = results;
  if (first === undefined)
    return { kind: "outcome", outcome: { kind: "done", result: "no events" } };
  let worst = first;
  for (const result of rest) {
    const delta = SEVERITY[labelOf(result)] - SEVERITY[labelOf(worst)];
    if (delta > 0 || (delta === 0 && retryAfter(result) > retryAfter(worst))) worst = result;
  }
  return worst;
}

const retryAfter = (result: EventResult): number =>
  result.kind === "outcome" && result.outcome.kind === "retry"
    ? result.outcome.retryAfterSeconds
    : 0;

export function replyFor(result: EventResult, correlationId: string): Reply {
  const base = { [HEADER.correlationId]: correlationId };
  switch (result.kind) {
    case "error":
      return {
        status: 500,
        label: "error",
        headers: { ...base, [HEADER.outcome]: "error", [HEADER.errorId]: result.errorId },
      };
    case "outcome":
      return {
        ...outcomeReply(result.outcome),
        headers: { ...base, ...outcomeHeaders(result.outcome) },
      };
  }
}

function outcomeReply(outcome: Outcome): Omit<Reply, "headers"> {
  return { status: OUTCOME_TABLE[outcome.kind].httpStatus, label: outcome.kind };
}

function outcomeHeaders(outcome: Outcome): Record<string, string> {
  const headers: Record<string, string> = { [HEADER.outcome]: outcome.kind };
  switch (outcome.kind) {
    case "done":
      headers[HEADER.reason] = headerSafe(outcome.result);
      break;
    case "retry":
      headers[HEADER.reason] = headerSafe(outcome.reason);
      headers["Retry-After"] = String(Math.max(0, Math.ceil(outcome.retryAfterSeconds)));
      break;
    case "permanent":
    case "malformed":
      headers[HEADER.code] = headerSafe(outcome.code);
      headers[HEADER.reason] = headerSafe(outcome.reason);
      break;
  }
  return headers;
}

const MAX_HEADER_TEXT = 512;

/** Header values must be visible ASCII; anything else is percent-encoded, and long text cut. */
export function headerSafe(text: string): string {
  const cut = text.length > MAX_HEADER_TEXT ? `${text.slice(0, MAX_HEADER_TEXT - 1)}…` : text;
  // Per code point (`u`), and lone surrogates (valid JSON "\ud800", or a pair cut above) made
  // U+FFFD first: encodeURIComponent throws on a lone surrogate.
  return cut.toWellFormed().replace(/[^\x20-\x7e]|%/gu, (char) => encodeURIComponent(char));
}

/** "Mwan3Rule sdewan-demo/http-rule", or "Egress egress-web" when cluster-scoped. */
export const describeRef = (ref: ObjectRef): string =>
  `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}`;

/** What a result says beyond its label: result / reason / code / retryAfterSeconds / errorId. */
export function resultDetails(result: EventResult): Record<string, unknown> {
  switch (result.kind) {
    case "outcome": {
      const { kind: _kind, ...details } = result.outcome;
      return details;
    }
    case "error":
      return { errorId: result.errorId };
  }
}
