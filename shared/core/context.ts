/** What every layer that does I/O for one event is handed: a logger and the event's call counters. */

/** Counts outbound calls made while handling one event; logged with the reply and exported as metrics. */
export interface CallCounters {
  api: number;
  cnf: number;
  /**
   * Kubernetes Events written (best-effort, not counted in `api`), given up on, and held back by
   * the per-object bound (shared/kube/event-recorder.ts); the API requests all of them took.
   */
  eventsRecorded?: number;
  eventsDropped?: number;
  eventsLimited?: number;
  eventRequests?: number;
  /** Rule events that were the echo of the function's own status write: no CNF reads made. */
  ownEchoesSkipped?: number;
  /**
   * CNF calls that failed after the client's in-process retry, by reason (unreachable, timeout,
   * login-failed, bad-reply, or the CNF's rejection: invalid, server-error, ...). Present only once
   * a call failed; exported as sdewan_cnf_failures_total.
   */
  cnfFailures?: Record<string, number>;
}

/** Minimal structured logger (pino-compatible subset); every line carries the event's correlation id. */
export interface Log {
  info(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
  error(fields: Record<string, unknown>, message: string): void;
  debug(fields: Record<string, unknown>, message: string): void;
}
