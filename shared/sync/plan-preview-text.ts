/**
 * A preview as text: admission warnings for `kubectl apply --dry-run=server` (short lines within
 * the API server's warning budget) and the table `npm run plan` prints. Pure.
 *
 * Warning limits (k8s.io/api admission/v1 types.go, k8s.io/apiserver filters/warning.go): a
 * warning should stay within 120 characters; the total budget is the caller's (the API server
 * keeps 4096 runes of one request's warnings, shared/admission/verdict.ts). A warning with a
 * control character (a newline) is dropped by the API server, and equal texts are shown once (by
 * the API server per request, by kubectl per invocation): every line names its rule and pod.
 */
import { compareStrings } from "../core/order.js";
import type { CnfPlan, PreviewReport, RulePlan, RulePodPlan, Skipped } from "./plan-preview.js";

/** What kubectl shows well on one line (admission/v1 AdmissionResponse.warnings). */
export const WARNING_LINE_CHARS = 120;

const runes = (text: string): number => [...text].length;

/** `text` on one line of at most `max` characters (an ellipsis marks a cut). */
export function oneLine(text: string, max: number): string {
  const flat = text.replace(/\p{Cc}+/gu, " ");
  const chars = [...flat];
  return chars.length <= max ? flat : `${chars.slice(0, max - 1).join("")}…`;
}

/** "A a, B b and 3 more", as much as fits in `room` characters. */
function listWithin(items: readonly string[], room: number): string {
  let shown = "";
  for (let i = 0; i < items.length; i += 1) {
    const rest = items.length - i - 1;
    const next = shown === "" ? (items[i] ?? "") : `${shown}, ${items[i] ?? ""}`;
    const tail = rest > 0 ? ` and ${rest} more` : "";
    if (runes(next) + tail.length > room && shown !== "") {
      return `${shown} and ${items.length - i} more`;
    }
    shown = next;
  }
  return shown;
}

const requestText = (step: Extract<RulePodPlan, { requests: unknown }>): string =>
  step.requests.map((r) => `${r.method} ${r.collection}/${r.name}`).join(", ");

/** What one rule does on one pod, in words. */
export function podStepText(step: RulePodPlan): string {
  if (step.change === "unknown") return `unknown: ${step.reason}`;
  if (step.change === "none") {
    return step.restart === null ? "no change" : `no change; restart ${step.restart} if still owed`;
  }
  const fields = step.fields.length > 0 ? ` [${step.fields.join(", ")}]` : "";
  // Who uses it is on the rule's own "affects" line.
  const refused = step.refusedWhileUsedBy === undefined ? "" : " refused: in use";
  const restart = step.restart === null ? "" : `; restart ${step.restart}`;
  const unsure = step.unsure === undefined ? "" : ` (maybe not: ${step.unsure})`;
  return `${requestText(step)}${fields}${refused}${restart}${unsure}`;
}

function cnfText(cnf: CnfPlan): string {
  if (cnf.withheld !== undefined) return "";
  if (cnf.deployment === undefined) return "";
  return ` on CNF ${cnf.deployment} (${cnf.readyPods}/${cnf.expectedPods} pods ready)`;
}

/** The lines of one rule's plan, each naming the rule (kubectl shows equal warnings once). */
export function ruleLines(cnf: CnfPlan, rule: RulePlan, max = WARNING_LINE_CHARS): string[] {
  const who = `plan ${rule.kind} ${rule.name}:`;
  const lines = [`${who} ${rule.action}${cnfText(cnf)}`];
  if (cnf.withheld !== undefined) lines.push(`${who} no CNF state: ${cnf.withheld}`);
  if (rule.problem !== undefined) lines.push(`${who} no CNF request: ${rule.problem.message}`);
  for (const step of rule.pods) lines.push(`${who} pod ${step.pod}: ${podStepText(step)}`);
  if (rule.dependents.length > 0) {
    const head = `${who} affects ${rule.dependents.length} rule(s) using it: `;
    lines.push(`${head}${listWithin(rule.dependents, max - runes(head))}`);
  }
  return lines.map((line) => oneLine(line, max));
}

const skippedLine = (s: Skipped): string => `plan ${s.kind} ${s.name}: ${s.why}`;

/**
 * The preview as admission warnings within `budget` runes in total: lines in plan order, and
 * when they do not all fit, a last line saying how many were left out and where to see them.
 */
