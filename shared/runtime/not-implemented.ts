/**
 * How a function says "this route exists but its logic has not landed yet". The runtime answers
 * 501 for it, so a stub never pretends success and the closed OUTCOME_TABLE stays closed.
 */
import type { EventFunction, JsonFunction } from "./function.js";

export class NotImplementedError extends Error {
  override readonly name = "NotImplementedError";
}

/** An EventFunction whose every event is answered 501 with `message`. */
export function notImplementedEventFunction(name: string, message: string): EventFunction {
  return {
    name,
    kind: "event",
    handle: () => Promise.reject(new NotImplementedError(message)),
  };
}

/** A JsonFunction whose every request is answered 501 with `message`. */
export function notImplementedJsonFunction(name: string, message: string): JsonFunction {
  return {
    name,
    kind: "json",
    handle: () => Promise.reject(new NotImplementedError(message)),
  };
}
