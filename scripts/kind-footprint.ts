/**
 * Which files a new rule kind needs (`npm run kinds:footprint`; `--check` exits 1 on a problem).
 * Scans the work tree for the names and plurals of the registry's kinds and sorts each file
 * that names one into what a kind legitimately touches: its own file, the registry, generated
 * manifests, its sample, tests that demand a case per kind, and files that name a kind or two
 * as an example. A problem is a file outside those that names many kinds (a list kept by hand
 * that a new kind would miss), or product code outside shared/kinds naming a kind at all.
 * test/unit/kinds/new-kind-footprint.test.ts runs the same analysis.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ALL_RULE_KINDS, type RuleKindEntry } from "../shared/kinds/index.js";
import { GENERATED, GENERATE_COMMAND } from "./manifests/index.js";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** Where a file that names rule kinds stands with respect to adding a kind. */
export type FootprintRole =
  | "kind-file" // shared/kinds/rules/*: the kind's own file (a new kind adds one)
  | "registry" // the registry's lists (a new kind adds one line to each)
  | "generated" // written by `npm run gen:manifests`
  | "sample" // manifests/samples: one sample file per kind
  | "per-kind-test" // tests that demand a case of every kind, by design
  | "case-table-test" // tests with hand-written cases for many kinds; a new kind may add one
  | "fixture" // fixed data from outside (the design's samples): never grows
  | "example" // names a few kinds as examples: a new kind does not touch it
  | "hand-list" // names many kinds outside the places above: a list a new kind would miss
  | "product-code"; // product code outside shared/kinds naming a kind: not allowed

/** The registry: a new kind adds itself to each of these. */
export const REGISTRY_FILES: Readonly<Record<string, string>> = {
  "shared/kinds/entry.ts": "RULE_KIND_NAMES, the kind's name (types every lookup)",
  "shared/kinds/registry.ts": "ENTRIES, the kind's entry",
  "shared/kinds/index.ts": "optional: the export of the kind's spec type",
};

/**
 * Tests that check every kind against a hand-written oracle, so a new kind must bring its case
 * (each fails until it does). Kept short on purpose: everything else derives from the registry.
 */
export const PER_KIND_TESTS: Readonly<Record<string, string>> = {
  "test/unit/kinds/to-cnf.test.ts": "the CNF body its CR converts to",
  "test/integration/reconcile-rule-kinds.test.ts": "an update and what each pod then holds",
  "test/fixtures/largest-rules.ts": "the largest spec the kind admits, and one character over",
};

/**
 * Tests whose hand-written cases name many kinds (each case an oracle for one kind's behaviour)
 * but require none: a new kind may add cases and breaks nothing here. Any other test that names
 * many kinds fails the footprint check until it derives its list or is reviewed into this list.
 */
export const CASE_TABLE_TESTS: Readonly<Record<string, string>> = {
  "test/unit/kinds/registry.test.ts": "upstream facts of the design's kinds",
  "test/unit/kinds/compare.test.ts": "changes the normalised comparison must see",
  "test/unit/kinds/samples.test.ts": "invalid specs the schemas refuse",
  "test/unit/admission/plan-admission.test.ts": "what each admission policy denies",
  "test/integration/admission-policies.test.ts": "the same policies through the API server",
  "test/unit/kinds/limits.test.ts": "bad values the schemas refuse, upstream values they keep",
  "test/integration/rule-limits.test.ts": "the same bad values, reaching the function unchecked",
  "test/unit/sync/plan-preview.test.ts": "what a dry run plans for rules of a few kinds",
};

/** Docs quoting a real output over manifests/samples: an example a new kind does not touch. */
export const SAMPLE_OUTPUTS: Readonly<Record<string, string>> = {
  "docs/plan.md": "`npm run plan` of manifests/samples, as it printed",
};

/** Fixed data from outside the project, which names the kinds of its time. */
export const FIXTURES: Readonly<Record<string, string>> = {
  "test/unit/kinds/fixtures/seed-samples.yaml": "the design's own samples",
};

/** Product code: outside shared/kinds it may name a kind only in comments. */
const PRODUCT_DIRS = ["shared/", "functions/", "connector/"];
// build/: faas-cli build's copies of the sources (stack.yml).
const SKIPPED_DIRS = new Set(["node_modules", ".git", "dist", "build", ".cluster", "coverage"]);
const TEXT_FILE = /\.(ts|js|json|ya?ml|md|sh|headers)$|(^|\/)Dockerfile$/;

export interface FileFootprint {
  readonly file: string;
  readonly role: FootprintRole;
  /** Kind names (not plurals) the file names, whole words. */
  readonly kinds: readonly string[];
}

/** Repository-relative paths of every text file of the work tree. */
export function workTreeFiles(root: string = REPO_ROOT): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(path.join(root, dir)).flatMap((name) => {
      if (SKIPPED_DIRS.has(name)) return [];
      const relative = dir === "" ? name : `${dir}/${name}`;
      if (statSync(path.join(root, relative)).isDirectory()) return walk(relative);
      return TEXT_FILE.test(relative) ? [relative] : [];
    });
  return walk("").sort();
}

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The kinds a text names: its kind name or its plural, as whole words. */
export function kindsNamed(
  text: string,
  kinds: readonly RuleKindEntry[] = ALL_RULE_KINDS,
): string[] {
  return kinds
    .filter((k) => new RegExp(`\\b(${escape(k.kind)}|${escape(k.plural)})\\b`).test(text))
    .map((k) => k.kind);
}

