import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  renderBatchOrder,
  renderIntakeErrorTable,
  renderOutcomeCodeTable,
  renderOutcomeTable,
} from "../../../shared/runtime/outcome-doc.js";
import { OUTCOME_TABLE } from "../../../shared/core/outcome.js";

// The reply tables live in docs/events.md, between `<!-- name:start -->` and `<!-- name:end -->`.
const DOC_FILE = "docs/events.md";
const DOC = readFileSync(
  join(dirname(fileURLToPath(import.meta.url)), "../../..", DOC_FILE),
  "utf8",
);

function section(marker: string): string {
  const match = new RegExp(`<!-- ${marker}:start -->\\n([\\s\\S]*?)\\n<!-- ${marker}:end -->`).exec(
    DOC,
  );
  if (match?.[1] === undefined) throw new Error(`${DOC_FILE} has no ${marker} section`);
  return match[1];
}

describe(`${DOC_FILE} and the code agree on replies`, () => {
  it.each([
    ["outcome-table", renderOutcomeTable],
    ["outcome-codes", renderOutcomeCodeTable],
    ["batch-order", renderBatchOrder],
    ["intake-table", renderIntakeErrorTable],
  ])(
    "the %s section is what the code renders (paste the expected text on failure)",
    (marker, render) => {
      expect(section(marker)).toBe(render());
    },
  );

  it("every OUTCOME_TABLE status appears in its row of the doc", () => {
    for (const [kind, reply] of Object.entries(OUTCOME_TABLE)) {
      expect(section("outcome-table")).toMatch(
        new RegExp(`\\| \`${kind}\` \\|[^\\n]*\\| ${reply.httpStatus} \\|`),
      );
    }
  });
});
