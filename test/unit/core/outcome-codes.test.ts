// The catalogue of outcome codes (OUTCOME_CODES): one spelling per case, each one used.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { malformed, OUTCOME_CODES, permanent } from "../../../shared/core/outcome.js";

const CODES = Object.keys(OUTCOME_CODES);

/** Every TypeScript source under shared/, but the catalogue itself. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith(".ts") && path !== join("shared", "core", "outcome.ts")
      ? [readFileSync(path, "utf8")]
      : [];
  });
}

describe("the outcome code catalogue", () => {
  it("spells every code in PascalCase, like the condition reason it becomes", () => {
    expect(CODES.filter((code) => !/^[A-Z][A-Za-z]+$/.test(code))).toEqual([]);
  });

  it("has one spelling per case: no two codes differ only in case or separators", () => {
    const folded = CODES.map((code) => code.toLowerCase().replace(/[-_]/g, ""));
    expect(new Set(folded).size).toBe(CODES.length);
  });

  it("says what each code means", () => {
    expect(Object.values(OUTCOME_CODES).filter((meaning) => meaning.length < 10)).toEqual([]);
  });

  it("holds no code that shared/ never spells", () => {
    const text = sources("shared").join("\n");
    expect(CODES.filter((code) => !text.includes(`"${code}"`))).toEqual([]);
  });

  it("is closed: another spelling of a case fails the type check", () => {
    // @ts-expect-error "unsupported-kind" is UnknownKind's old ClusterLink spelling.
    expect(malformed("unsupported-kind", "x").kind).toBe("malformed");
    // @ts-expect-error "invalid" is no code: the API server's refusal is Rejected.
    expect(permanent("invalid", "x").kind).toBe("permanent");
  });
});
