// The purity rule of .dependency-cruiser.cjs, run on a small tree written for each case: a
// capability module not named as I/O that reaches I/O, even through another module, is an error.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { cruise, type IConfiguration } from "dependency-cruiser";

const config = createRequire(import.meta.url)("../../../.dependency-cruiser.cjs") as IConfiguration;
const PURITY_RULES = new Set(["capability-cores-are-pure", "plans-are-pure"]);

/** The purity violations of a tree of `files` (path -> source), as "from -> to" lines. */
async function purityViolations(files: Record<string, string>): Promise<string[]> {
  const root = await mkdtemp(join(tmpdir(), "purity-"));
  try {
    for (const [path, source] of Object.entries(files)) {
      await mkdir(dirname(join(root, path)), { recursive: true });
      await writeFile(join(root, path), source);
    }
    const { tsConfig: _ignored, ...options } = config.options ?? {};
    const result = await cruise(["shared"], {
      ...options,
      baseDir: root,
      ruleSet: { forbidden: config.forbidden ?? [] },
      validate: true,
    });
    if (typeof result.output === "string") throw new Error(result.output);
    return result.output.summary.violations
      .filter((v) => PURITY_RULES.has(v.rule.name))
      .map((v) => `${v.from} -> ${v.to}`);
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}

describe("a capability's pure modules stay pure", () => {
  it("the NetworkPolicy compiler importing the store is an error", async () => {
    const violations = await purityViolations({
      "shared/netpol/compile.ts":
        'import { store } from "./kube-store.ts";\nexport const c = store;\n',
      "shared/netpol/kube-store.ts": "export const store = 1;\n",
    });
    expect(violations).toContain("shared/netpol/compile.ts -> shared/netpol/kube-store.ts");
  });

  it("egress membership reading a file is an error", async () => {
    const violations = await purityViolations({
      "shared/egress/membership.ts":
        'import { readFileSync } from "node:fs";\nexport const m = readFileSync;\n',
    });
    expect(violations).toContain("shared/egress/membership.ts -> fs");
  });

  it("the admission verdict reaching a timer through a helper is an error", async () => {
    const violations = await purityViolations({
      "shared/admission/verdict.ts":
        'import { wait } from "./helper.ts";\nexport const v = wait;\n',
      "shared/admission/helper.ts":
        'import { setTimeout } from "node:timers/promises";\nexport const wait = setTimeout;\n',
    });
    expect(violations).toEqual(
      expect.arrayContaining([
        "shared/admission/verdict.ts -> timers/promises",
        "shared/admission/helper.ts -> timers/promises",
      ]),
    );
  });

  it("the datapath comparing and hashing is pure; an applier and a store may do I/O", async () => {
    const violations = await purityViolations({
      "shared/netpol/decide.ts":
        'import { isDeepStrictEqual } from "node:util";\nimport { createHash } from "node:crypto";\nexport const d = [isDeepStrictEqual, createHash];\n',
      "shared/netpol/apply-event.ts":
        'import { store } from "./kube-store.ts";\nexport const a = store;\n',
      "shared/netpol/kube-store.ts":
        'import { readFileSync } from "node:fs";\nexport const store = readFileSync;\n',
    });
    expect(violations).toEqual([]);
  });
});
