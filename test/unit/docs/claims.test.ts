// What the docs say about the code's own inventory, checked against the code: every ADR is listed
// in the README, the counts of functions the docs and stack.yml state are the catalog's and the
// connector's routes', and the webhook README states the generated configuration's webhooks.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse, parseAllDocuments } from "yaml";
import { FUNCTION_CATALOG } from "../../../functions/catalog.js";
import { POLICY } from "../../../shared/admission/verdict.js";
import { renderTable } from "../../../bench/lib/report.js";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const read = (relative: string): string => readFileSync(path.join(REPO_ROOT, relative), "utf8");

const NUMBER_WORDS = [
  "zero",
  "one",
  "two",
  "three",
  "four",
  "five",
  "six",
  "seven",
  "eight",
  "nine",
  "ten",
  "eleven",
  "twelve",
];

/** "four" or "4" -> 4; anything else NaN. */
function countOf(word: string): number {
  const index = NUMBER_WORDS.indexOf(word.toLowerCase());
  return index >= 0 ? index : /^\d+$/.test(word) ? Number(word) : NaN;
}

const COUNT = `(${NUMBER_WORDS.join("|")}|\\d+)`;

/**
 * Every "<count> <noun>" in `text`, optionally with one of `qualifiers` in between ("the seven
 * event functions") or only after "the" (`afterThe`), as [phrase, count]. A count followed by
 * "that" or "which" ("the two functions that apply rules") names a subset, and is left out.
 */
function statedCounts(
  text: string,
  noun: string,
  {
    qualifiers = [],
    afterThe = false,
  }: { qualifiers?: readonly string[]; afterThe?: boolean } = {},
): [string, number][] {
  const between = qualifiers.length > 0 ? `(?:(?:${qualifiers.join("|")})\\s+)?` : "";
  const the = afterThe ? "(?<=\\bthe\\s+)" : "";
  const pattern = new RegExp(
    `${the}\\b${COUNT}\\s+${between}${noun}\\b(?!\\s+(?:that|which)\\b)`,
    "gi",
  );
  return [...text.matchAll(pattern)].map((m) => [m[0].replace(/\\s+/g, " "), countOf(m[1] ?? "")]);
}

