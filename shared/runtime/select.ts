/** FUNCTIONS=a,b: which functions a combined server serves. */
import type { SdewanFunction } from "./function.js";

/**
 * Unset or empty = all. An unknown name is a configuration error, reported at start. Works on
 * functions or on anything named like one (functions/catalog.ts's loaders).
 */
export function selectFunctions<T extends Pick<SdewanFunction, "name">>(
  all: readonly T[],
  spec: string | undefined,
): T[] {
  const wanted = (spec ?? "")
    .split(",")
    .map((name) => name.trim())
    .filter(Boolean);
  if (wanted.length === 0) return [...all];
  const known = all.map((fn) => fn.name);
  const unknown = wanted.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    throw new Error(
      `FUNCTIONS names unknown function(s) ${unknown.join(", ")}; known: ${known.join(", ")}`,
    );
  }
  return all.filter((fn) => wanted.includes(fn.name));
}

/** PORT as Knative and OpenFaaS set it; default 8080. */
/** The port `npm start` and the image listen on without PORT (Knative and OpenFaaS set it). */
export const DEFAULT_PORT = 8080;

export function portFrom(value: string | undefined, fallback = DEFAULT_PORT): number {
  if (value === undefined || value.trim() === "") return fallback;
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new Error(`PORT must be an integer 0-65535, got "${value}"`);
  }
  return port;
}
