/**
 * The registry's CR -> CNF conversion meets the CNF's own validation: every sample rule in
 * manifests/samples, converted by shared/kinds and written with shared/cnf, is accepted by the
 * simulator, reads back equal (so an unchanged rule causes no write), and deletes cleanly in
 * reverse dependency order.
 */
import { sampleDocuments, sampleFiles } from "../../../dev/world/samples.js";
import { startCnfSim, totalWrites, type CnfSim } from "../../../dev/cnf-sim/index.js";
import { CnfClient, CnfCredentials, CnfSessionCache } from "../../../shared/cnf/index.js";
import {
  RULE_KIND_NAMES,
  isRuleKind,
  networkMapOfDeployment,
  requireKind,
  sortForApply,
  sortForDelete,
  type RuleKindName,
} from "../../../shared/kinds/index.js";

interface SampleRule {
  readonly kind: RuleKindName;
  readonly name: string;
  readonly raw: unknown;
}

function loadSamples(): { rules: SampleRule[]; deployment: unknown } {
  const docs: unknown[] = sampleFiles().flatMap((file) => sampleDocuments(file));
  const deployment = docs.find((d) => (d as { kind?: string }).kind === "Deployment");
  const rules = docs.flatMap((doc) => {
    const { kind, metadata } = doc as { kind?: string; metadata?: { name?: string } };
    return kind !== undefined && isRuleKind(kind)
      ? [{ kind, name: metadata?.name ?? "", raw: doc }]
      : [];
  });
  return { rules, deployment };
}

describe("registry conversion against the CNF simulator (manifests/samples)", () => {
  let sim: CnfSim;
  let client: CnfClient;
  const { rules, deployment } = loadSamples();
  const networks = networkMapOfDeployment(
    deployment as Parameters<typeof networkMapOfDeployment>[0],
  );
  const desired = (rule: SampleRule) => {
    const entry = requireKind(rule.kind);
    const parsed = entry.parseCr(rule.raw);
    if (!parsed.ok) throw new Error(`${rule.kind}/${rule.name}: ${parsed.message}`);
    return { entry, body: entry.toCnf(parsed.value, { networks }) };
  };

  beforeAll(async () => {
    sim = await startCnfSim({ host: "127.0.0.45", interfaces: ["net0", "net1", "net2"] });
    client = new CnfClient({
      baseUrl: sim.url,
      credentials: new CnfCredentials("root", ""),
      sessions: new CnfSessionCache(),
    });
  });
  afterAll(() => sim.close());

  it("has a sample for every rule kind", () => {
    expect(new Set(rules.map((r) => r.kind))).toEqual(new Set(RULE_KIND_NAMES));
  });

  it("applies every sample in dependency order, and each reads back equal to what was written", async () => {
    for (const rule of sortForApply(rules)) {
      const { entry, body } = desired(rule);
      await client.update(entry.cnf, body, { item: entry.cnfObjectSchema });
      const actual = await client.get(entry.cnf, entry.cnfObjectName(rule.name), {
        item: entry.cnfObjectSchema,
      });
      expect({ rule: `${rule.kind}/${rule.name}`, diff: entry.cnfDiff(body, actual) }).toEqual({
        rule: `${rule.kind}/${rule.name}`,
        diff: [],
      });
    }
    // PUT is one write; where the CNF has no PUT (CNFService) an update is DELETE + POST.
    const writesPerUpdate = (r: SampleRule) => (requireKind(r.kind).cnf.update === "put" ? 1 : 2);
    expect(totalWrites(sim.counters())).toBe(rules.reduce((sum, r) => sum + writesPerUpdate(r), 0));
  });

  it("finds nothing to write on a second pass", async () => {
    sim.resetCounters();
    for (const rule of sortForApply(rules)) {
      const { entry, body } = desired(rule);
      const actual = await client.get(entry.cnf, entry.cnfObjectName(rule.name), {
        item: entry.cnfObjectSchema,
      });
      expect(entry.cnfEqual(body, actual)).toBe(true);
    }
    expect(totalWrites(sim.counters())).toBe(0);
  });

  it("deletes every sample in reverse dependency order, leaving the CNF empty", async () => {
    for (const rule of sortForDelete(rules)) {
      const entry = requireKind(rule.kind);
      expect(await client.delete(entry.cnf, entry.cnfObjectName(rule.name))).toBe("deleted");
    }
    expect(Object.values(sim.state().collections).flat()).toEqual([]);
  });
});
