/** Small statistics for the bench: percentiles by nearest rank, timing, formatting. */

export interface Percentiles {
  readonly n: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly mean: number;
}

/** Nearest-rank percentiles: p99 of 200 samples is the 198th smallest. */
export function percentiles(samples: readonly number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.max(0, Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  const sum = sorted.reduce((s, x) => s + x, 0);
  return {
    n: sorted.length,
    p50: at(0.5),
    p99: at(0.99),
    max: sorted[sorted.length - 1] ?? NaN,
    mean: sorted.length === 0 ? NaN : sum / sorted.length,
  };
}

export function median(samples: readonly number[]): number {
  return percentiles(samples).p50;
}

/** Milliseconds `work` took, and its result. */
export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const started = performance.now();
  const value = await work();
  return { ms: performance.now() - started, value };
}

/** "12.3 ms" (one decimal below 100 ms, whole milliseconds above). */
export function ms(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  return value < 100 ? `${value.toFixed(1)} ms` : `${Math.round(value)} ms`;
}

/** A number with at most `digits` decimals, trailing zeros dropped. */
export function num(value: number, digits = 1): string {
  if (!Number.isFinite(value)) return "n/a";
  return String(Number(value.toFixed(digits)));
}

/** 12345 -> "12,345". */
export function int(value: number): string {
  return Math.round(value).toLocaleString("en-US");
}

/** CPU this process uses from now (user + system, ms), read by the returned function. */
export function cpuMeter(): () => number {
  const before = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(before);
    return (used.user + used.system) / 1000;
  };
}
