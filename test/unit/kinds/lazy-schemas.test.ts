// Issue 28 item 5: a function process serving one rule kind must not build every kind's schemas
// at start (reconcile-rule idled over its memory target); each entry builds its own on first use.
import { jest } from "@jest/globals";
import * as z from "zod";
import { RULE_API_VERSION } from "../../../shared/kinds/index.js";
import { defineRuleKind } from "../../../shared/kinds/entry.js";

function kindWithSpySchema() {
  const build = jest.fn(() => z.strictObject({ policy: z.string().min(1) }));
  const entry = defineRuleKind<{ policy: string }>({
    kind: "Mwan3Rule",
    plural: "mwan3rules",
    shortNames: [],
    finalizer: "rule.finalizers.sdewan.akraino.org",
    description: "a test kind",
    specSchema: build,
    cnf: {
      module: "mwan3",
      collection: "rules",
      restartService: "mwan3",
      update: "put",
      shape: { scalars: ["policy"] },
    },
    dependsOn: [],
    applyRank: 0,
    nameRule: null,
    references: () => [],
    toCnf: (name, spec) => ({ name, policy: spec.policy }),
    example: { namePrefix: "r", spec: () => ({ policy: "p" }) },
  });
  return { entry, build };
}

it("a kind builds its schemas when first used, not when defined, and only once", () => {
  const { entry, build } = kindWithSpySchema();
  expect(build).not.toHaveBeenCalled();

  expect(entry.parseSpec({ policy: "p" }).ok).toBe(true);
  expect(entry.parseSpec({ policy: "" }).ok).toBe(false);
  const cr = {
    apiVersion: RULE_API_VERSION,
    kind: "Mwan3Rule",
    metadata: { name: "r1" },
    spec: { policy: "p" },
  };
  expect(entry.parseCr(cr).ok).toBe(true);
  expect(entry.crSchema.safeParse(cr).success).toBe(true);
  expect(entry.secretRefs({ policy: "p" })).toEqual([]);
  expect(build).toHaveBeenCalledTimes(1);
});

it("the CNF reply schemas, built on first use, still check a reply's shape", () => {
  const { entry } = kindWithSpySchema();
  expect(entry.cnfListSchema.safeParse({ rules: [{ name: "r1", policy: "p" }] }).success).toBe(
    true,
  );
  expect(entry.cnfListSchema.safeParse({ rules: "none" }).success).toBe(false);
  expect(entry.cnfObjectSchema).toBe(entry.cnfObjectSchema);
});
