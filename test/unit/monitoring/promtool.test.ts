// promtool, Prometheus's own checker, on the shipped rule file: `promtool check rules` (syntax,
// PromQL, templates) and `promtool test rules` with alerts.promtool.yml, which has a firing and a
// quiet case for every alert. promtool comes from Debian's prometheus package (.ci/run installs
// it); without it this skips with that reason, except in CI, where it fails.
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { alertRules } from "../../../scripts/manifests/alerts.js";
import { RULES_FILE } from "../../../scripts/manifests/monitoring.js";
import { inCi } from "../../support/in-ci.js";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, "../../..");
const TESTS_FILE = path.join(HERE, "alerts.promtool.yml");

const promtool = process.env["PROMTOOL"] ?? "promtool";
const available = spawnSync(promtool, ["--version"], { encoding: "utf8" }).status === 0;
if (!available && !inCi) {
  console.warn(
    "promtool checks SKIPPED: promtool is not installed (apt-get install -y prometheus; .ci/run does it)",
  );
}

interface AlertTest {
  readonly alertname: string;
  readonly exp_alerts?: readonly unknown[];
}
interface TestGroup {
  readonly alert_rule_test?: readonly AlertTest[];
}

describe("promtool availability", () => {
  (inCi ? it : it.skip)(
    "promtool is installed in CI (.ci/run installs Debian's prometheus)",
    () => {
      expect(available).toBe(true);
    },
  );
});

describe("alerts.promtool.yml covers every alert", () => {
  const { tests } = parse(readFileSync(TESTS_FILE, "utf8")) as { tests: TestGroup[] };
  const cases = tests.flatMap((t) => t.alert_rule_test ?? []);

  it.each(alertRules().map((rule) => rule.alert))("%s: a firing case and a quiet case", (alert) => {
    const own = cases.filter((c) => c.alertname === alert);
    expect({ alert, firing: own.some((c) => (c.exp_alerts ?? []).length > 0) }).toEqual({
      alert,
      firing: true,
    });
    expect({ alert, quiet: own.some((c) => (c.exp_alerts ?? []).length === 0) }).toEqual({
      alert,
      quiet: true,
    });
  });
});

(available || inCi ? describe : describe.skip)("promtool", () => {
  const run = (args: readonly string[]): string =>
    execFileSync(promtool, args, { cwd: REPO, encoding: "utf8", timeout: 60_000 });

  it("check rules: the shipped rule file is valid", () => {
    expect(run(["check", "rules", RULES_FILE])).toMatch(
      new RegExp(`SUCCESS: ${alertRules().length} rules found`),
    );
  });

  it("test rules: every alert fires and stays quiet as its unit tests say", () => {
    expect(run(["test", "rules", TESTS_FILE])).toMatch(/SUCCESS/);
  });

  it("the tests are real: a wrong expectation fails", () => {
    const broken = readFileSync(TESTS_FILE, "utf8")
      .replace("fails 10% of its events", "fails 11% of its events")
      .replace("../../../manifests/", `${REPO}/manifests/`);
    const dir = mkdtempSync(path.join(tmpdir(), "promtool-"));
    try {
      const file = path.join(dir, "broken.promtool.yml");
      writeFileSync(file, broken);
      const result = spawnSync(promtool, ["test", "rules", file], {
        encoding: "utf8",
        timeout: 60_000,
      });
      expect(result.status).not.toBe(0);
      expect(`${result.stdout}${result.stderr}`).toMatch(/SdewanFunctionErrors.*\n[\s\S]*11%/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
