/**
 * What to do after one delivery attempt: pure functions of the sink's answer, the attempt count,
 * the event's age and a random source. No clock, no I/O: the dispatcher passes `now` and `random`.
 *
 * Retried like Knative's broker dispatcher (reference 2.3): any 5xx, 404, 408, 409, 429 and network
 * errors. Other answers (400, 401, 403, 413, 422, 3xx ...) are final: dead-lettered at once.
 */

/** The two bounds of an exponential backoff (see backoffDelay). */
export interface BackoffBounds {
  /** Delay after the first failure; doubles per further failure. */
  readonly initialDelayMs: number;
  /** Cap of the exponential part. */
  readonly maxDelayMs: number;
}

/** Deliveries: initialDelayMs is the delay before the 2nd attempt; then the attempt budgets. */
export interface RetryPolicy extends BackoffBounds {
  /** Total attempts including the first; then dead-letter. */
  readonly maxAttempts: number;
  /** Dead-letter when the next attempt would start later than this after the event was observed. */
  readonly maxAgeMs: number;
  /** A sink's Retry-After is honoured up to this much. */
  readonly retryAfterMaxMs: number;
}

/** What the sender saw: an HTTP answer, or no answer at all. */
export type SendResult =
  | {
      readonly kind: "response";
      readonly status: number;
      readonly retryAfter?: string;
      /** Start of the sink's answer, for the dead-letter line (Knative's knativeerrordata). */
      readonly body?: string;
    }
  | { readonly kind: "network-error"; readonly message: string };

export type SendClass = "delivered" | "retryable" | "rejected";

const RETRYABLE_4XX = new Set([404, 408, 409, 429]);

export function classifySendResult(result: SendResult): SendClass {
  if (result.kind === "network-error") return "retryable";
  const { status } = result;
  if (status >= 200 && status < 300) return "delivered";
  if (status >= 500 || RETRYABLE_4XX.has(status)) return "retryable";
  return "rejected";
}

/** Short label for metrics and logs: the status code, or "network". */
export function failureReason(result: SendResult): string {
  return result.kind === "network-error" ? "network" : String(result.status);
}

/**
 * Retry-After (RFC 9110 10.2.3) -> milliseconds to wait from `nowMs`, or undefined when absent or
 * unparsable. Accepts delay-seconds and the three HTTP-date forms; a date in the past means 0.
 */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = parseHttpDate(trimmed, nowMs);
  if (at === undefined) return undefined;
  return Math.max(0, at - nowMs);
}

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
const DAY = "(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)";
const LONG_DAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)";
const MONTH = `(${MONTHS.join("|")})`;
const TIME = "(\\d{2}):(\\d{2}):(\\d{2})";
// IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
const IMF_FIXDATE = new RegExp(`^${DAY}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
// obsolete RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
const RFC_850 = new RegExp(`^${LONG_DAY}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
// obsolete asctime: Sun Nov  6 08:49:37 1994
const ASCTIME = new RegExp(`^${DAY} ${MONTH} ([ \\d]\\d) ${TIME} (\\d{4})$`);

function parseHttpDate(text: string, nowMs: number): number | undefined {
  let m = IMF_FIXDATE.exec(text);
  if (m) return utc(m[3], m[2], m[1], [m[4], m[5], m[6]]);
  m = RFC_850.exec(text);
  if (m) {
    // RFC 9110: a two-digit year more than 50 years in the future is in the past century.
    const yy = Number(m[3]);
    const year = yy + 2000 > new Date(nowMs).getUTCFullYear() + 50 ? 1900 + yy : 2000 + yy;
    return utc(String(year), m[2], m[1], [m[4], m[5], m[6]]);
  }
  m = ASCTIME.exec(text);
  if (m) return utc(m[6], m[1], m[2], [m[3], m[4], m[5]]);
  return undefined;
}

type Maybe = string | undefined;

function utc(year: Maybe, month: Maybe, day: Maybe, [h, min, s]: [Maybe, Maybe, Maybe]): number {
  return Date.UTC(
    Number(year),
    MONTHS.indexOf(month ?? ""),
    Number(day?.trim()),
    Number(h),
    Number(min),
    Number(s),
  );
}

/**
 * Exponential backoff with equal jitter: after the n-th failed attempt the ceiling is
 * min(maxDelay, initialDelay * 2^(n-1)) and the delay is uniform in [ceiling/2, ceiling], so retries
 * spread out but never collapse to zero. The connector's one backoff: failed deliveries
 * (planAfterFailure) and failed lists and watches (watch-stream.ts) both wait this long.
 */
export function backoffDelay(
  failedAttempts: number,
  bounds: BackoffBounds,
  random: () => number,
): number {
  const exponent = Math.max(0, failedAttempts - 1);
  const ceiling = Math.min(bounds.maxDelayMs, bounds.initialDelayMs * 2 ** exponent);
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

export type DeadLetterReason = "rejected" | "attempts-exhausted" | "age-exhausted";

export type AfterFailure =
  | { readonly kind: "retry"; readonly at: number; readonly delayMs: number }
  | { readonly kind: "dead-letter"; readonly reason: DeadLetterReason };

export interface FailedAttempt {
  /** Attempts made so far, including the one that just failed. */
  readonly attempts: number;
  /** When the event was first observed (the age budget starts here). */
  readonly observedAt: number;
  readonly now: number;
  readonly result: SendResult;
}

/** Plans the next step after a failed attempt: when to retry, or why to give up. */
export function planAfterFailure(
  attempt: FailedAttempt,
  policy: RetryPolicy,
  random: () => number,
): AfterFailure {
  if (classifySendResult(attempt.result) !== "retryable") {
    return { kind: "dead-letter", reason: "rejected" };
  }
  if (attempt.attempts >= policy.maxAttempts) {
    return { kind: "dead-letter", reason: "attempts-exhausted" };
  }
  const backoff = backoffDelay(attempt.attempts, policy, random);
  const retryAfter =
    attempt.result.kind === "response"
      ? parseRetryAfter(attempt.result.retryAfter, attempt.now)
      : undefined;
  // Honour Retry-After as a lower bound (never earlier than the sink asked), within a cap.
  const delayMs =
    retryAfter === undefined
      ? backoff
      : Math.max(backoff, Math.min(retryAfter, policy.retryAfterMaxMs));
  const at = attempt.now + delayMs;
  if (at - attempt.observedAt > policy.maxAgeMs) {
    return { kind: "dead-letter", reason: "age-exhausted" };
  }
  return { kind: "retry", at, delayMs };
}
