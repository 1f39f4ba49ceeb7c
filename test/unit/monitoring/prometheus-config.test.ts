// The prometheus.yml that dev/prometheus writes for the demo and the alert-firing test: one job
// per target, https with the CA for the webhook, the shipped rule file; and promtool accepts it
// (`promtool check config` also loads the rule files it names; without promtool a skip, in CI a
// failure).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { prometheusConfig } from "../../../dev/prometheus/index.js";
import { RULES_FILE } from "../../../scripts/manifests/monitoring.js";
import { inCi } from "../../support/in-ci.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const promtool = process.env["PROMTOOL"] ?? "promtool";
const available = spawnSync(promtool, ["--version"]).status === 0;

describe("dev/prometheus configuration", () => {
  let dir: string;
  let caFile: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "prometheus-config-"));
    caFile = path.join(dir, "ca.pem");
    writeFileSync(caFile, "");
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const render = () =>
    prometheusConfig({
      targets: [
        { job: "functions", url: "http://127.0.0.1:8080" },
        { job: "validate-admission", url: "https://127.0.0.1:8443/", caFile },
        { job: "connector", url: "http://127.0.0.1:9090" },
      ],
      ruleFiles: [path.join(REPO, RULES_FILE)],
      interval: "1s",
    });

  it("scrapes each target's /metrics, the webhook over https trusting its CA", () => {
    const config = parse(render()) as {
      global: Record<string, string>;
      rule_files: string[];
      scrape_configs: Record<string, unknown>[];
    };
    expect(config.global).toEqual({
      scrape_interval: "1s",
      evaluation_interval: "1s",
      scrape_timeout: "1s",
    });
    expect(config.rule_files).toEqual([path.join(REPO, RULES_FILE)]);
    expect(config.scrape_configs).toEqual([
      {
        job_name: "functions",
        scheme: "http",
        metrics_path: "/metrics",
        static_configs: [{ targets: ["127.0.0.1:8080"] }],
      },
      {
        job_name: "validate-admission",
        scheme: "https",
        metrics_path: "/metrics",
        tls_config: { ca_file: caFile },
        static_configs: [{ targets: ["127.0.0.1:8443"] }],
      },
      {
        job_name: "connector",
        scheme: "http",
        metrics_path: "/metrics",
        static_configs: [{ targets: ["127.0.0.1:9090"] }],
      },
    ]);
  });

  (available || inCi ? it : it.skip)(
    "promtool check config accepts it with the shipped rules",
    () => {
      const file = path.join(dir, "prometheus.yml");
      writeFileSync(file, render());
      const result = spawnSync(promtool, ["check", "config", file], { encoding: "utf8" });
      expect({ status: result.status, output: `${result.stdout}${result.stderr}` }).toMatchObject({
        status: 0,
      });
      expect(result.stdout).toMatch(/SUCCESS: \d+ rules found/);
    },
  );
});
