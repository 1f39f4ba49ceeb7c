import { sampleDocuments, sampleFiles } from "../../../dev/world/samples.js";
import { networkMapOfDeployment, requireKind, type RuleCr } from "../../../shared/kinds/index.js";
import { holdingsOf, planRuleTarget } from "../../../shared/sync/plan-targets.js";
import { planPodWrites } from "../../../shared/sync/plan-writes.js";

const [deployment] = sampleDocuments("cnf-deployment.yaml");
const networks = networkMapOfDeployment(deployment as unknown as Record<string, unknown>);
const samples: RuleCr[] = sampleFiles()
  .filter((f) => !["cnf-deployment.yaml", "egress.yaml"].includes(f))
  .flatMap((f) => sampleDocuments(f))
  .map((raw) => {
    const parsed = requireKind(String(raw["kind"])).parseCr(raw);
    if (!parsed.ok) throw new Error(parsed.message);
    return parsed.value;
  });

describe("planRuleTarget over the samples", () => {
  it.each(samples.map((cr) => [cr.kind, cr] as const))(
    "%s becomes a target that a pod echoing its own body already holds",
    (_kind, cr) => {
      const result = planRuleTarget(cr, networks);
      if (!result.ok) throw new Error(result.message);
      const { target } = result;
      // The CNF object is named after the rule, "-" stored as "_" where the CNF needs it.
      expect(target.desired?.name).toBe(target.objectName);
      const echoed = holdingsOf(new Map([[target.collection, [target.desired!]]]));
      expect(planPodWrites([target], echoed).writes).toEqual([]);
      expect(planPodWrites([target], holdingsOf(new Map())).writes.map((w) => w.op)).toEqual([
        "create",
      ]);
    },
  );

  it("the sample http-rule (policy balance-1) targets the CNF object http_rule, naming balance_1", () => {
    const rule = samples.find((cr) => cr.kind === "Mwan3Rule");
    const result = rule && planRuleTarget(rule, networks);
    expect(result?.ok && [result.target.objectName, result.target.desired?.["policy"]]).toEqual([
      "http_rule",
      "balance_1",
    ]);
  });

  it("a rule being deleted wants its object absent", () => {
    const cr = {
      ...samples[0]!,
      metadata: { ...samples[0]!.metadata, deletionTimestamp: "2026-01-01T00:00:00Z" },
    };
    const result = planRuleTarget(cr, networks);
    expect(result.ok && result.target.desired).toBeNull();
  });

  it("a network missing from the CNF's annotation is a coded, permanent failure", () => {
    const policy = samples.find((s) => s.kind === "Mwan3Policy")!;
    const result = planRuleTarget(policy, new Map());
    expect(result).toMatchObject({ ok: false, code: "NetworkNotMapped" });
  });
});
