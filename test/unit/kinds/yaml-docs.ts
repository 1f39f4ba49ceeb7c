// Reads every YAML document of a file or of all *.yaml files of a folder, for sample tests.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export interface YamlDoc {
  readonly file: string;
  readonly value: Record<string, unknown>;
}

export function yamlDocsOfFile(file: string): YamlDoc[] {
  return parseAllDocuments(readFileSync(file, "utf8")).map((doc) => {
    if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]?.message}`);
    return { file: path.relative(REPO_ROOT, file), value: doc.toJS() as Record<string, unknown> };
  });
}

/** The objects of a folder: a kustomization.yaml is kustomize's input, not an API object. */
export function yamlDocsOfDir(dir: string): YamlDoc[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .sort()
    .flatMap((f) => yamlDocsOfFile(path.join(dir, f)));
}

export const SEED_SAMPLES = yamlDocsOfFile(
  path.join(REPO_ROOT, "test/unit/kinds/fixtures/seed-samples.yaml"),
);
export const MANIFEST_SAMPLES = yamlDocsOfDir(path.join(REPO_ROOT, "manifests/samples"));
/** manifests/samples/clusterlink: one sample of every ClusterLink kind (not applied by the demo). */
export const CLUSTERLINK_SAMPLES = yamlDocsOfDir(
  path.join(REPO_ROOT, "manifests/samples/clusterlink"),
);
