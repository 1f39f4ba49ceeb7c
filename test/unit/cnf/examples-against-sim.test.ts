/**
 * The registry's examples (RuleKindEntry.example) meet the CNF's own validation, as the bench
 * and the soak use them: a set of three rules of every kind (exampleRules), converted and
 * written in apply order, is accepted by the simulator, and so is each declared change.
 */
import { startCnfSim, type CnfSim } from "../../../dev/cnf-sim/index.js";
import { CnfClient, CnfCredentials, CnfSessionCache } from "../../../shared/cnf/index.js";
import {
  ALL_RULE_KINDS,
  exampleRules,
  parseNfnNetworkAnnotation,
  requireKind,
} from "../../../shared/kinds/index.js";

const RULES = exampleRules(3 * ALL_RULE_KINDS.length);
const networks = parseNfnNetworkAnnotation(
  JSON.stringify({
    type: "ovn4nfv",
    interface: [
      { name: "ovn-net1", interface: "net1" },
      { name: "ovn-net2", interface: "net2" },
    ],
  }),
);

describe("registry examples against the CNF simulator", () => {
  let sim: CnfSim;
  let client: CnfClient;

  beforeAll(async () => {
    sim = await startCnfSim({ host: "127.0.0.46", interfaces: ["net0", "net1", "net2"] });
    client = new CnfClient({
      baseUrl: sim.url,
      credentials: new CnfCredentials("root", ""),
      sessions: new CnfSessionCache(),
    });
  });
  afterAll(() => sim.close());

  it("accepts every kind's examples in apply order, and every declared change of them", async () => {
    for (const [i, rule] of RULES.entries()) {
      const entry = requireKind(rule.kind);
      const write = async (spec: unknown): Promise<void> => {
        const cnf = entry.toCnf({ metadata: { name: rule.name }, spec }, { networks });
        await client.update(entry.cnf, cnf, { item: entry.cnfObjectSchema });
        const actual = await client.get(entry.cnf, rule.name, { item: entry.cnfObjectSchema });
        expect({ rule: `${rule.kind}/${rule.name}`, diff: entry.cnfDiff(cnf, actual) }).toEqual({
          rule: `${rule.kind}/${rule.name}`,
          diff: [],
        });
      };
      await write(rule.spec);
      const change = entry.example.change;
      if (change !== undefined) await write({ ...rule.spec, ...change(12_345 + i) });
    }
    expect(Object.values(sim.state().collections).flat()).toHaveLength(RULES.length);
  });
});
