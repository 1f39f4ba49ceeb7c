/**
 * The peer rows' rule set and how repeated runs are summed up (bench/lib/peer). The upstream
 * CRDs are not in the repository (the build caches them), so their required fields are named here
 * as upstream's config/crd/bases lists them for Mwan3Rule.
 */
import { expectedHoldings, peerRules, CHANGED_RULE } from "../../../bench/lib/peer/rules.js";
import { medianOutcome, type Outcome } from "../../../bench/lib/peer/scenarios.js";
import { requireKind } from "../../../shared/kinds/index.js";

const UPSTREAM_MWAN3_RULE_REQUIRED = [
  "dest_ip",
  "dest_port",
  "family",
  "policy",
  "proto",
  "src_ip",
  "src_port",
  "sticky",
  "timeout",
];

describe("peerRules", () => {
  const rules = peerRules(300);

  it("makes 300 uniquely named objects, a tenth of them policies, and the rule the spec-change row edits", () => {
    expect(rules).toHaveLength(300);
    expect(new Set(rules.map((r) => `${r.kind}/${r.name}`)).size).toBe(300);
    expect(rules.filter((r) => r.kind === "Mwan3Policy")).toHaveLength(30);
    expect(rules.some((r) => r.name === CHANGED_RULE && r.kind === "Mwan3Rule")).toBe(true);
  });

  it("gives specs our registry accepts, every rule naming a policy of the set", () => {
    const policies = new Set(rules.filter((r) => r.kind === "Mwan3Policy").map((r) => r.name));
    for (const rule of rules) {
      expect(requireKind(rule.kind).parseSpec(rule.spec).ok).toBe(true);
      if (rule.kind === "Mwan3Rule") expect(policies.has(String(rule.spec["policy"]))).toBe(true);
    }
  });

  it("sets every field upstream's Mwan3Rule CRD requires", () => {
    for (const rule of rules.filter((r) => r.kind === "Mwan3Rule")) {
      expect(Object.keys(rule.spec).sort()).toEqual(UPSTREAM_MWAN3_RULE_REQUIRED);
    }
  });

  it("expects each pod to hold every name in its collection", () => {
    const expected = expectedHoldings(peerRules(12));
    expect(expected["mwan3/policies"]).toEqual(["pol0"]);
    expect(expected["mwan3/rules"]).toHaveLength(11);
  });
});

describe("medianOutcome", () => {
  const run = (ms: number, api: number, converged = true): Outcome => ({
    converged,
    ms,
    budgetMs: 15_000,
    apiRequests: api,
    cnfRequests: 6,
    restarts: 2,
    retries: 0,
    ...(converged ? {} : { problem: "status behind" }),
  });

  it("takes the median time and the mean counts per run", () => {
    const o = medianOutcome([run(90, 8), run(10, 8), run(50, 11), run(40, 9), run(70, 9)]);
    expect(o.ms).toBe(50);
    expect(o.apiRequests).toBe(9);
    expect(o.restarts).toBe(2);
    expect(o.runs).toBe(5);
    expect(o.converged).toBe(true);
  });

  it("is not converged when one run was not, and says what was wrong", () => {
    const o = medianOutcome([run(10, 8), run(15_000, 3, false), run(12, 8)]);
    expect(o.converged).toBe(false);
    expect(o.problem).toBe("status behind");
  });
});
