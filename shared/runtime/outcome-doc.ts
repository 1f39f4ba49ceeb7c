/**
 * The reply tables of docs/events.md, rendered from OUTCOME_TABLE, OUTCOME_CODES and
 * INTAKE_ERROR_STATUS so the
 * docs cannot drift: test/unit/runtime/events-doc.test.ts fails when that file differs.
 */
import { INTAKE_ERROR_STATUS } from "../events/errors.js";
import { OUTCOME_CODES, OUTCOME_TABLE, type OutcomeKind } from "../core/outcome.js";
import { BATCH_SEVERITY_ORDER } from "./reply.js";

const OUTCOME_MEANING: Readonly<Record<OutcomeKind, string>> = {
  done: "done, or nothing to do",
  retry: "try again later (CNF/API error, a dependency not there yet, conflict storm)",
  permanent: "the object can never be applied as it is",
  malformed: "the event is unusable (decided by the function)",
};

const OUTCOME_HEADERS: Readonly<Record<OutcomeKind, string>> = {
  done: "`X-Sdewan-Reason` (the result)",
  retry: "`Retry-After`, `X-Sdewan-Reason`",
  permanent: "`X-Sdewan-Code`, `X-Sdewan-Reason`",
  malformed: "`X-Sdewan-Code`, `X-Sdewan-Reason`",
};

export function renderOutcomeTable(): string {
  const rows = (Object.keys(OUTCOME_TABLE) as OutcomeKind[]).map((kind) => {
    const reply = OUTCOME_TABLE[kind];
    return [
      `\`${kind}\``,
      OUTCOME_MEANING[kind],
      String(reply.httpStatus),
      OUTCOME_HEADERS[kind],
      reply.condition ?? "-",
      reply.redelivered ? "yes" : "no",
    ];
  });
  const handlerThrew = [
    "(handler threw)",
    "a bug or an unexpected failure",
    "500",
    "`X-Sdewan-Error-Id`",
    "-",
    "by a Broker (5xx)",
  ];
  return table(
    ["`X-Sdewan-Outcome`", "meaning", "HTTP", "other headers", "status condition", "redelivered"],
    [...rows, handlerThrew],
  );
}

/** The catalogue of codes a permanent or malformed outcome carries (`X-Sdewan-Code`). */
export function renderOutcomeCodeTable(): string {
  const rows = Object.entries(OUTCOME_CODES).map(([code, meaning]) => [`\`${code}\``, meaning]);
  return table(["`X-Sdewan-Code`", "meaning"], rows);
}

export function renderIntakeErrorTable(): string {
  const rows = Object.entries(INTAKE_ERROR_STATUS).map(([code, status]) => [
    `\`${code}\``,
    String(status),
  ]);
  return table(["`X-Sdewan-Code`", "HTTP"], rows);
}

/** "error > retry > permanent > ..." as docs/events.md states the batch rule. */
export const renderBatchOrder = (): string =>
  BATCH_SEVERITY_ORDER.map((label) => `\`${label}\``).join(" > ");

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]): string => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}
