// The shipped alerts against a real Prometheus (Debian's package; .ci/run installs it): the
// functions served over HTTP as in a cluster, Prometheus scraping their /metrics every second and
// evaluating the rule file rendered from scripts/manifests/alerts.ts with `for: 2s`. A CNF pod
// rejects a rule (the simulator's fault control), and SdewanCnfRejectingRules, then
// SdewanRulesNotInSync after a CNF sync, become pending and firing in Prometheus's own API.
// Without prometheus this skips with that reason, except in CI, where it fails.
import { jest } from "@jest/globals";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  prometheusBinary,
  startPrometheus,
  type RunningPrometheus,
} from "../../dev/prometheus/index.js";
import type { Cnf, CnfPod } from "../../dev/world/index.js";
import { alertRules } from "../../scripts/manifests/alerts.js";
import { renderRulesFile } from "../../scripts/manifests/monitoring.js";
import {
  createCombinedApp,
  createLogger,
  Runtime,
  startServer,
  type RunningServer,
} from "../../shared/runtime/index.js";
import { SyncWorld } from "./sync-harness.js";
import { inCi } from "../support/in-ci.js";

jest.setTimeout(120_000);

const binary = prometheusBinary();
if (binary === undefined && !inCi) {
  console.warn(
    "alert-firing test SKIPPED: prometheus is not installed (apt-get install prometheus)",
  );
}

const PURPOSE = "cnf1";
const POLICY = { members: [{ network: "ovn-net1", metric: 1, weight: 2 }] };

describe("prometheus availability", () => {
  (inCi ? it : it.skip)("prometheus is installed in CI (.ci/run installs Debian's package)", () => {
    expect(binary).toBeDefined();
  });
});

(binary !== undefined || inCi ? describe : describe.skip)("the alerts in a real Prometheus", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  let server: RunningServer;
  let prometheus: RunningPrometheus;
  let workDir: string;

  beforeAll(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    const runtime = new Runtime({ logger: createLogger({ level: "silent" }) });
    const app = createCombinedApp([world.reconcileRule, world.onDeploymentReady], runtime);
    server = await startServer(app, runtime, { port: 0, host: "127.0.0.1" });
    workDir = await mkdtemp(path.join(os.tmpdir(), "sdewan-prometheus-"));
    const rules = path.join(workDir, "sdewan-alerts.rules.yml");
    await writeFile(rules, renderRulesFile({ forOverride: "2s" }));
    prometheus = await startPrometheus({
      workDir,
      targets: [{ job: "functions", url: server.url }],
      ruleFiles: [rules],
      interval: "1s",
    });
  });

  afterAll(async () => {
    await prometheus?.stop();
    await server?.close();
    await world?.close();
    if (workDir !== undefined) await rm(workDir, { recursive: true, force: true });
  });

  const post = (fn: string, kind: string, name: string) =>
    fetch(`${server.url}/${fn}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ kind, namespace: world.namespace, name }),
    });

  it("loads every shipped alert and scrapes the functions", async () => {
    expect((await prometheus.ruleNames()).sort()).toEqual(
      alertRules()
        .map((r) => r.alert)
        .sort(),
    );
    const deadline = Date.now() + 20_000;
    const allUp = (targets: { health: string }[]) =>
      targets.length > 0 && targets.every((t) => t.health === "up");
    let health = await prometheus.targetHealth();
    while (!allUp(health) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      health = await prometheus.targetHealth();
    }
    expect(health).toEqual([{ job: "functions", health: "up", lastError: "" }]);
    expect(await prometheus.alerts()).toEqual([]);
  });

  it("a CNF that rejects a rule: SdewanCnfRejectingRules pending, then firing", async () => {
    const pod0 = cnf.pods[0] as CnfPod;
    pod0.sim.failNext({
      kind: "status",
      status: 400,
      message: "Field[members] checked failed: rejected by this test",
      // Writes only: a 400 to a GET is the CNF failing to read (retried), not a rejection.
      method: "PUT",
      collection: "mwan3/policies",
      count: 100,
    });
    await world.createRule("Mwan3Policy", "policy1", PURPOSE, POLICY);
    expect((await post("reconcile-rule", "Mwan3Policy", "policy1")).status).toBe(422);

    const labels = { function: "reconcile-rule", reason: "invalid", severity: "warning" };
    const pending = await prometheus.waitForAlert("SdewanCnfRejectingRules", {
      state: "pending",
      labels,
      timeoutMs: 30_000,
    });
    expect(pending.annotations["runbook_url"]).toBe("docs/runbooks.md#sdewancnfrejectingrules");
    const firing = await prometheus.waitForAlert("SdewanCnfRejectingRules", {
      state: "firing",
      labels,
      timeoutMs: 30_000,
    });
    expect(firing.annotations["summary"]).toBe("CNFs refuse calls of reconcile-rule (invalid)");
  });

  it("the CNF's sync leaves the rejected rule out of sync: SdewanRulesNotInSync fires for that CNF", async () => {
    expect((await post("on-deployment-ready", "Deployment", cnf.name)).status).toBe(202);
    const firing = await prometheus.waitForAlert("SdewanRulesNotInSync", {
      state: "firing",
      labels: { namespace: world.namespace, cnf: PURPOSE },
      timeoutMs: 30_000,
    });
    expect(firing.value).toBe("1e+00");
  });
});
