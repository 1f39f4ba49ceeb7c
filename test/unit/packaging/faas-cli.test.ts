// stack.yml through faas-cli itself (built by dev/faas-cli/build.sh from its vendored sources):
// `faas-cli build --shrinkwrap` writes each function's build context, and `faas-cli generate`
// writes Function resources that meet the manifests' expectations (openfaas-functions.ts).
// Both run on a copy of the committed files, so the build contexts are what a clean checkout
// gives. Without the binary: skipped with the reason the build script recorded (no Go, or no
// source archive); in CI otherwise a failure; outside CI a skip with a hint.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { FUNCTION_NAMES, functionProblems, type FunctionSpec } from "./openfaas-functions.js";
import { REPO, repoPath } from "./repo-files.js";

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
const inCi = process.env["CI"] === "true" || process.env["CI"] === "1";

if (!available) {
  const why =
    unavailableReason ??
    (inCi ? "the binary is missing in CI" : "run `npm run faas-cli:build` (or set FAAS_CLI)");
  console.warn(`faas-cli checks of stack.yml SKIPPED: ${why}`);
}

describe("faas-cli availability", () => {
  // In CI the binary must exist unless the build script recorded why it cannot be built here
  // (no Go, or no source archive: dev/faas-cli/build.sh).
  it("faas-cli was built by .ci/run (npm run faas-cli:build), or why not is recorded", () => {
    const state = available
      ? "built"
      : (unavailableReason ?? (inCi ? "missing in CI" : "not built"));
    expect(state).not.toBe("missing in CI");
  });
});

(available ? describe : describe.skip)("faas-cli on stack.yml", () => {
  let work = "";
  const faasCli = (...args: string[]): string =>
    execFileSync(binary, args, {
      cwd: work,
      encoding: "utf8",
      timeout: 120_000,
      env: { ...process.env, CI: "true" },
    });

  beforeAll(() => {
    work = mkdtempSync(path.join(os.tmpdir(), "sdewan-faas-cli-"));
    const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: REPO, encoding: "utf8" })
      .split("\0")
      .filter(Boolean);
    for (const file of tracked) {
      if (existsSync(path.join(REPO, file))) {
        cpSync(path.join(REPO, file), path.join(work, file), { recursive: true });
      }
    }
  });
  afterAll(() => {
    if (work !== "") rmSync(work, { recursive: true, force: true });
  });

  it("build --shrinkwrap writes a Docker build context per function: the Dockerfile and the sources, no node_modules", () => {
    faasCli("build", "--shrinkwrap", "-f", "stack.yml");
    for (const name of FUNCTION_NAMES) {
      const context = path.join(work, "build", name);
      for (const file of [
        "Dockerfile",
        ".dockerignore",
        "package-lock.json",
        "shared",
        "functions",
      ]) {
        expect([name, file, existsSync(path.join(context, file))]).toEqual([name, file, true]);
      }
      expect(existsSync(path.join(context, "node_modules"))).toBe(false);
    }
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
