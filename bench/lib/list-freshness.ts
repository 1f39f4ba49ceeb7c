/**
 * What one list costs right after a write of another kind, at each freshness the API server
 * offers (shared/kube/freshness.ts says why it matters): consistent (no resourceVersion),
 * resourceVersion=0 (whatever the watch cache holds) and NotOlderThan the resourceVersion the
 * write returned (the event object's). Each sample is one write followed at once by one list, so
 * the variants do not lend each other a fresh cache; the variants take turns.
 */
import type { RawApi } from "./raw-api.js";
import { ms, percentiles } from "./stats.js";

export interface ListFreshnessCosts {
  readonly consistent: number;
  readonly cached: number;
  readonly notOlderThanWrite: number;
}

const VARIANTS = ["consistent", "cached", "notOlderThanWrite"] as const;

function query(variant: (typeof VARIANTS)[number], writtenAt: string): string {
  switch (variant) {
    case "consistent":
      return "";
    case "cached":
      return "&resourceVersion=0";
    case "notOlderThanWrite":
      return `&resourceVersion=${writtenAt}&resourceVersionMatch=NotOlderThan`;
  }
}

/**
 * p50 of `samples` lists per variant of `listPath` (a path with a `?labelSelector=...` query),
 * each right after `write()`, which resolves with the resourceVersion it wrote.
 */
export async function listFreshnessCosts(
  raw: RawApi,
  listPath: string,
  write: (i: number) => Promise<string>,
  samples = 10,
): Promise<ListFreshnessCosts> {
  const times = new Map<string, number[]>(VARIANTS.map((v) => [v, []]));
  for (let i = 0; i < samples * VARIANTS.length; i += 1) {
    const variant = VARIANTS[i % VARIANTS.length] ?? "consistent";
    const writtenAt = await write(i);
    const started = performance.now();
    await raw.must("GET", `${listPath}${query(variant, writtenAt)}`);
    times.get(variant)?.push(performance.now() - started);
  }
  const p50 = (v: string): number => percentiles(times.get(v) ?? []).p50;
  return {
    consistent: p50("consistent"),
    cached: p50("cached"),
    notOlderThanWrite: p50("notOlderThanWrite"),
  };
}

export const describeListFreshness = (what: string, costs: ListFreshnessCosts): string =>
  `${what} right after a Pod write (p50): consistent ${ms(costs.consistent)}, ` +
  `resourceVersion=0 ${ms(costs.cached)}, NotOlderThan the Pod's resourceVersion ${ms(costs.notOlderThanWrite)}`;

/** The resourceVersion in a write's reply. */
export const writtenResourceVersion = (body: string): string =>
  (JSON.parse(body) as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion ?? "";
