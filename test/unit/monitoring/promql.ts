// Metric names in PromQL expressions, and the metric names the code exports, for the checks that
// the alerts and the dashboard query only what exists (a renamed metric fails them).
import { createMetrics } from "../../../connector/metrics.js";
import { RuntimeMetrics } from "../../../shared/runtime/metrics.js";

const KEYWORDS = new Set([
  "by",
  "without",
  "on",
  "ignoring",
  "group_left",
  "group_right",
  "offset",
  "bool",
  "and",
  "or",
  "unless",
  "inf",
  "nan",
]);

/**
 * The metric names an expression selects: identifiers that are not a function or aggregation
 * (followed by `(`), a keyword, a label name (inside `{}` or a `by (...)` list), a string, a
 * range or a number.
 */
export function metricNamesOf(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, " ")
    .replace(/\[[^\]]*\]/g, " ")
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, " ")
    // numbers and durations (0.99, 10m, 1e3): their unit letters are no name
    .replace(/\b\d+(?:\.\d+)?[a-z]*/gi, " ");
  const names = new Set<string>();
  for (const match of stripped.matchAll(/[A-Za-z_:][A-Za-z0-9_:]*(?=\s*(\(?))/g)) {
    const [name] = match;
    const callsSomething = match[1] === "(";
    if (callsSomething || KEYWORDS.has(name.toLowerCase())) continue;
    if (/^\d/.test(name)) continue;
    names.add(name);
  }
  return [...names].sort();
}

/** Every series name the function runtime and the connector expose on /metrics. */
export async function exportedMetricNames(): Promise<Set<string>> {
  const runtime = new RuntimeMetrics({ defaultMetrics: true });
  const connector = createMetrics(() => ({ waiting: 0, delayedKeys: 0, inFlight: 0 }), true);
  const names = new Set<string>();
  for (const registry of [runtime.registry, connector.registry]) {
    for (const metric of await registry.getMetricsAsJSON()) {
      const { name } = metric;
      const type = String(metric.type);
      names.add(name);
      if (type === "histogram") for (const s of ["_bucket", "_sum", "_count"]) names.add(name + s);
      if (type === "summary") for (const s of ["_sum", "_count"]) names.add(name + s);
    }
  }
  return names;
}
