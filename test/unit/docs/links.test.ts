// Every relative link in README.md, CONTRIBUTING.md, docs/**/*.md and the READMEs under
// manifests/ and dev/ points at a file or folder that exists, a link to a heading of a Markdown
// file (`other.md#section`, `#section`) names a real heading, and every repository path they
// cite in a code span (`shared/...`, `test/...`, `dev/...`, ...) is in the repository.
import { existsSync, globSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

const markdownUnder = (folder: string, only?: string): string[] =>
  readdirSync(path.join(REPO_ROOT, folder), { recursive: true, encoding: "utf8" })
    .filter((f) => (only === undefined ? f.endsWith(".md") : path.basename(f) === only))
    .map((f) => path.join(folder, f))
    .sort();

const MARKDOWN_FILES = [
  "README.md",
  "CONTRIBUTING.md",
  ...markdownUnder("docs"),
  ...markdownUnder("manifests", "README.md"),
  ...markdownUnder("dev", "README.md"),
];

function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** The text without fenced code blocks and code spans, where `[x](y)` is not a link. */
function prose(markdown: string): string {
  return withoutFences(markdown).replace(/`[^`\n]*`/g, "");
}

/** Targets of inline links, images and reference definitions, in order. */
function linkTargets(markdown: string): string[] {
  const text = prose(markdown);
  const inline = [...text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)];
  const references = [...text.matchAll(/^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?/gm)];
  return [...inline, ...references].map((m) => m[1] ?? "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .replace(/`/g, "")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .trim()
    .replace(/\s/g, "-");
}

function anchorsOf(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const match of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = slug(match[1] ?? "");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** What is wrong with each relative link of `file` (a path relative to the repository). */
function brokenLinks(file: string): string[] {
  const markdown = readFileSync(path.join(REPO_ROOT, file), "utf8");
  const broken: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:, ...
    const [rawPath = "", anchor] = target.split("#", 2);
    const linked = decodeURIComponent(rawPath.split("?")[0] ?? "");
    const resolved =
      linked === ""
        ? path.join(REPO_ROOT, file)
        : linked.startsWith("/")
          ? path.join(REPO_ROOT, linked)
          : path.resolve(path.dirname(path.join(REPO_ROOT, file)), linked);
    if (!resolved.startsWith(REPO_ROOT) || !existsSync(resolved)) {
      broken.push(`${target}: no such file`);
      continue;
    }
    if (anchor === undefined || !resolved.endsWith(".md") || statSync(resolved).isDirectory())
      continue;
    if (!anchorsOf(readFileSync(resolved, "utf8")).has(anchor))
      broken.push(`${target}: no heading #${anchor}`);
  }
  return broken;
}

/**
 * Top-level folders of this repository that docs cite by path. `reference/` and `seeds/` are the
 * team's folder next to the repository, which a reader of the repository does not have: citing
 * them is citing a file that is not here.
 */
const CITED_ROOTS = [
  "shared",
  "test",
  "dev",
  "functions",
  "bench",
  "scripts",
  "manifests",
  "connector",
  "docs",
  "template",
  "reference",
  "seeds",
];
const CITATION = new RegExp(`^(?:\\./)?((?:${CITED_ROOTS.join("|")})/[^\\s]*)$`);

