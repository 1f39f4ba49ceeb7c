/**
 * The one mapping from a failed API call to an Outcome, for every capability (docs/overview.md,
 * "One shape"): what the API server refused for good is permanent (422, recorded on the object
 * where there is one), what may pass is a retry (503), the object gone is done. Anything that is
 * not a KubeError is a bug and is thrown (the runtime answers 500).
 */
import { done, permanent, retryLater, type Outcome } from "../core/outcome.js";
import { isKubeError } from "./errors.js";

/**
 * A concurrent writer changed, created or deleted what we were about to write: 409, or 404 on
 * an object read a moment ago. Re-read and try again (retryOnConflict's `isRace`).
 */
export const raced = (error: unknown): boolean =>
  isKubeError(error, "conflict") || isKubeError(error, "notFound");

/** Retry-After of a race: a re-read settles it at once. */
const RACE_RETRY_SECONDS = 1;

export interface KubeFailureOptions {
  /**
   * What a 404 means: "done" (the object the event names is gone: nothing left to do, the
   * default) or "raced" (an object this event read and then wrote vanished: a race, retried).
   */
  readonly notFound?: "done" | "raced";
  /** Retry-After of an outage, an RBAC gap or an answer we cannot read. Default 2. */
  readonly retryAfterSeconds?: number;
}

/**
 * notFound: done("gone") (or a race); conflict: a race, retried; invalid (400, 422 and other
 * 4xx): permanent `Rejected`, redelivery cannot help; forbidden, unavailable, unexpected: retried
 * (an operator fixes RBAC, an outage passes). `what` names the request in the reason.
 */
export function kubeFailureOutcome(
  error: unknown,
  what: string,
  options: KubeFailureOptions = {},
): Outcome {
  if (!isKubeError(error)) throw error;
  const reason = `${what} failed: ${error.message}`;
  if (error.code === "notFound" && (options.notFound ?? "done") === "done") return done("gone");
  if (raced(error)) return retryLater(reason, RACE_RETRY_SECONDS);
  if (error.code === "invalid") {
    return permanent("Rejected", `API server rejected the ${what}: ${error.message}`);
  }
  return retryLater(reason, options.retryAfterSeconds ?? 2);
}
