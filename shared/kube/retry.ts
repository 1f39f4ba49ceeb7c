/**
 * The one conflict-retry loop (client-go's retry.RetryOnConflict): run `attempt`, and when the API
 * server refuses the write with 409 Conflict (someone wrote between our read and our write), run
 * it again. Each attempt must re-read what it writes; `attempt` gets its number, so the first one
 * may start from state the caller already holds.
 */
import { setTimeout as delay } from "node:timers/promises";
import { isKubeError } from "./errors.js";

export interface ConflictRetryOptions {
  /** Attempts in all, the first included (>= 1). */
  readonly attempts: number;
  /** Which failures mean "raced, try again". Default: 409 Conflict. */
  readonly isRace?: (error: unknown) => boolean;
  /**
   * Upper bound of the random pause before attempt n, times n-1, in ms; spreads concurrent
   * writers so one of them wins each round. Default 10; 0 retries at once.
   */
  readonly jitterMs?: number;
}

const isConflict = (error: unknown): boolean => isKubeError(error, "conflict");

/** The last attempt's failure is thrown as it is; so is any failure that is not a race. */
export async function retryOnConflict<T>(
  options: ConflictRetryOptions,
  attempt: (n: number) => Promise<T>,
): Promise<T> {
  const isRace = options.isRace ?? isConflict;
  const jitterMs = options.jitterMs ?? 10;
  for (let n = 1; ; n += 1) {
    try {
      return await attempt(n);
    } catch (error) {
      if (!isRace(error) || n >= options.attempts) throw error;
      if (jitterMs > 0) await delay(Math.random() * jitterMs * n);
    }
  }
}
