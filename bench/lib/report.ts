/**
 * What a bench row reports, and the one table every run prints. A target is a goal, never an
 * assertion: a missed target makes the row say "MISS", and the run still completes.
 */

/** One measured value against its goal, e.g. p99 <= 50 ms. */
export interface Check {
  readonly label: string;
  readonly value: number;
  readonly limit: number;
  /** "max": value must be <= limit; "min": value must be >= limit. */
  readonly bound: "max" | "min";
}

export interface RowResult {
  readonly id: string;
  readonly metric: string;
  /** The target as the issue states it. */
  readonly target: string;
  /** What was measured, in the target's terms. */
  readonly measured: string;
  /** The request counts that explain the measurement. */
  readonly counts: string;
  readonly checks: readonly Check[];
  /** Raw numbers for bench/results.json. */
  readonly values: Readonly<Record<string, number | string | boolean>>;
  /** Set when the row could not be measured (setup failed, wrong end state). */
  readonly error?: string;
}

export const atMost = (label: string, value: number, limit: number): Check => ({
  label,
  value,
  limit,
  bound: "max",
});

export const atLeast = (label: string, value: number, limit: number): Check => ({
  label,
  value,
  limit,
  bound: "min",
});

export function checkPasses(check: Check): boolean {
  if (!Number.isFinite(check.value)) return false;
  return check.bound === "max" ? check.value <= check.limit : check.value >= check.limit;
}

/** "pass", or "MISS: p99" naming the checks that missed, or "ERROR". */
export function verdict(row: RowResult): string {
  if (row.error !== undefined) return "ERROR";
  const missed = row.checks.filter((c) => !checkPasses(c)).map((c) => c.label);
  return missed.length === 0 ? "pass" : `MISS (${missed.join(", ")})`;
}

export function rowPasses(row: RowResult): boolean {
  return verdict(row) === "pass";
}

const escapeCell = (text: string): string => text.replaceAll("|", "\\|").replaceAll("\n", " ");

/** A Markdown table: readable in a terminal, and docs/benchmarks.md copies it as it is. */
export function renderTable(rows: readonly RowResult[]): string {
  const header = ["metric", "target", "measured", "requests that explain it", "result"];
  const body = rows.map((r) => [
    r.metric,
    r.target,
    r.error === undefined ? r.measured : `error: ${r.error}`,
    r.counts,
    verdict(r),
  ]);
  const lines = [header, header.map(() => "---"), ...body].map(
    (cells) => `| ${cells.map(escapeCell).join(" | ")} |`,
  );
  return lines.join("\n");
}
