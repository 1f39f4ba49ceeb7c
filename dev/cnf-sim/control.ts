/**
 * Test controls of the simulator that are not part of the CNF: injected faults, counters of what
 * the CNF handled, and the request log. Kept apart from the CNF model so a simulated CNF restart
 * (which drops the CNF's state) keeps the observations a test makes across it.
 */
import * as z from "zod";

const matchFields = {
  /** Only requests with this HTTP method. */
  method: z.string().toUpperCase().optional(),
  /**
   * Only requests to this target: a collection as "mwan3/policies" or "policies", "login",
   * "restart" (the service endpoint) or "restart/<service>". Absent: any CNF request.
   */
  collection: z.string().optional(),
  /** How many matching requests the fault applies to (default 1). */
  count: z.number().int().positive().default(1),
};

export const simFaultSchema = z.discriminatedUnion("kind", [
  /** Answer with this status and an upstream-style error body. */
  z.object({
    kind: z.literal("status"),
    status: z.number().int().min(200).max(599),
    message: z.string().optional(),
    ...matchFields,
  }),
  /** Accept the request and never answer (until the simulator closes). */
  z.object({ kind: z.literal("hang"), ...matchFields }),
  /** Answer normally after a delay. */
  z.object({ kind: z.literal("delay"), ms: z.number().int().nonnegative(), ...matchFields }),
  /** Answer with a body that is not what the CNF would send (by default not even JSON). */
  z.object({
    kind: z.literal("garbage"),
    status: z.number().int().min(200).max(599).default(200),
    body: z.string().default("<html><body>502 upstream garbage"),
    ...matchFields,
  }),
  /**
   * Answer a collection write (POST, PUT, DELETE) exactly as the CNF would, then undo it: a CNF
   * that says 200 and keeps nothing. Other requests it matches are served normally.
   */
  z.object({ kind: z.literal("lie"), ...matchFields }),
  /** Destroy the connection without answering (the client sees a reset). */
  z.object({ kind: z.literal("reset"), ...matchFields }),
]);

export type SimFault = z.output<typeof simFaultSchema>;
export type SimFaultInput = z.input<typeof simFaultSchema>;

/** Faults apply first-come first-served; each matching request consumes one count. */
export class FaultQueue {
  private pending: { fault: SimFault; left: number }[] = [];

  add(input: SimFaultInput): void {
    const fault = simFaultSchema.parse(input);
    this.pending.push({ fault, left: fault.count });
  }

  clear(): void {
    this.pending = [];
  }

  list(): { fault: SimFault; left: number }[] {
    return this.pending.map((entry) => ({ ...entry }));
  }

  /** The fault for this request, if any, consuming one count. `targets` are the request's names. */
  take(method: string, targets: readonly string[]): SimFault | undefined {
    const entry = this.pending.find(
      ({ fault }) =>
        (fault.method === undefined || fault.method === method) &&
        (fault.collection === undefined || targets.includes(fault.collection)),
    );
    if (entry === undefined) return undefined;
    entry.left -= 1;
    if (entry.left <= 0) this.pending = this.pending.filter((other) => other !== entry);
    return entry.fault;
  }
}

export interface CollectionCounters {
  /** GET requests the CNF handled (item or collection). */
  reads: number;
  /** POST, PUT and DELETE requests the CNF handled, whatever their status. */
  writes: number;
}

/** What the CNF handled: requests that passed fault injection and authentication. */
export interface SimCounters {
  logins: number;
  failedLogins: number;
  /** Requests refused with 403 for a missing, unknown or expired sysauth cookie. */
  unauthorized: number;
  /** Calls of the service restart endpoint (any status). */
  serviceActions: number;
  /** Keyed "mwan3/policies", "firewall/zones", "ipsec/remotes", "service/services", ... */
  collections: Record<string, CollectionCounters>;
}

export function emptyCounters(): SimCounters {
  return { logins: 0, failedLogins: 0, unauthorized: 0, serviceActions: 0, collections: {} };
}

export function countCollection(counters: SimCounters, key: string, method: string): void {
  const entry = (counters.collections[key] ??= { reads: 0, writes: 0 });
  if (method === "GET") entry.reads += 1;
  else entry.writes += 1;
}

/** Sum of writes over all collections, or over the given ones. */
export function totalWrites(counters: SimCounters, keys?: readonly string[]): number {
  return Object.entries(counters.collections)
    .filter(([key]) => keys === undefined || keys.includes(key))
    .reduce((sum, [, entry]) => sum + entry.writes, 0);
}

export interface SimRequestRecord {
  readonly seq: number;
  readonly method: string;
  readonly path: string;
  /** The status answered; null when the request hung or the connection was destroyed. */
  status: number | null;
  fault: SimFault["kind"] | null;
}

export const connectionModeSchema = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("accept") }),
  /** Destroy the socket of every CNF request (control requests still work). */
  z.object({ mode: z.literal("reset") }),
  /** Close the listener (connection refused) and listen again after `forMs`. */
  z.object({ mode: z.literal("refuse"), forMs: z.number().int().positive() }),
]);
