import {
  WARNING_LINE_CHARS,
  oneLine,
  planTable,
  planWarnings,
} from "../../../shared/sync/plan-preview-text.js";
import type { CnfPlan, PreviewReport, RulePlan } from "../../../shared/sync/plan-preview.js";

const runes = (lines: readonly string[]): number => lines.reduce((n, l) => n + [...l].length, 0);

/** A policy changed on `pods` pods and used by `users` rules. */
function report(pods: number, users = 1): PreviewReport {
  const names = Array.from(
    { length: pods },
    (_, i) => `cnf-a-7d9f8b6c5-${String(i).padStart(5, "x")}`,
  );
  const rule: RulePlan = {
    kind: "Mwan3Policy",
    namespace: "ns",
    name: "balance-1",
    action: "apply",
    object: { collection: "mwan3/policies", name: "balance_1", service: "mwan3" },
    dependents: Array.from({ length: users }, (_, i) => `Mwan3Rule rule-${i}`),
    pods: names.map((pod) => ({
      pod,
      change: "update",
      requests: [{ method: "PUT", collection: "mwan3/policies", name: "balance_1" }],
      fields: ["members"],
      restart: "mwan3",
    })),
  };
  const cnf: CnfPlan = {
    namespace: "ns",
    purpose: "cnf-a",
    deployment: "cnf-a",
    readyPods: pods,
    expectedPods: pods,
    rules: [rule],
    pods: names.map((pod) => ({
      pod,
      requests: [
        {
          method: "PUT",
          collection: "mwan3/policies",
          name: "balance_1",
          rule: "Mwan3Policy/balance-1",
        },
      ],
      restarts: { mwan3: 1 },
    })),
  };
  return { cnfs: [cnf], skipped: [] };
}

describe("the plan as admission warnings", () => {
  it("one line for the rule, one per pod, one for the rules it affects; each names the rule and pod", () => {
    expect(planWarnings(report(2), 4096)).toEqual([
      "plan Mwan3Policy balance-1: apply on CNF cnf-a (2/2 pods ready)",
      "plan Mwan3Policy balance-1: pod cnf-a-7d9f8b6c5-xxxx0: PUT mwan3/policies/balance_1 [members]; restart mwan3",
      "plan Mwan3Policy balance-1: pod cnf-a-7d9f8b6c5-xxxx1: PUT mwan3/policies/balance_1 [members]; restart mwan3",
      "plan Mwan3Policy balance-1: affects 1 rule(s) using it: Mwan3Rule rule-0",
    ]);
  });

  it("50 rules using it: as many names as fit on one line, then how many more", () => {
    const affects = planWarnings(report(2, 50), 4096).at(-1) ?? "";
    expect(affects).toMatch(
      /^plan Mwan3Policy balance-1: affects 50 rule\(s\) using it: Mwan3Rule rule-0, .* and \d+ more$/,
    );
    expect([...affects].length).toBeLessThanOrEqual(WARNING_LINE_CHARS);
  });

  it("stays within the budget (the API server's 4096 runes) with a last line saying what was left out", () => {
    const lines = planWarnings(report(60), 4096);
    expect(runes(lines)).toBeLessThanOrEqual(4096);
    expect(lines.every((l) => [...l].length <= WARNING_LINE_CHARS)).toBe(true);
    expect(new Set(lines).size).toBe(lines.length);
    expect(lines.at(-1)).toMatch(
      /^plan: \d+ more line\(s\) not shown; npm run plan -- -f <file> prints the whole plan$/,
    );
  });

  it("never a control character: a newline would make the API server drop the warning", () => {
    expect(oneLine("a\nb\tc", 120)).toBe("a b c");
    expect(oneLine("x".repeat(130), 120)).toHaveLength(120);
  });
});

describe("the plan as npm run plan prints it", () => {
  it("a header per CNF, a row per rule and pod, then the burst's restarts", () => {
    const text = planTable(report(2), "CNF_RESTART_MIN_INTERVAL_MS=10000");
    const lines = text.trimEnd().split("\n");
    expect(lines[0]).toBe("CNF ns/cnf-a: Deployment cnf-a, 2/2 pods ready");
    expect(lines[1]).toMatch(/^ {2}RULE +ACTION +POD +CHANGE +REQUESTS +RESTART +NOTE$/);
    expect(lines[2]).toMatch(
      /^ {2}Mwan3Policy balance-1 +apply +cnf-a-7d9f8b6c5-xxxx0 +update +PUT mwan3\/policies\/balance_1 +mwan3 +fields: members$/,
    );
    expect(lines.at(-1)).toBe(
      "  restarts of the whole change as one burst, at most (CNF_RESTART_MIN_INTERVAL_MS=10000): cnf-a-7d9f8b6c5-xxxx0: mwan3 x1; cnf-a-7d9f8b6c5-xxxx1: mwan3 x1",
    );
  });
});
