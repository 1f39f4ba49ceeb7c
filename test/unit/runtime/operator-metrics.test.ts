// The metrics the alerts and the dashboard (manifests/monitoring) need beyond event counts: CNF
// call failures by reason, carried from the CNF client through the event's call counters, and the
// rules-not-in-sync gauge a CNF-wide sync sets through HandlerContext.metrics, and the netpol
// policy-problems gauge network-policy-sync sets after a full recompute.
import request from "supertest";
import { createFunctionApp, RuntimeMetrics } from "../../../shared/runtime/index.js";
import type { Outcome } from "../../../shared/core/outcome.js";
import { binaryRefHeaders, capturingRuntime, eventFunction, refData } from "./helpers.js";

describe("sdewan_cnf_failures_total", () => {
  it("counts the failures an event's CNF calls recorded, by function and reason", async () => {
    const failing = eventFunction("failing", (_event, ctx): Outcome => {
      ctx.calls.cnf += 3;
      ctx.calls.cnfFailures = { unreachable: 2, invalid: 1 };
      return { kind: "retry", reason: "CNF unreachable", retryAfterSeconds: 5 };
    });
    const { runtime } = capturingRuntime();
    const app = createFunctionApp(failing, runtime);
    await request(app).post("/").set(binaryRefHeaders("a")).send(refData("a")).expect(503);
    await request(app).post("/").set(binaryRefHeaders("b")).send(refData("b")).expect(503);
    const text = (await request(app).get("/metrics").expect(200)).text;
    expect(text).toContain('sdewan_cnf_failures_total{function="failing",reason="unreachable"} 4');
    expect(text).toContain('sdewan_cnf_failures_total{function="failing",reason="invalid"} 2');
    expect(text).toContain('sdewan_cnf_calls_total{function="failing"} 6');
  });

  it("has no series for an event whose CNF calls all succeeded", async () => {
    const metrics = new RuntimeMetrics();
    metrics.recordEvent({
      fn: "ok",
      type: "t",
      outcome: "done",
      seconds: 0.01,
      calls: { api: 1, cnf: 2 },
    });
    expect(await metrics.registry.metrics()).not.toMatch(/sdewan_cnf_failures_total\{/);
  });
});

describe("sdewan_rules_not_in_sync", () => {
  const gauge = async (metrics: RuntimeMetrics) =>
    (await metrics.registry.getSingleMetricAsString("sdewan_rules_not_in_sync"))
      .split("\n")
      .filter((line) => line.startsWith("sdewan_rules_not_in_sync{"));

  it("is set by a function through HandlerContext.metrics, per namespace and CNF", async () => {
    const syncing = eventFunction("syncing", (_event, ctx): Outcome => {
      ctx.metrics?.setRulesNotInSync(
        [
          { namespace: "ns1", cnf: "cnf-a", notInSync: 2, repeatedDrift: 1 },
          { namespace: "ns1", cnf: "cnf-b", notInSync: 0, repeatedDrift: 0 },
        ],
        false,
      );
      return { kind: "done", result: "synced" };
    });
    const { runtime } = capturingRuntime();
    await request(createFunctionApp(syncing, runtime))
      .post("/")
      .set(binaryRefHeaders("a"))
      .send(refData("a"))
      .expect(202);
    expect(await gauge(runtime.metrics)).toEqual([
      'sdewan_rules_not_in_sync{namespace="ns1",cnf="cnf-a"} 2',
      'sdewan_rules_not_in_sync{namespace="ns1",cnf="cnf-b"} 0',
    ]);
    const drift = await runtime.metrics.registry.getSingleMetricAsString(
      "sdewan_rules_repeated_drift",
    );
    expect(drift).toContain('sdewan_rules_repeated_drift{namespace="ns1",cnf="cnf-a"} 1');
  });

  it("keeps other CNFs on a partial sync and forgets CNFs a cluster-wide sync no longer lists", async () => {
    const metrics = new RuntimeMetrics();
    metrics.setRulesNotInSync(
      [{ namespace: "ns1", cnf: "gone", notInSync: 3, repeatedDrift: 0 }],
      false,
    );
    metrics.setRulesNotInSync(
      [{ namespace: "ns2", cnf: "b", notInSync: 1, repeatedDrift: 0 }],
      false,
    );
    expect(await gauge(metrics)).toHaveLength(2);
    metrics.setRulesNotInSync(
      [{ namespace: "ns2", cnf: "b", notInSync: 0, repeatedDrift: 0 }],
      true,
    );
    expect(await gauge(metrics)).toEqual(['sdewan_rules_not_in_sync{namespace="ns2",cnf="b"} 0']);
  });
});

describe("sdewan_netpol_policy_problems", () => {
  const gauge = async (metrics: RuntimeMetrics) =>
    (await metrics.registry.getSingleMetricAsString("sdewan_netpol_policy_problems"))
      .split("\n")
      .filter((line) => line.startsWith("sdewan_netpol_policy_problems{"));
  const series = (ns: string, policy: string, reason: string) =>
    `sdewan_netpol_policy_problems{namespace="${ns}",policy="${policy}",reason="${reason}"} 1`;

  it("is 1 per reason a policy's peer set carries; a recompute of the policy forgets the others", async () => {
    const metrics = new RuntimeMetrics();
    metrics.setNetpolPolicyProblems(
      [
        { namespace: "shop", policy: "from-all", reasons: ["PeerSetTooLarge", "TooManyRules"] },
        { namespace: "shop", policy: "web", reasons: [] },
      ],
      false,
    );
    expect(await gauge(metrics)).toEqual([
      series("shop", "from-all", "PeerSetTooLarge"),
      series("shop", "from-all", "TooManyRules"),
    ]);
    metrics.setNetpolPolicyProblems(
      [{ namespace: "shop", policy: "from-all", reasons: ["TooManyRules"] }],
      false,
    );
    expect(await gauge(metrics)).toEqual([series("shop", "from-all", "TooManyRules")]);
  });

  it("forgets policies a resync (every policy listed) no longer reports", async () => {
    const metrics = new RuntimeMetrics();
    metrics.setNetpolPolicyProblems(
      [{ namespace: "a", policy: "gone", reasons: ["PeerSetTooLarge"] }],
      false,
    );
    metrics.setNetpolPolicyProblems(
      [{ namespace: "b", policy: "p", reasons: ["InvalidSelector"] }],
      true,
    );
    expect(await gauge(metrics)).toEqual([series("b", "p", "InvalidSelector")]);
  });
});
