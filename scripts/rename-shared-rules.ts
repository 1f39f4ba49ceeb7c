/**
 * One-off (issue 29 §4): `npx tsx scripts/rename-shared-rules.ts` moves shared/rules, which holds
 * every family's schemas and CRDs, to shared/kinds, the CNF rule kinds to shared/kinds/rules, and
 * test/unit/rules to test/unit/kinds; rewrites every relative import and every path named in
 * code, comments and docs; keeps generated manifests byte-identical; then removes itself. Run it
 * on a clean tree (it commits nothing) and check: tsc, lint, lint:deps, test:unit.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path/posix";

const SELF = "scripts/rename-shared-rules.ts";

/** Old path (a file or a folder) -> new path; the first rule that matches wins. */
const MOVES: readonly (readonly [RegExp, string])[] = [
  [/^shared\/rules\/kinds(?=\/|$)/, "shared/kinds/rules"],
  [/^shared\/rules\/(egress|netpol|clusterlink)-kinds(?=\.[jt]s$)/, "shared/kinds/$1"],
  [/^shared\/rules\/crd(?=\.[jt]s$)/, "shared/kinds/crds"],
  [/^shared\/rules(?=\/|$)/, "shared/kinds"],
  [/^test\/unit\/rules\/egress-kinds(?=\.test\.ts$)/, "test/unit/kinds/egress"],
  [/^test\/unit\/rules\/crd(?=\.test\.ts$)/, "test/unit/kinds/crds"],
  [/^test\/unit\/rules(?=\/|$)/, "test/unit/kinds"],
];

export function movedPath(p: string): string {
  for (const [from, to] of MOVES) if (from.test(p)) return p.replace(from, to);
  return p;
}

/** Exact edits the path rules cannot make; a missing one is reported, not fatal. */
const EDITS: readonly (readonly [string, string, string])[] = [
  [
    ".dependency-cruiser.cjs",
    'const BUILDING_BLOCKS = "(rules|kube|cnf|events)";',
    'const BUILDING_BLOCKS = "(kinds|kube|cnf|events)";',
  ],
  [".dependency-cruiser.cjs", "shared/{rules,kube,cnf,events}", "shared/{kinds,kube,cnf,events}"],
  [
    ".dependency-cruiser.cjs",
    '"rules, kube, cnf and events sit',
    '"kinds, kube, cnf and events sit',
  ],
  ["README.md", "rules, kube, cnf, events ", "kinds, kube, cnf, events "],
  [
    "README.md",
    "`rules/` the registry of the rule kinds",
    "`kinds/` the schemas and CRDs of every kind (the rule\n  kind registry; the CNF rule kinds in `kinds/rules/`)",
  ],
  [
    "shared/kinds/index.ts",
    ` * shared/kinds: the one registry of SDEWAN rule kinds (batch.sdewan.akraino.org/v1alpha1): per
 * kind, as data and pure functions, its schemas, names, finalizer, CNF collection and service,
 * references and apply order, CR -> CNF conversion and comparison. Also the Egress, EgressGroup,
 * netpol and ClusterLink schemas and every CRD generated from them (crds.ts). No I/O: callers read
 * objects, then ask the registry what they mean. Example: docs/code-notes.md (shared/kinds).
`,
    ` * shared/kinds: the schema of every kind we define or read, and the CRDs generated from them
 * (crds.ts, converted by structural-schema.ts): Egress and EgressGroup (egress.ts), the netpol
 * tables (netpol.ts), ClusterLink (clusterlink.ts), and the one registry of SDEWAN rule kinds
 * (batch.sdewan.akraino.org/v1alpha1; registry.ts, each kind in rules/): per kind, as data and
 * pure functions, its schemas, names, finalizer, CNF collection and service, references and
 * apply order, CR -> CNF conversion and comparison. No I/O: callers read objects, then ask
 * what they mean. Example: docs/code-notes.md (shared/kinds).
`,
  ],
];

const git = (...args: string[]): string => execFileSync("git", args, { encoding: "utf8" });