const markdownUnder = (folder: string, only?: string): string[] =>
  readdirSync(path.join(REPO_ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((f) => (only === undefined ? f.endsWith(".md") : path.basename(f) === only))
    .map((f) => path.join(folder, f))
    .sort();

const yamlUnder = (folder: string): string[] =>
  readdirSync(path.join(REPO_ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".yaml") || f.endsWith(".yml"))
    .map((f) => path.join(folder, f))
    .sort();

/** Comment lines of a YAML file, where its prose is. */
const yamlComments = (text: string): string =>
  text
    .split("\n")
    .map((line) => /#\s?(.*)$/.exec(line)?.[1] ?? "")
    .join("\n");

const FUNCTIONS = FUNCTION_CATALOG.map((f) => f.name);

const connectorRoutes = (): string[] =>
  (parse(read("manifests/connector/config.yaml")) as { routes: { name: string }[] }).routes.map(
    (r) => r.name,
  );

describe("the helpers", () => {
  it("find stated counts, with qualifiers, and leave out counts of a named subset", () => {
    const text =
      "The four functions from one image; the 7 event functions; the two functions that apply " +
      "rules; nine functions. Two webhooks.";
    expect(statedCounts(text, "functions", { qualifiers: ["event"] })).toEqual([
      ["four functions", 4],
      ["7 event functions", 7],
      ["nine functions", 9],
    ]);
    expect(statedCounts(text, "functions", { afterThe: true })).toEqual([["four functions", 4]]);
    expect(statedCounts(text, "webhooks")).toEqual([["Two webhooks", 2]]);
  });
});

describe("ADRs", () => {
  const adrs = readdirSync(path.join(REPO_ROOT, "docs/adr"))
    .filter((f) => /^\d{4}-.*\.md$/.test(f))
    .sort();

  it("are each linked from the README", () => {
    const readme = read("README.md");
    expect(adrs.filter((adr) => !readme.includes(`](docs/adr/${adr})`))).toEqual([]);
  });

  it("are numbered one after another from 0001", () => {
    expect(adrs.map((f) => f.slice(0, 4))).toEqual(
      adrs.map((_, i) => String(i + 1).padStart(4, "0")),
    );
  });
});

describe("bench numbers", () => {
  const benchHeader = renderTable([]).split("\n")[0] ?? "";
  /** Header rows of Markdown tables: a line of cells followed by a delimiter line. */
  const tableHeaders = (text: string): string[] =>
    [...text.matchAll(/^(\|.*\|)\n\|(?:\s*:?-{3,}:?\s*\|)+\s*$/gm)].map((m) => m[1] ?? "");
  const cells = (row: string): string[] =>
    row
      .split("|")
      .slice(1, -1)
      .map((c) => c.trim());

  it("docs/benchmarks.md holds one table of bench rows, the latest run's", () => {
    expect(benchHeader).toBe("| metric | target | measured | requests that explain it | result |");
    expect(tableHeaders(read("docs/benchmarks.md")).filter((h) => h === benchHeader)).toHaveLength(
      1,
    );
  });

  // Other docs link to that table rather than keep numbers of their own against the targets.
  const others = [
    "README.md",
    ...markdownUnder("docs").filter((f) => f !== path.join("docs", "benchmarks.md")),
    ...markdownUnder("manifests", "README.md"),
    ...markdownUnder("dev", "README.md"),
  ];
  it.each(others)("%s holds no table of bench targets", (file) => {
    expect(tableHeaders(read(file)).filter((h) => cells(h).includes("target"))).toEqual([]);
  });
});

describe("function counts", () => {
  it("stack.yml states the catalog's count and declares every function of it", () => {
    const text = read("stack.yml");
    const stated = statedCounts(yamlComments(text), "functions");
    expect(stated.length).toBeGreaterThan(0);
    for (const [phrase, count] of stated)
      expect([phrase, count]).toEqual([phrase, FUNCTIONS.length]);
    const declared = Object.keys((parse(text) as { functions: object }).functions);
    expect(declared.sort()).toEqual([...FUNCTIONS].sort());
  });

  it("docs/connector.md states the number of routes its example configuration has", () => {
    const routes = connectorRoutes();
    const stated = statedCounts(read("docs/connector.md"), "functions", { qualifiers: ["event"] });
    expect(stated.length).toBeGreaterThan(0);
    for (const [phrase, count] of stated) expect([phrase, count]).toEqual([phrase, routes.length]);
    // Each route is a function of the catalog.
    expect(routes.filter((r) => !FUNCTIONS.includes(r))).toEqual([]);
  });

  // "the <count> functions", unqualified, means all of them, wherever it is said.
  const files = [
    "README.md",
    ...markdownUnder("docs"),
    ...markdownUnder("manifests", "README.md"),
    ...markdownUnder("dev", "README.md"),
    ...yamlUnder("manifests"),
  ];
  it.each(files)("%s says 'the <N> functions' only with the catalog's count", (file) => {
    const text = file.endsWith(".md") ? read(file) : yamlComments(read(file));
    for (const [phrase, count] of statedCounts(text, "functions", { afterThe: true }))
      expect([phrase, count]).toEqual([phrase, FUNCTIONS.length]);
  });
});

describe("the webhook README", () => {
  const configuration = parseAllDocuments(
    read("manifests/webhook/validating-webhook-configuration.yaml"),
  )
    .map((d) => d.toJS() as { kind?: string; webhooks?: { name: string }[] } | null)
    .find((d) => d?.kind === "ValidatingWebhookConfiguration");
  const webhooks = (configuration?.webhooks ?? []).map((w) => w.name);
  const readme = read("manifests/webhook/README.md");

  it("states the generated configuration's number of webhooks", () => {
    expect(webhooks.length).toBeGreaterThan(0);
    const stated = statedCounts(readme, "webhooks");
    expect(stated.length).toBeGreaterThan(0);
    for (const [phrase, count] of stated)
      expect([phrase, count]).toEqual([phrase, webhooks.length]);
  });

  it("describes each of them by name", () => {
    expect(webhooks.filter((name) => !readme.includes(`\`${name}\``))).toEqual([]);
  });

  it("patches a caBundle into each of them in the by-hand certificate recipe", () => {
    const patched = [...readme.matchAll(/\/webhooks\/(\d+)\/clientConfig\/caBundle/g)].map((m) =>
      Number(m[1]),
    );
    expect(patched).toEqual(webhooks.map((_, i) => i));
  });

  it("lists every admission policy", () => {
    const listed = Object.values(POLICY).filter((name) => readme.includes(`| \`${name}\` |`));
    expect(listed).toEqual(Object.values(POLICY));
  });
});
