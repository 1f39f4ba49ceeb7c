// stack.yml through faas-cli itself (built by dev/faas-cli/build.sh from its vendored sources):
// `faas-cli build --shrinkwrap` writes each function's build context, and `faas-cli generate`
// writes Function resources that meet the manifests' expectations (openfaas-functions.ts).
// Both run on a copy of the committed files, so the build contexts are what a clean checkout
// gives. Without the binary: outside CI skipped with the reason the build script recorded (no Go,
// or no source archive) or a hint; in CI (CI=true) a failure, whatever the reason.
import { execFileSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { FUNCTION_NAMES, functionProblems, type FunctionSpec } from "./openfaas-functions.js";
import { REPO, repoPath } from "./repo-files.js";
import { inCi } from "../../support/in-ci.js";

const binary =
  process.env["FAAS_CLI"] ??
  execFileSync("bash", [repoPath("dev/faas-cli/build.sh"), "--print-path"], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop() ??
  "";
const available = binary !== "" && existsSync(binary);
const unavailableFile = path.join(path.dirname(binary), "UNAVAILABLE");
const unavailableReason = existsSync(unavailableFile)
  ? readFileSync(unavailableFile, "utf8").trim()
  : undefined;
/** Everything the Dockerfile reads besides itself and .dockerignore (its COPY lines). */
const BUILD_INPUTS = [
  "package.json",
  "package-lock.json",
  "tsconfig.json",
  "tsconfig.build.json",
  "shared",
  "functions",
  "connector",
  "scripts/bundle.ts",
];

const trackedFiles = (): string[] =>
  execFileSync("git", ["ls-files", "-z"], { cwd: REPO, encoding: "utf8" })
    .split("\0")
    .filter((f) => f !== "" && existsSync(path.join(REPO, f)));

/** Every file under dir, relative, sorted; directories are walked, dot-names included. */
const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .sort();

if (!available && !inCi) {
  const why = unavailableReason ?? "run `npm run faas-cli:build` (or set FAAS_CLI)";
  console.warn(`faas-cli checks of stack.yml SKIPPED: ${why}`);
}

describe("faas-cli availability", () => {
  it("faas-cli was built by .ci/run (npm run faas-cli:build) when in CI", () => {
    const state = available ? "built" : `missing: ${unavailableReason ?? "not built"}`;
    expect(inCi ? state : "built").toBe("built");
  });
});

(available || inCi ? describe : describe.skip)("faas-cli on stack.yml", () => {
  let work = "";
  const faasCli = (...args: string[]): string =>
    execFileSync(binary, args, {
      cwd: work,
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, CI: "true" },
    });

  // A full checkout, as a developer has it: the tracked files, plus what is never committed but
  // sits in the tree (node_modules, .git, the local cluster's kubeconfig with its admin token).
  const TOKEN = "sdewan-test-admin-token-5f1c";
  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), "sdewan-faas-cli-"));
    for (const file of trackedFiles()) {
      cpSync(path.join(REPO, file), path.join(work, file), {
        recursive: true,
        verbatimSymlinks: true,
      });
    }
    execFileSync("git", ["init", "-q"], { cwd: work });
    mkdirSync(path.join(work, "node_modules/some-package"), { recursive: true });
    writeFileSync(path.join(work, "node_modules/some-package/index.js"), "export {};\n");
    mkdirSync(path.join(work, ".cluster"), { recursive: true });
    writeFileSync(path.join(work, ".cluster/kubeconfig"), `users:\n- user:\n    token: ${TOKEN}\n`);
  });
  afterAll(() => {
    if (work !== "") rmSync(work, { recursive: true, force: true });
  });

  it("build --shrinkwrap in a full checkout writes only the Dockerfile's inputs: no node_modules, .git or kubeconfig", () => {
    faasCli("build", "--shrinkwrap", "-f", "stack.yml");
    // What the Dockerfile COPYs (and .dockerignore allows), as committed.
    const inputs = trackedFiles().filter((f) =>
      BUILD_INPUTS.some((i) => f === i || f.startsWith(`${i}/`)),
    );
    for (const name of FUNCTION_NAMES) {
      const context = path.join(work, "build", name);
      const files = filesUnder(context);
      expect([name, files]).toEqual([name, [...inputs, "Dockerfile", ".dockerignore"].sort()]);
      for (const file of files) {
        expect([
          name,
          file,
          readFileSync(path.join(context, file), "utf8").includes(TOKEN),
        ]).toEqual([name, file, false]);
      }
      // The Dockerfile built from it is the repository's own.
      expect(readFileSync(path.join(context, "Dockerfile"), "utf8")).toBe(
        readFileSync(repoPath("Dockerfile"), "utf8"),
      );
    }
  });

  it("build/ is ignored by git in the checkout", () => {
    const ignored = execFileSync(
      "git",
      ["check-ignore", "--no-index", "build/reconcile-rule/package.json", "build/x/shared/a.ts"],
      { cwd: work, encoding: "utf8" },
    );
    expect(ignored.trim().split("\n")).toHaveLength(2);
  });

  it("generate writes one Function per function, each meeting the manifests' expectations", () => {
    const docs = parseAllDocuments(faasCli("generate", "-f", "stack.yml"))
      .map((d) => d.toJS() as { apiVersion?: string; kind?: string; spec?: FunctionSpec } | null)
      .filter((d) => d !== null && d.kind === "Function");
    expect(docs.map((d) => d?.spec?.name).sort()).toEqual(FUNCTION_NAMES);
    for (const doc of docs) {
      expect(doc?.apiVersion).toMatch(/^openfaas\.com\//);
      expect(functionProblems(doc?.spec as FunctionSpec)).toEqual([]);
    }
  });
});
