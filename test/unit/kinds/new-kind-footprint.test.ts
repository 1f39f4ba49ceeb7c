// Which files a new rule kind needs (scripts/kind-footprint.ts; `npm run kinds:footprint`
// prints the same report). The work tree is scanned for every kind's name and plural: apart from
// the kind's own file, the registry, generated manifests, its sample and the two tests that
// demand a case per kind, no file may keep a list of kinds, and product code outside
// shared/kinds names none. The classifier itself is checked on made-up files first.
import { readFileSync } from "node:fs";
import path from "node:path";
import {
  CASE_TABLE_TESTS,
  PER_KIND_TESTS,
  REGISTRY_FILES,
  REPO_ROOT,
  footprint,
  kindsNamed,
  newKindReport,
  problems,
  withoutComments,
  workTreeFiles,
  type FileFootprint,
} from "../../../scripts/kind-footprint.js";
import { GENERATED } from "../../../scripts/manifests/index.js";
import { ALL_RULE_KINDS } from "../../../shared/kinds/index.js";

const found = footprint(workTreeFiles(), (file) =>
  readFileSync(path.join(REPO_ROOT, file), "utf8"),
);
const filesOf = (role: FileFootprint["role"]): string[] =>
  found.filter((f) => f.role === role).map((f) => f.file);
const names = ALL_RULE_KINDS.map((e) => e.kind);

describe("the classifier", () => {
  const classify = (file: string, text: string): FileFootprint["role"] | undefined =>
    footprint([file], () => text)[0]?.role;
  const many = names.slice(0, Math.ceil(names.length / 2));

  it("finds kind names and plurals as whole words only", () => {
    const [a, b] = ALL_RULE_KINDS as [(typeof ALL_RULE_KINDS)[0], (typeof ALL_RULE_KINDS)[0]];
    expect(kindsNamed(`get ${a.plural} and ${b.kind}`)).toEqual(
      names.filter((n) => n === a.kind || n === b.kind),
    );
    expect(kindsNamed(`${a.kind}Store x${b.plural}`)).toEqual([]);
  });

  it("calls a switch over many kinds in bench or dev code a hand-kept list", () => {
    const text = many.map((k) => `case "${k}": return 1;`).join("\n");
    expect(classify("bench/soak/workload.ts", text)).toBe("hand-list");
    expect(classify("test/unit/some.test.ts", text)).toBe("hand-list");
    expect(classify("bench/rows/x.ts", `requireKind("${names[0]}")`)).toBe("example");
  });

  it("refuses a kind named in product code, but not in its comments", () => {
    const code = `const entry = requireKind("${names[0]}");`;
    expect(classify("shared/sync/x.ts", code)).toBe("product-code");
    expect(classify("functions/x/index.ts", code)).toBe("product-code");
    expect(
      classify("shared/sync/x.ts", `// e.g. ${names[0]}\n/** ${names[1]} */\nconst a = 1;`),
    ).toBe("example");
    expect(withoutComments(`a // ${names[0]}\nb`)).toBe("a \nb");
    expect(classify("shared/kinds/examples.ts", code)).toBe("example");
  });

  it("knows the kind's own file, the registry, generated files and samples", () => {
    const list = names.join(" ");
    expect(classify("shared/kinds/rules/new.ts", list)).toBe("kind-file");
    expect(classify("shared/kinds/registry.ts", list)).toBe("registry");
    expect(classify("manifests/rbac/reconcile-rule.yaml", list)).toBe("generated");
    expect(classify("manifests/samples/new.yaml", list)).toBe("sample");
    expect(problems([{ file: "x.ts", role: "hand-list", kinds: many }])).toContain(
      `x.ts names ${many.length} rule kinds: derive the list from the registry`,
    );
  });
});

describe("a new rule kind's footprint in this work tree", () => {
  it("has no list of kinds kept by hand and no kind named in product code", () => {
    expect(problems(found)).toEqual([]);
  });

  it("is the kind's own file, the registry, its sample and the per-kind tests; the rest is generated", () => {
    const generated = new Set(GENERATED.flatMap((s) => [...s.render().keys()]));
    expect(filesOf("generated").every((f) => generated.has(f))).toBe(true);
    expect(filesOf("registry").every((f) => f in REGISTRY_FILES)).toBe(true);
    expect(filesOf("kind-file").every((f) => f.startsWith("shared/kinds/rules/"))).toBe(true);
    expect(filesOf("per-kind-test").sort()).toEqual(Object.keys(PER_KIND_TESTS).sort());
    expect(filesOf("case-table-test").sort()).toEqual(Object.keys(CASE_TABLE_TESTS).sort());
    expect(filesOf("hand-list")).toEqual([]);
    expect(filesOf("product-code")).toEqual([]);
    // The simulator is keyed by CNF collection: it names no rule kind in code.
    for (const { file } of found.filter((f) => f.file.startsWith("dev/cnf-sim/"))) {
      const code = withoutComments(readFileSync(path.join(REPO_ROOT, file), "utf8"));
      expect([file, kindsNamed(code)]).toEqual([file, []]);
    }
  });

  it("reads as a report naming every file a new kind needs", () => {
    const report = newKindReport(found);
    for (const file of [...Object.keys(REGISTRY_FILES), ...Object.keys(PER_KIND_TESTS)]) {
      expect(report).toContain(file);
    }
    expect(report).toContain("npm run gen:manifests");
    expect(report).toContain("dev/cnf-sim/kinds.ts: only if it adds a CNF collection");
  });
});
