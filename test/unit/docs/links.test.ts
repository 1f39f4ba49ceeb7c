// Every relative link in README.md and docs/**/*.md points at a file or folder that exists, and
// a link to a heading of a Markdown file (`other.md#section`, `#section`) names a real heading.
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

const MARKDOWN_FILES = [
  "README.md",
  ...readdirSync(path.join(REPO_ROOT, "docs"), { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".md"))
    .map((f) => path.join("docs", f))
    .sort(),
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

describe.each(MARKDOWN_FILES)("%s", (file) => {
  it("links only to files and headings that exist", () => {
    expect(brokenLinks(file)).toEqual([]);
  });
});

it("checks README.md and every Markdown file under docs/", () => {
  expect(MARKDOWN_FILES).toContain("README.md");
  expect(MARKDOWN_FILES).toContain(path.join("docs", "events.md"));
  expect(
    linkTargets(readFileSync(path.join(REPO_ROOT, "README.md"), "utf8")).length,
  ).toBeGreaterThan(5);
});