export function planWarnings(report: PreviewReport, budget: number): string[] {
  const lines = [
    ...report.skipped.map((s) => oneLine(skippedLine(s), WARNING_LINE_CHARS)),
    ...report.cnfs.flatMap((cnf) => cnf.rules.flatMap((rule) => ruleLines(cnf, rule))),
  ];
  const unique = [...new Set(lines)];
  const more = (left: number): string =>
    `plan: ${left} more line(s) not shown; npm run plan -- -f <file> prints the whole plan`;
  const shown: string[] = [];
  let used = 0;
  for (const [i, line] of unique.entries()) {
    const left = unique.length - i - 1;
    const reserve = left > 0 ? runes(more(left)) : 0;
    if (used + runes(line) + reserve > budget) {
      const note = more(unique.length - i);
      return used + runes(note) <= budget ? [...shown, note] : shown;
    }
    shown.push(line);
    used += runes(line);
  }
  return shown;
}

/** Columns padded to their widest cell, separated by two spaces. */
function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = [];
  for (const row of rows)
    row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, runes(cell))));
  return rows.map((row) =>
    row
      .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join("  ")
      .trimEnd(),
  );
}

function ruleRows(rule: RulePlan): string[][] {
  const name = `${rule.kind} ${rule.name}`;
  const object = rule.object === undefined ? "-" : `${rule.object.collection}/${rule.object.name}`;
  if (rule.pods.length === 0) {
    const why = rule.problem?.message ?? "-";
    return [[name, rule.action, "-", "-", object, "-", why]];
  }
  return rule.pods.map((step, i) => {
    const first = i === 0;
    const cells = first ? [name, rule.action] : ["", ""];
    if (step.change === "unknown") return [...cells, step.pod, "unknown", "-", "-", step.reason];
    if (step.change === "none") {
      const owed = step.restart === null ? "" : "restart only if still owed (ADR 0007)";
      return [...cells, step.pod, "none", "-", step.restart ?? "-", owed];
    }
    const note = [
      step.fields.length > 0 ? `fields: ${step.fields.join(", ")}` : "",
      step.refusedWhileUsedBy === undefined
        ? ""
        : `refused while used by ${step.refusedWhileUsedBy.join(", ")}`,
      step.unsure === undefined ? "" : `maybe not: ${step.unsure}`,
    ].filter((n) => n !== "");
    return [
      ...cells,
      step.pod,
      step.change,
      requestText(step),
      step.restart ?? "-",
      note.join("; "),
    ];
  });
}

function cnfHeader(cnf: CnfPlan): string {
  const where = `CNF ${cnf.namespace}/${cnf.purpose}`;
  if (cnf.withheld !== undefined) return `${where}: no CNF state: ${cnf.withheld}`;
  if (cnf.deployment === undefined) return `${where}: no CNF Deployment`;
  return `${where}: Deployment ${cnf.deployment}, ${cnf.readyPods}/${cnf.expectedPods} pods ready`;
}

function burstLine(cnf: CnfPlan, pacing: string): string | undefined {
  const perPod = cnf.pods.map((pod) => {
    const services = Object.entries(pod.restarts)
      .sort(([a], [b]) => compareStrings(a, b))
      .map(([service, n]) => `${service} x${n}`);
    return `${pod.pod}: ${services.length === 0 ? "none" : services.join(", ")}`;
  });
  if (perPod.length === 0) return undefined;
  return `restarts of the whole change as one burst, at most (${pacing}): ${perPod.join("; ")}`;
}

/** The preview as `npm run plan` prints it: per CNF a table of rules and pods, then restarts. */
export function planTable(report: PreviewReport, pacing: string): string {
  const out: string[] = [];
  for (const cnf of report.cnfs) {
    out.push(cnfHeader(cnf));
    const header = ["RULE", "ACTION", "POD", "CHANGE", "REQUESTS", "RESTART", "NOTE"];
    out.push(...table([header, ...cnf.rules.flatMap(ruleRows)]).map((l) => `  ${l}`));
    for (const rule of cnf.rules) {
      if (rule.dependents.length > 0) {
        out.push(`  ${rule.kind} ${rule.name} is used by: ${rule.dependents.join(", ")}`);
      }
    }
    const burst = burstLine(cnf, pacing);
    if (burst !== undefined) out.push(`  ${burst}`);
    out.push("");
  }
  for (const s of report.skipped) out.push(`${s.kind} ${s.namespace}/${s.name}: ${s.why}`);
  return `${out.join("\n").trimEnd()}\n`;
}