const SOURCE = /\.(ts|mts|cts|js|mjs|cjs)$/;
const SPECIFIER =
  /((?:\bfrom|\bimport|\brequire|\bunstable_mockModule)\s*\(?\s*)(["'])(\.\.?\/[^"']+)\2/g;

/** A relative specifier of `file` (old path) as it must read once both may have moved. */
function rewriteSpecifier(file: string, spec: string): string {
  const target = path.normalize(path.join(path.dirname(file), spec));
  const movedTarget = movedPath(target);
  const movedFile = movedPath(file);
  if (movedTarget === target && movedFile === file) return spec;
  const rel = path.relative(path.dirname(movedFile), movedTarget);
  return rel.startsWith(".") ? rel : `./${rel}`;
}

/** Paths in prose and strings (also after ../): shared/rules/... and test/unit/rules/... */
const NAMED_PATH = /(?<![\w.-])(?<![\w-]\/)(shared\/rules|test\/unit\/rules)((?:\/[\w.*<>-]*)*)/g;
const BARE_NAMES: readonly (readonly [RegExp, string])[] = [
  [/(?<![\w/.-])(egress|netpol|clusterlink)-kinds\.(ts|js)\b/g, "$1.$2"],
  [/(?<![\w/.-])crd\.(ts|js)\b/g, "crds.$1"],
];

function renamePaths(line: string): string {
  if (line.includes("Do not edit")) return line; // copied into generated manifests
  let out = line.replace(NAMED_PATH, (match: string) => {
    const trail = /[.]+$/.exec(match)?.[0] ?? "";
    return movedPath(match.slice(0, match.length - trail.length)) + trail;
  });
  for (const [from, to] of BARE_NAMES) out = out.replace(from, to);
  return out;
}

const tracked = (): string[] =>
  git("ls-files", "-z")
    .split("\0")
    .filter((f) => f !== "" && existsSync(f));

/** 1. Imports, read at the old paths, written for the new ones. */
function rewriteImports(files: readonly string[], changed: Set<string>): void {
  for (const file of files.filter((f) => SOURCE.test(f) && f !== SELF)) {
    const text = readFileSync(file, "utf8");
    const next = text.replace(
      SPECIFIER,
      (_m, lead: string, q: string, spec: string) =>
        `${lead}${q}${rewriteSpecifier(file, spec)}${q}`,
    );
    if (next === text) continue;
    writeFileSync(file, next);
    changed.add(file);
  }
}

/** 3. Paths named in code, comments, docs and configuration (never in manifests/). */
function renameNamedPaths(changed: Set<string>): void {
  for (const file of tracked()) {
    if (file === SELF || file.startsWith("manifests/") || file === "package-lock.json") continue;
    const text = readFileSync(file, "utf8");
    if (text.includes("\0")) continue;
    const next = text.split("\n").map(renamePaths).join("\n");
    if (next === text) continue;
    writeFileSync(file, next);
    changed.add(file);
  }
  for (const [file, from, to] of EDITS) {
    const text = existsSync(file) ? readFileSync(file, "utf8") : "";
    if (!text.includes(from)) console.warn(`not found, edit by hand: ${file}: ${from}`);
    else writeFileSync(file, text.replace(from, to));
  }
}

function main(): void {
  if (git("status", "--porcelain", "--untracked-files=no").trim() !== "")
    throw new Error("the work tree is not clean");
  const files = tracked();
  const moves = files.filter((f) => movedPath(f) !== f);
  if (!moves.some((f) => f.startsWith("shared/rules/"))) throw new Error("no shared/rules here");
  const changed = new Set<string>();
  rewriteImports(files, changed);
  for (const file of moves) {
    mkdirSync(path.dirname(movedPath(file)), { recursive: true });
    git("mv", file, movedPath(file));
  }
  renameNamedPaths(changed);
  // 4. Format, regenerate, prove the manifests unchanged; then this script goes.
  const formatted = [...changed].map(movedPath).filter((f) => SOURCE.test(f) && existsSync(f));
  execFileSync("npx", ["prettier", "--write", "--log-level", "warn", ...formatted], {
    stdio: "inherit",
  });
  execFileSync("npm", ["run", "--silent", "gen:manifests"], { stdio: "inherit" });
  git("diff", "--exit-code", "--stat", "--", "manifests");
  git("rm", "-q", SELF);
  git("add", "-u");
  console.log(`moved ${moves.length} files; rewrote ${changed.size}; manifests unchanged`);
}

main();
