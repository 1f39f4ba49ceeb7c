/**
 * One object's failure stays that object's: what a failed API call means as an Outcome, and the
 * one loop every event that handles many objects (a resync) runs them through, so that one object
 * that cannot be handled is reported on itself and skipped while the others are handled.
 *
 *   const outcomes = await eachObject(exports, (exp) => settleExport(exp), {
 *     regarding: (exp) => ({ apiVersion, kind: "Export", namespace, name, uid }),
 *     log, events,
 *   });
 *   return batchOutcome(outcomes); // a skipped object never makes the resync a 500
 */
import type { Log } from "../core/context.js";
import { messageOf } from "../core/error-message.js";
import { done, permanent, type Outcome } from "../core/outcome.js";
import { isKubeError } from "./errors.js";
import type { EventRecorder, EventRegarding } from "./event-recorder.js";
import { kubeFailureOutcome } from "./failure-outcome.js";

/** The Warning Event an object gets when its handling failed and it was skipped. */
export const OBJECT_FAILED_REASON = "ReconcileFailed";

export interface SettleObjectOptions {
  /** The object as log lines and the outcome name it, e.g. "Export ns1/db". */
  readonly object: string;
  /** The object the Event is recorded on; none when absent (a log line still names it). */
  readonly regarding?: EventRegarding | undefined;
  readonly log: Log;
  readonly events?: EventRecorder | undefined;
  /** Failures that are the whole event's (a race its caller retries whole): thrown as they are. */
  readonly rethrow?: (error: unknown) => boolean;
  /** What else the object is told (e.g. a condition on its status); best-effort. */
  readonly onFailure?: (outcome: Outcome) => Promise<void>;
}

/** Outages and races pass by themselves: a log line, no Event. */
const transient = (error: unknown): boolean =>
  isKubeError(error) && (error.code === "unavailable" || error.code === "conflict");

/** "Kind ns/name", or "Kind name" for a cluster-scoped object. */
export const describeObject = (r: EventRegarding): string =>
  `${r.kind} ${r.namespace === "" ? "" : `${r.namespace}/`}${r.name}`;

/** The failure as the object's outcome: an API failure as kubeFailureOutcome says, else a bug. */
function failureOutcome(error: unknown, what: string): Outcome {
  if (isKubeError(error)) return kubeFailureOutcome(error, what);
  return permanent("InternalError", `${what} failed: ${messageOf(error)}`);
}

async function report(
  error: unknown,
  outcome: Outcome,
  options: SettleObjectOptions,
): Promise<void> {
  const { object, regarding } = options;
  const fields = { object, outcome: outcome.kind };
  if (isKubeError(error)) options.log.warn(fields, `${object} skipped: ${messageOf(error)}`);
  else options.log.error({ ...fields, err: error }, `${object} skipped: ${messageOf(error)}`);
  if (outcome.kind === "done" || transient(error)) return;
  await Promise.all([
    regarding === undefined
      ? undefined
      : options.events?.record({
          regarding,
          type: "Warning",
          reason: OBJECT_FAILED_REASON,
          action: "Reconcile",
          note: `${messageOf(error)} (this object was skipped, the others were handled; the next delivery tries it again)`,
        }),
    options.onFailure?.(outcome).catch((failure: unknown) => {
      options.log.warn({ object }, `${object}: could not record why: ${messageOf(failure)}`);
    }),
  ]);
}

/**
 * Runs one object's work. A failure becomes its outcome (`failedAs` shapes the result) after it
 * is reported on the object: a log line naming it always, a Warning Event unless it passes by
 * itself (an outage, a race), and `onFailure`'s own word.
 */
export async function settleObject<R>(
  work: () => Promise<R>,
  failedAs: (outcome: Outcome) => R,
  options: SettleObjectOptions,
): Promise<R> {
  try {
    return await work();
  } catch (error) {
    if (options.rethrow?.(error) === true) throw error;
    const outcome = failureOutcome(error, `handling ${options.object}`);
    await report(error, outcome, options);
    return failedAs(outcome);
  }
}

export interface EachObjectOptions<T> extends Omit<
  SettleObjectOptions,
  "object" | "regarding" | "onFailure"
> {
  readonly regarding: (item: T) => EventRegarding;
  readonly onFailure?: (item: T, outcome: Outcome) => Promise<void>;
  /** Objects handled at once. Default 1 (in order). */
  readonly concurrency?: number;
}

/**
 * Every object through settleObject, `concurrency` at a time; one outcome per object, in order.
 * A failure to rethrow ends the batch: no object starts after it, and it is thrown once every
 * object started has ended.
 */
export async function eachObject<T>(
  items: readonly T[],
  handle: (item: T) => Promise<Outcome>,
  options: EachObjectOptions<T>,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = new Array<Outcome>(items.length);
  const thrown: unknown[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length && thrown.length === 0) {
      const index = next;
      next += 1;
      const item = items[index] as T;
      const { onFailure } = options;
      try {
        const regarding = options.regarding(item);
        outcomes[index] = await settleObject(
          () => handle(item),
          (o) => o,
          {
            ...options,
            object: describeObject(regarding),
            regarding,
            onFailure: onFailure === undefined ? undefined : (o) => onFailure(item, o),
          },
        );
      } catch (error) {
        thrown.push(error);
        outcomes[index] = done("not handled");
      }
    }
  };
  const workers = Math.max(1, Math.min(options.concurrency ?? 1, items.length));
  await Promise.all(Array.from({ length: workers }, worker));
  if (thrown.length > 0) throw thrown[0];
  return outcomes;
}
