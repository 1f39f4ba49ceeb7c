/** The documents of manifests/samples: what the demo applies and the rule tests create. */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../control-plane/binaries.js";
import { isRuleKind, requireKind, type RuleKindName } from "../../shared/kinds/index.js";

const SAMPLES_DIR = path.join(repoRoot, "manifests/samples");

/** One YAML document of a sample file, as parsed. */
export interface SampleDocument {
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly [field: string]: unknown };
  readonly [field: string]: unknown;
}

/** A rule CR of the samples: its kind, name and spec. */
export interface SampleRule {
  readonly kind: RuleKindName;
  readonly name: string;
  readonly spec: Record<string, unknown>;
}

/** The object files of manifests/samples (not its kustomization.yaml), sorted. */
export function sampleFiles(): string[] {
  return readdirSync(SAMPLES_DIR)
    .filter((file) => file.endsWith(".yaml") && file !== "kustomization.yaml")
    .sort();
}

/** Every document of manifests/samples/`file`, in file order. */
export function sampleDocuments(file: string): SampleDocument[] {
  return parseAllDocuments(readFileSync(path.join(SAMPLES_DIR, file), "utf8"))
    .map((doc) => doc.toJS() as SampleDocument | null)
    .filter((doc): doc is SampleDocument => doc !== null);
}

/** Every rule of manifests/samples, files sorted, documents in file order. */
export function sampleRules(): SampleRule[] {
  return sampleFiles()
    .flatMap(sampleDocuments)
    .flatMap((doc) =>
      isRuleKind(doc.kind)
        ? [
            {
              kind: doc.kind,
              name: doc.metadata.name,
              spec: doc["spec"] as Record<string, unknown>,
            },
          ]
        : [],
    );
}

/** The sample rule of `kind` (the first one, or the one named `name`). */
export function sampleRule(kind: string, name?: string): SampleRule {
  const found = sampleRules().find(
    (r) => r.kind === kind && (name === undefined || r.name === name),
  );
  if (found === undefined) throw new Error(`no sample ${kind} ${name ?? ""} in manifests/samples`);
  return found;
}

/**
 * What a pod holds once it has `rules`: CNF object names (as the CNF stores them: http_rule for
 * http-rule) per collection ("mwan3/rules"), sorted, as CnfFleet.holdings reports them.
 */
export function holdingsOf(rules: readonly SampleRule[] = sampleRules()): Record<string, string[]> {
  const held: Record<string, string[]> = {};
  for (const rule of rules) {
    const entry = requireKind(rule.kind);
    (held[`${entry.cnf.module}/${entry.cnf.collection}`] ??= []).push(
      entry.cnfObjectName(rule.name),
    );
  }
  for (const names of Object.values(held)) names.sort();
  return held;
}