/** The text without comments: `// ...` to the end of the line, `/* ... *\/` and `# ...` lines. */
export function withoutComments(text: string): string {
  return text
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .replace(/(^|[^:"'`])\/\/.*$/gm, "$1")
    .replace(/^\s*#.*$/gm, "");
}

/** A file names "many" kinds from this many on: more than a couple of examples. */
export const manyKinds = (kindCount: number): number => Math.max(3, Math.ceil(kindCount / 2));

/** Roles a file has by where it is, whatever it names. */
const PLACES: readonly [(file: string) => boolean, FootprintRole][] = [
  [(file) => file.startsWith("shared/kinds/rules/"), "kind-file"],
  [(file) => file in REGISTRY_FILES, "registry"],
  [(file) => file.startsWith("manifests/samples/"), "sample"],
  [(file) => file in PER_KIND_TESTS, "per-kind-test"],
  [(file) => file in CASE_TABLE_TESTS, "case-table-test"],
  [(file) => file in FIXTURES, "fixture"],
  [(file) => file in SAMPLE_OUTPUTS, "example"],
];

const isProductCode = (file: string): boolean =>
  file.endsWith(".ts") &&
  PRODUCT_DIRS.some((dir) => file.startsWith(dir)) &&
  !file.startsWith("shared/kinds/");

export function roleOf(
  file: string,
  text: string,
  generated: ReadonlySet<string>,
  kinds: readonly RuleKindEntry[] = ALL_RULE_KINDS,
): FootprintRole {
  if (generated.has(file)) return "generated";
  const place = PLACES.find(([matches]) => matches(file));
  if (place !== undefined) return place[1];
  if (isProductCode(file) && kindsNamed(withoutComments(text), kinds).length > 0) {
    return "product-code";
  }
  return kindsNamed(text, kinds).length >= manyKinds(kinds.length) ? "hand-list" : "example";
}

/** Every file of `files` that names a rule kind, with its role. */
export function footprint(
  files: readonly string[],
  read: (file: string) => string,
  kinds: readonly RuleKindEntry[] = ALL_RULE_KINDS,
): FileFootprint[] {
  const generated = new Set(GENERATED.flatMap((set) => [...set.render().keys()]));
  return files.flatMap((file) => {
    const text = read(file);
    const named = kindsNamed(text, kinds);
    return named.length === 0
      ? []
      : [{ file, role: roleOf(file, text, generated, kinds), kinds: named }];
  });
}

/** What is wrong: files that keep kind lists by hand, product code naming kinds, stale lists. */
export function problems(
  found: readonly FileFootprint[],
  kinds: readonly RuleKindEntry[] = ALL_RULE_KINDS,
): string[] {
  const byFile = new Map(found.map((f) => [f.file, f]));
  return [
    ...found
      .filter((f) => f.role === "hand-list")
      .map(
        (f) => `${f.file} names ${f.kinds.length} rule kinds: derive the list from the registry`,
      ),
    ...found
      .filter((f) => f.role === "product-code")
      .map(
        (f) => `${f.file} names ${f.kinds.join(", ")} in code: look the kind up in the registry`,
      ),
    ...Object.keys(PER_KIND_TESTS)
      .filter((file) => (byFile.get(file)?.kinds.length ?? 0) < kinds.length)
      .map((file) => `${file} is listed as a per-kind test but does not cover every kind`),
    ...Object.keys(CASE_TABLE_TESTS)
      .filter((file) => (byFile.get(file)?.kinds.length ?? 0) < manyKinds(kinds.length))
      .map((file) => `${file} is listed as a case-table test but names few kinds: unlist it`),
  ];
}

/** The files a new rule kind needs, as a report. */
export function newKindReport(found: readonly FileFootprint[]): string {
  const of = (role: FootprintRole): string[] =>
    found.filter((f) => f.role === role).map((f) => f.file);
  const lines = [
    "A new rule kind needs:",
    "  its own file: shared/kinds/rules/<family>.ts (schemas, conversion, example)",
    ...Object.entries(REGISTRY_FILES).map(([file, what]) => `  ${file}: ${what}`),
    "  manifests/samples/<kind>.yaml: its sample (the sample tests require one per kind)",
    ...Object.entries(PER_KIND_TESTS).map(([file, what]) => `  ${file}: its case (${what})`),
    "  dev/cnf-sim/kinds.ts: only if it adds a CNF collection (the simulator is keyed by collection)",
    `then \`${GENERATE_COMMAND}\` rewrites: ${[...new Set(of("generated").map((f) => f.replace(/[^/]+$/, (n) => (f.startsWith("manifests/crds/") ? "*.yaml" : n))))].join(", ")}`,
    `Untouched by a new kind: ${of("case-table-test").length} tests with per-kind case tables (cases optional), ${of("example").length} files naming a kind or two as examples`,
  ];
  return lines.join("\n");
}

if (
  process.argv[1] !== undefined &&
  fileURLToPath(import.meta.url) === path.resolve(process.argv[1])
) {
  const found = footprint(workTreeFiles(), (file) =>
    readFileSync(path.join(REPO_ROOT, file), "utf8"),
  );
  console.log(newKindReport(found));
  const wrong = problems(found);
  if (wrong.length > 0) console.log(`\nProblems:\n${wrong.map((p) => `  ${p}`).join("\n")}`);
  if (process.argv.includes("--verbose")) {
    for (const f of found) console.log(`${f.role.padEnd(14)} ${f.file} (${f.kinds.length})`);
  }
  process.exitCode = process.argv.includes("--check") && wrong.length > 0 ? 1 : 0;
}
