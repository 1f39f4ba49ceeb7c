/**
 * Generated rule sets on the API server: the sets themselves are the registry's examples
 * (exampleRules in shared/kinds: `count` rules spread evenly over every kind, every reference
 * resolvable, every spec accepted by the registry and the CNF simulator).
 */
import pLimit from "p-limit";
import type { RawApi } from "./raw-api.js";
import {
  PURPOSE_LABEL,
  RULE_API_VERSION,
  RULE_KIND_NAMES,
  requireKind,
  type ExampleRule,
} from "../../shared/kinds/index.js";

/** A rule of a generated set: each kind's registry example (shared/kinds/examples.ts). */
export type GeneratedRule = ExampleRule;

/** Creates the rules as CRs labelled for `purpose`, `concurrency` requests at a time. */
export async function createRules(
  raw: RawApi,
  namespace: string,
  purpose: string,
  rules: readonly GeneratedRule[],
  concurrency = 16,
): Promise<void> {
  const limit = pLimit(concurrency);
  await Promise.all(
    rules.map((rule) =>
      limit(() =>
        raw.must(
          "POST",
          `/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/${namespace}/${requireKind(rule.kind).plural}`,
          {
            apiVersion: RULE_API_VERSION,
            kind: rule.kind,
            metadata: { name: rule.name, labels: { [PURPOSE_LABEL]: purpose } },
            spec: rule.spec,
          },
        ),
      ),
    ),
  );
}

/** The distinct CNF collections rules live in ("sdewan/mwan3/v1/policies", ...). */
export function ruleCollections(): string[] {
  return [
    ...new Set(
      RULE_KIND_NAMES.map((k) => `${requireKind(k).cnf.module}/${requireKind(k).cnf.collection}`),
    ),
  ];
}