/** Repository paths in code spans (`shared/kube/client.ts:53`), without line numbers or anchors. */
function citedPaths(markdown: string): string[] {
  const cited: string[] = [];
  for (const span of withoutFences(markdown).matchAll(/`([^`\n]+)`/g)) {
    const found = CITATION.exec((span[1] ?? "").trim());
    if (found?.[1] === undefined) continue;
    const target = found[1].replace(/#.*$/, "").replace(/:\d+(?:-\d+)?(?:,\d+(?:-\d+)?)*$/, "");
    if (/[<>{}]/.test(target)) continue; // a pattern such as functions/<name>/index.ts
    cited.push(target);
  }
  return cited;
}

/** Files the repository makes but does not keep (.gitignore lines that name one file). */
const IGNORED_FILES = new Set(
  readFileSync(path.join(REPO_ROOT, ".gitignore"), "utf8")
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#")),
);

/** Whether a cited path (a file, a folder, a glob, or a fixture named without its extensions) exists. */
function citationExists(cited: string): boolean {
  if (IGNORED_FILES.has(cited)) return true;
  if (cited.includes("*")) return globSync(cited, { cwd: REPO_ROOT }).length > 0;
  if (existsSync(path.join(REPO_ROOT, cited))) return true;
  return globSync(`${cited}.*`, { cwd: REPO_ROOT }).length > 0;
}

function missingCitations(file: string): string[] {
  const markdown = readFileSync(path.join(REPO_ROOT, file), "utf8");
  return [...new Set(citedPaths(markdown))].filter((cited) => !citationExists(cited));
}

describe("the link checker", () => {
  it("finds inline links, images and reference definitions, not code", () => {
    const markdown = [
      "See [the guide](docs/a.md), ![a picture](img/b.png) and [c].",
      "",
      "[c]: ./c.md",
      "",
      "`[not](code.md)` and",
      "```sh",
      "echo [no](fence.md)",
      "```",
      '[titled](d.md "Title") [web](https://example.com)',
    ].join("\n");
    expect(linkTargets(markdown)).toEqual([
      "docs/a.md",
      "img/b.png",
      "d.md",
      "https://example.com",
      "./c.md",
    ]);
  });

  it("makes GitHub's heading anchors", () => {
    const markdown =
      "# Events and replies\n## Replies: outcome -> HTTP\n### `npm test`\n## Tests\n## Tests";
    expect([...anchorsOf(markdown)]).toEqual([
      "events-and-replies",
      "replies-outcome---http",
      "npm-test",
      "tests",
      "tests-1",
    ]);
  });
});

describe("the citation checker", () => {
  it("finds repository paths in code spans, without line numbers, anchors or patterns", () => {
    const markdown = [
      "See `shared/kube/client.ts:53`, `./test/unit/a.test.ts`, `dev/x.ts:1-9,12`,",
      "`functions/<name>/index.ts`, `npm run dev/x`, `reference/b.md` part B and",
      "`docs/a.md#part`.",
      "```sh",
      "cat shared/in-a-fence.ts",
      "```",
    ].join("\n");
    expect(citedPaths(markdown)).toEqual([
      "shared/kube/client.ts",
      "test/unit/a.test.ts",
      "dev/x.ts",
      "reference/b.md",
      "docs/a.md",
    ]);
  });

  it("accepts files, folders, globs, fixtures named by their stem and ignored outputs", () => {
    expect(citationExists("shared/kube/")).toBe(true);
    expect(citationExists("manifests/crds/clusterlink.net_*.yaml")).toBe(true);
    expect(citationExists("test/fixtures/events/binary-ref-update")).toBe(true);
    expect(citationExists("bench/results.json")).toBe(true);
    expect(citationExists("shared/no-such-module.ts")).toBe(false);
    expect(citationExists("seeds/clusterlink-crd-management-design.md")).toBe(false);
  });
});

describe.each(MARKDOWN_FILES)("%s", (file) => {
  it("links only to files and headings that exist", () => {
    expect(brokenLinks(file)).toEqual([]);
  });

  it("cites only repository paths that exist", () => {
    expect(missingCitations(file)).toEqual([]);
  });
});

it("checks README.md, every Markdown file under docs/ and the READMEs of manifests/ and dev/", () => {
  expect(MARKDOWN_FILES).toContain("README.md");
  expect(MARKDOWN_FILES).toContain(path.join("docs", "events.md"));
  expect(MARKDOWN_FILES).toContain(path.join("manifests", "webhook", "README.md"));
  expect(MARKDOWN_FILES).toContain(path.join("dev", "control-plane", "README.md"));
  expect(
    linkTargets(readFileSync(path.join(REPO_ROOT, "README.md"), "utf8")).length,
  ).toBeGreaterThan(5);
});
