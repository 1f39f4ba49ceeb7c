// Reading the repository's packaging files (manifests, stack.yml, Dockerfile) for the packaging
// tests: YAML documents as plain objects, paths relative to the repository root.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

export const repoPath = (relative: string): string => path.join(REPO, relative);

export const readText = (relative: string): string => readFileSync(repoPath(relative), "utf8");

/** A Kubernetes-style document: what the tests look at, loosely typed. */
export interface Doc {
  readonly apiVersion?: string;
  readonly kind?: string;
  readonly metadata?: {
    readonly name?: string;
    readonly namespace?: string;
    readonly labels?: Record<string, string>;
    readonly annotations?: Record<string, string>;
  };
  readonly [key: string]: unknown;
}

/** The documents of a YAML text (empty documents left out). */
export function parseDocs(text: string): Doc[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);
}

export const yamlDocs = (relative: string): Doc[] => parseDocs(readText(relative));

/** Every YAML file of a manifests folder except its kustomization. */
export function manifestFiles(folder: string): string[] {
  return readdirSync(repoPath(folder))
    .filter((f) => f.endsWith(".yaml") && f !== "kustomization.yaml")
    .sort();
}

export const docsOfFolder = (folder: string): Doc[] =>
  manifestFiles(folder).flatMap((f) => yamlDocs(`${folder}/${f}`));

export function ofKind(docs: readonly Doc[], kind: string): Doc[] {
  return docs.filter((d) => d.kind === kind);
}

/** A nested field by path, e.g. at(doc, "spec", "template", "spec"). */
export function at(value: unknown, ...keys: (string | number)[]): unknown {
  let current = value;
  for (const key of keys) {
    if (current === null || typeof current !== "object") return undefined;
    current = (current as Record<string | number, unknown>)[key];
  }
  return current;
}
