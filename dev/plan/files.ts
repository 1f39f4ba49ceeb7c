/**
 * What `npm run plan` is asked: its options, and the objects of the files it is given (a file, or
 * every .yaml, .yml and .json file of a directory, as `kubectl apply -f dir/` reads them; YAML
 * streams and `List`s are unpacked). A document that is not a Kubernetes object is an error that
 * names the file and the document.
 */
import { readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { parseAllDocuments } from "yaml";
import { kubeObjectSchema, type KubeObject } from "../../shared/kube/index.js";

export interface PlanOptions {
  readonly files: readonly string[];
  readonly delete: boolean;
  readonly output: "table" | "json";
  /** Objects without a namespace go here (kubectl: the context's namespace, else default). */
  readonly namespace: string;
}

export const USAGE =
  "usage: npm run plan -- -f <file-or-dir> [-f ...] [--delete] [-o json|table] [-n <namespace>]";

/** The options of `argv`, or a message saying what is wrong with them. */
export function parsePlanArgs(argv: readonly string[]): PlanOptions | { readonly error: string } {
  let values;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      options: {
        filename: { type: "string", short: "f", multiple: true },
        delete: { type: "boolean", default: false },
        output: { type: "string", short: "o", default: "table" },
        namespace: { type: "string", short: "n", default: "default" },
      },
      allowPositionals: false,
    }));
  } catch (error) {
    return { error: `${(error as Error).message}\n${USAGE}` };
  }
  const files = values.filename ?? [];
  if (files.length === 0) return { error: `no -f given\n${USAGE}` };
  if (values.output !== "table" && values.output !== "json") {
    return { error: `-o must be json or table, got ${JSON.stringify(values.output)}\n${USAGE}` };
  }
  return { files, delete: values.delete, output: values.output, namespace: values.namespace };
}

const MANIFEST = /\.(ya?ml|json)$/;

/** The files `given` names: a file itself, or a directory's manifests in name order. */
export function manifestFiles(given: string): string[] {
  if (!statSync(given).isDirectory()) return [given];
  return readdirSync(given)
    .filter((name) => MANIFEST.test(name))
    .sort()
    .map((name) => path.join(given, name));
}

function objectsOf(value: unknown, where: string): KubeObject[] {
  if (value === null || value === undefined) return [];
  const list = value as { kind?: unknown; items?: unknown };
  if (typeof list.kind === "string" && list.kind.endsWith("List") && Array.isArray(list.items)) {
    return list.items.flatMap((item, i) => objectsOf(item, `${where} item ${i}`));
  }
  const parsed = kubeObjectSchema.safeParse(value);
  if (!parsed.success) {
    throw new Error(`${where} is not a Kubernetes object (apiVersion, kind, metadata.name)`);
  }
  return [parsed.data];
}

/** Every object of the files `given` names, in file and document order. */
export function loadManifests(given: readonly string[]): KubeObject[] {
  return given.flatMap(manifestFiles).flatMap((file) => {
    const docs = parseAllDocuments(readFileSync(file, "utf8"));
    return docs.flatMap((doc, i) => {
      if (doc.errors.length > 0)
        throw new Error(`${file} document ${i + 1}: ${doc.errors[0]?.message}`);
      return objectsOf(doc.toJS(), `${file} document ${i + 1}`);
    });
  });
}
