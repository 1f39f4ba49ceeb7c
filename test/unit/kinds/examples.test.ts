// Every kind's registry example (RuleKindEntry.example), which the bench and the soak create and
// change without knowing the kind: its specs are valid, its names pass the kind's name rule, it
// references only the kinds it depends on and only through `ref`, and a change keeps the spec
// valid and its references as they were. The CNF side: test/unit/cnf/examples-against-sim.test.ts.
import {
  ALL_RULE_KINDS,
  compareApplyOrder,
  exampleCounts,
  exampleRules,
  requireKind,
  type ExampleRef,
  type RuleKindEntry,
  type RuleKindName,
} from "../../../shared/kinds/index.js";

const kinds = ALL_RULE_KINDS.map((entry) => [entry.kind, entry] as const);
const INDICES = [0, 1, 7, 255, 256, 999];
const ref: ExampleRef = (kind, i) => `${requireKind(kind).example.namePrefix}${i}`;

const parsedSpec = (entry: RuleKindEntry, spec: unknown): Readonly<Record<string, unknown>> => {
  const parsed = entry.parseSpec(spec);
  if (!parsed.ok) throw new Error(`${entry.kind}: ${parsed.message}`);
  return parsed.value;
};

describe.each(kinds)("the %s example", (kind, entry) => {
  it.each(INDICES)("spec %i is valid and references only through ref, kinds it depends on", (i) => {
    const seen: [RuleKindName, number][] = [];
    const spec = entry.example.spec(i, (target, j) => {
      seen.push([target, j]);
      return ref(target, j);
    });
    parsedSpec(entry, spec);
    const references = entry.references(spec).map((r) => `${r.kind}/${r.name}`);
    for (const r of entry.references(spec)) expect(entry.dependsOn).toContain(r.kind);
    expect(new Set(references)).toEqual(new Set(seen.map(([k, j]) => `${k}/${ref(k, j)}`)));
  });

  it("names up to the thousandth rule pass the kind's name rule, with a purpose prefix", () => {
    for (const i of INDICES) {
      expect(entry.checkName(`ab${entry.example.namePrefix}${i}`)).toBeNull();
    }
  });

  it("a change, merged into a spec, keeps it valid and its references as they are", () => {
    const change = entry.example.change;
    if (change === undefined) return; // the kind declares none; the soak skips its rules
    for (const i of INDICES) {
      const spec = entry.example.spec(i, ref);
      for (const n of [0, 1, 2, 249, 250, 59_999, 999_999]) {
        const changed = { ...spec, ...change(n) };
        parsedSpec(entry, changed);
        expect(entry.references(changed)).toEqual(entry.references(spec));
      }
    }
  });
});

describe("examples across kinds", () => {
  it("name prefixes differ, so generated names never collide between kinds of one collection", () => {
    const prefixes = ALL_RULE_KINDS.map((e) => e.example.namePrefix);
    expect(new Set(prefixes).size).toBe(prefixes.length);
  });

  it.each([0, 5, 11, 300, 1000])(
    "exampleRules(%i) spreads that many rules evenly over every kind, in apply order, each reference resolving within the set",
    (count) => {
      const rules = exampleRules(count, "ab");
      expect(rules).toHaveLength(count);
      const counts = Object.values(exampleCounts(count));
      expect(Math.max(...counts) - Math.min(...counts)).toBeLessThanOrEqual(1);
      for (let i = 1; i < rules.length; i += 1) {
        expect(compareApplyOrder(rules[i - 1]!.kind, rules[i]!.kind)).toBeLessThanOrEqual(0);
      }
      const present = new Set(rules.map((r) => `${r.kind}/${r.name}`));
      expect(present.size).toBe(count);
      for (const rule of rules) {
        expect(rule.name.startsWith("ab")).toBe(true);
        for (const r of requireKind(rule.kind).references(rule.spec)) {
          if (count >= ALL_RULE_KINDS.length) expect(present).toContain(`${r.kind}/${r.name}`);
        }
      }
    },
  );
});
