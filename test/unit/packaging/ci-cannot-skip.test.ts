// Nothing skips in CI (issue 24): with CI=true a tool that cannot be built or found is a failure
// that says why. The Go tool builds exit 1 instead of recording UNAVAILABLE; the tests that need a
// tool fail instead of skipping; the real-adapter e2e fails instead of skipping where
// `unshare -n` is refused. Outside CI each of these still records the reason and skips.
import { jest } from "@jest/globals";
import { spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { adapterAvailability } from "../../e2e/knative.js";
import { mtpingAvailability } from "../../e2e/ping-source.js";
import { labAvailability } from "../../integration/support/lab-availability.js";
import { REPO, repoPath } from "./repo-files.js";

/** Each Go tool build that may find nothing to build from, and the archive it builds from. */
const BUILDS = [
  ["dev/faas-cli/build.sh", "faas-cli-src.tar.xz"],
  ["dev/openfaas/build.sh", "openfaas-ce-src.tar.xz"],
  ["dev/knative/build.sh", "knative-eventing-adapters-src.tar.xz"],
  ["dev/upstream-ctrlr/build.sh", "sdewan-upstream-crd-ctrlr-src.tar.xz"],
] as const;

/** The test files gated on a tool, and the variables that would point them at one. */
const TOOL_TESTS = [
  "test/unit/packaging/faas-cli.test.ts",
  "test/unit/packaging/knative-validation.test.ts",
  "test/unit/packaging/kustomize.test.ts",
  "test/unit/monitoring/promtool.test.ts",
  "test/unit/monitoring/prometheus-config.test.ts",
  "test/unit/netpol/cyclonus-generated.test.ts",
  "test/unit/netpol/cyclonus.property.test.ts",
];
const TOOL_VARIABLES = [
  "FAAS_CLI",
  "OPENFAAS_RENDER",
  "KUSTOMIZE",
  "NETPOL_CYCLONUS",
  "PROMTOOL",
  "CI",
];

// One jest run of those files, and a few builds that stop before compiling anything.
jest.setTimeout(180_000);

let work: string;
/** An empty tools folder and an empty cache: nothing to build from, nothing built. */
let environment: (ci: boolean, extra?: Record<string, string>) => NodeJS.ProcessEnv;

beforeAll(() => {
  work = mkdtempSync(path.join(os.tmpdir(), "sdewan-ci-skip-"));
  mkdirSync(path.join(work, "tools"));
  environment = (ci, extra = {}) => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const name of [...TOOL_VARIABLES, "JEST_WORKER_ID"]) delete env[name];
    return {
      ...env,
      SDEWAN_TOOLS_DIR: path.join(work, "tools"),
      XDG_CACHE_HOME: path.join(work, "cache"),
      ...(ci ? { CI: "true" } : {}),
      ...extra,
    };
  };
});

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

const run = (script: string, env: NodeJS.ProcessEnv) =>
  spawnSync("bash", [repoPath(script)], { encoding: "utf8", env, timeout: 60_000 });

describe.each(BUILDS)("%s with nothing to build from", (script, archive) => {
  it("in CI exits 1 naming the missing archive, recording nothing", () => {
    const result = run(script, environment(true));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`UNAVAILABLE: ${archive} not found`);
    expect(result.stdout).toBe("");
  });

  it("elsewhere records why in UNAVAILABLE and exits 0", () => {
    const result = run(script, environment(false));
    expect(result.status).toBe(0);
    // The last line is the cache directory, or the binary in it (faas-cli).
    const printed = result.stdout.trim().split("\n").pop() ?? "";
    const records = [printed, path.dirname(printed)].map((d) => path.join(d, "UNAVAILABLE"));
    expect(records.some((record) => existsSync(record))).toBe(true);
  });

  it("in CI exits 1 when Go is missing", () => {
    const tools = path.join(work, `tools-${archive}`);
    mkdirSync(tools, { recursive: true });
    writeFileSync(path.join(tools, archive), "");
    const result = run(
      script,
      environment(true, { SDEWAN_TOOLS_DIR: tools, GO: path.join(work, "no-go") }),
    );
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("no-go' not found");
  });
});

describe("the tests that need a tool, with CI=true and no tool anywhere", () => {
  it("fail after the builds could not build them, as .ci/run runs them; none is skipped", () => {
    // Whatever the builds answer (in CI: exit 1), the tests must not take it as a reason to skip.
    for (const [script] of BUILDS) run(script, environment(true));
    const result = spawnSync(
      "npm",
      ["run", "test:unit", "--", "--testPathPatterns", ...TOOL_TESTS],
      {
        cwd: REPO,
        encoding: "utf8",
        env: environment(true, { PROMTOOL: path.join(work, "no-promtool"), FORCE_COLOR: "0" }),
        timeout: 180_000,
      },
    );
    // jest's own summary (its --json cannot serialize these failures: spawnSync errors).
    // eslint-disable-next-line no-control-regex
    const output = `${result.stdout}${result.stderr}`.replace(/\x1b\[[0-9;]*m/g, "");
    expect(result.status).not.toBe(0);
    const failed = TOOL_TESTS.filter((file) => output.includes(`FAIL unit ${file}`));
    expect(failed).toEqual(TOOL_TESTS);
    const summary = output.split("\n").find((line) => line.startsWith("Tests:")) ?? "";
    expect(summary).toMatch(/failed/);
    expect(summary).not.toMatch(/skipped|todo/);
  });
});

describe("the real-adapter e2e where `unshare -n` is refused", () => {
  /** An `unshare` that fails as it does without CAP_SYS_ADMIN. */
  let unshare: string;
  beforeAll(() => {
    unshare = path.join(work, "unshare");
    writeFileSync(
      unshare,
      "#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\nexit 1\n",
    );
    chmodSync(unshare, 0o755);
  });

  it("skips outside CI, saying why", () => {
    const options = { ci: false, unshare };
    expect(adapterAvailability(options).skip).toContain("`unshare -n` is not permitted here");
    expect(mtpingAvailability(options).skip).toContain("`unshare -n` is not permitted here");
  });

  it("fails in CI, saying why", () => {
    const options = { ci: true, unshare };
    expect(() => adapterAvailability(options)).toThrow(
      "CI=true, so this cannot be skipped: `unshare -n` is not permitted here",
    );
    expect(() => mtpingAvailability(options)).toThrow("`unshare -n` is not permitted here");
  });
});

describe("the real-packet NetworkPolicy tests (the packet lab) without root", () => {
  it("skip outside CI, saying why", () => {
    expect(labAvailability({ ci: false, root: false }).skip).toContain("needs root");
    expect(labAvailability({ ci: false, root: true }).skip).toBeUndefined();
  });

  it("fail in CI, saying why", () => {
    expect(() => labAvailability({ ci: true, root: false })).toThrow(
      "CI=true, so this cannot be skipped: the packet lab needs root",
    );
  });
});
