// A comment in shared/ or functions/ says why in a few lines; longer reasoning goes into
// docs/code-notes.md (by module) or an ADR, and the comment links it (CONTRIBUTING.md).
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** The most lines one comment may take, its delimiters included (a folder header: about a dozen). */
const MAX_COMMENT_LINES = 12;

interface Comment {
  readonly line: number;
  readonly lines: number;
}

/**
 * The comments of a source text that start a line: a block comment from the line that opens it
 * to the line that closes it, or a run of `//` lines (so an essay cannot hide as line comments).
 */
function commentsOf(text: string): Comment[] {
  const lines = text.split("\n");
  const found: Comment[] = [];
  for (let i = 0; i < lines.length; i++) {
    const start = (lines[i] ?? "").trimStart();
    let end = i;
    if (start.startsWith("/*")) {
      while (end < lines.length - 1 && !(lines[end] ?? "").includes("*/")) end++;
    } else if (start.startsWith("//")) {
      while ((lines[end + 1] ?? "").trimStart().startsWith("//")) end++;
    } else continue;
    found.push({ line: i + 1, lines: end - i + 1 });
    i = end;
  }
  return found;
}

function sourcesUnder(folder: string): string[] {
  return readdirSync(path.join(REPO_ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts") && !f.split(path.sep).includes("node_modules"))
    .map((f) => path.join(folder, f))
    .sort();
}

describe("the comment counter", () => {
  it("counts block comments with their delimiters and runs of line comments", () => {
    const text = [
      "/**",
      " * A header.",
      " */",
      "const a = 1; /* trailing, not counted */",
      "  // one",
      "  // two",
      "",
      "// three",
      "/* one line */",
    ].join("\n");
    expect(commentsOf(text)).toEqual([
      { line: 1, lines: 3 },
      { line: 5, lines: 2 },
      { line: 8, lines: 1 },
      { line: 9, lines: 1 },
    ]);
  });
});

describe("comments in shared/ and functions/", () => {
  it(`take at most ${MAX_COMMENT_LINES} lines each; longer reasoning lives in docs/`, () => {
    const tooLong = ["shared", "functions"].flatMap(sourcesUnder).flatMap((file) =>
      commentsOf(readFileSync(path.join(REPO_ROOT, file), "utf8"))
        .filter((c) => c.lines > MAX_COMMENT_LINES)
        .map((c) => `${file}:${c.line}: ${c.lines} lines (move the reasoning to docs/)`),
    );
    expect(tooLong).toEqual([]);
  });
});
