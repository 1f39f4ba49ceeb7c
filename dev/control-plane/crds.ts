// Installs CustomResourceDefinitions with server-side apply and waits until each is Established
// and its resources answer (the REST handler can lag the Established condition by a moment).
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { type ApiEndpoint, apiRequest, pollUntil } from "./api.js";

const CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const FIELD_MANAGER = "sdewan-control-plane";

interface CrdDocument {
  readonly kind?: unknown;
  readonly metadata?: { readonly name?: unknown };
  readonly spec?: {
    readonly group?: unknown;
    readonly scope?: unknown;
    readonly names?: { readonly plural?: unknown };
    readonly versions?: readonly { readonly name?: unknown; readonly served?: unknown }[];
  };
}

interface Condition {
  readonly type?: string;
  readonly status?: string;
  readonly message?: string;
}

export interface Crd {
  readonly name: string;
  readonly group: string;
  readonly plural: string;
  readonly servedVersions: readonly string[];
  readonly manifest: Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function toCrd(value: unknown, origin: string): Crd {
  const doc = value as CrdDocument;
  if (!isRecord(value) || doc.kind !== "CustomResourceDefinition") {
    throw new Error(`${origin}: not a CustomResourceDefinition`);
  }
  const name = doc.metadata?.name;
  const group = doc.spec?.group;
  const plural = doc.spec?.names?.plural;
  if (typeof name !== "string" || typeof group !== "string" || typeof plural !== "string") {
    throw new Error(`${origin}: CRD without metadata.name, spec.group or spec.names.plural`);
  }
  const servedVersions = (doc.spec?.versions ?? [])
    .filter((v) => v.served === true && typeof v.name === "string")
    .map((v) => String(v.name));
  return { name, group, plural, servedVersions, manifest: value };
}

/** Every CRD in the YAML files (*.yaml, *.yml; multi-document allowed) of a folder, sorted by file. */
export async function readCrdDir(dir: string): Promise<Crd[]> {
  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (error) {
    if (isRecord(error) && error.code === "ENOENT") return [];
    throw error;
  }
  const files = entries.filter((f) => /\.ya?ml$/.test(f)).sort();
  const crds: Crd[] = [];
  for (const file of files) crds.push(...(await readCrdFile(path.join(dir, file))));
  return crds;
}

export async function readCrdFile(file: string): Promise<Crd[]> {
  const docs = parseAllDocuments(await readFile(file, "utf8"));
  const crds: Crd[] = [];
  for (const [index, doc] of docs.entries()) {
    if (doc.errors.length > 0)
      throw new Error(`${file}: ${doc.errors[0]?.message ?? "YAML error"}`);
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) continue;
    crds.push(toCrd(value, `${file} (document ${index + 1})`));
  }
  return crds;
}

function established(body: string): { ok: boolean; summary: string } {
  const parsed: unknown = JSON.parse(body);
  const status = isRecord(parsed) ? parsed.status : undefined;
  const conditions = (
    isRecord(status) && Array.isArray(status.conditions) ? status.conditions : []
  ) as Condition[];
  const find = (type: string): Condition | undefined => conditions.find((c) => c.type === type);
  const summary = conditions
    .map((c) => `${c.type}=${c.status}${c.message ? ` (${c.message})` : ""}`)
    .join(", ");
  return { ok: find("Established")?.status === "True", summary: summary || "no conditions yet" };
}

export async function applyCrds(
  endpoint: ApiEndpoint,
  crds: readonly Crd[],
  timeoutMs = 30_000,
): Promise<void> {
  for (const crd of crds) {
    const res = await apiRequest(
      endpoint,
      `${CRD_PATH}/${crd.name}?fieldManager=${FIELD_MANAGER}&force=true`,
      {
        method: "PATCH",
        contentType: "application/apply-patch+yaml",
        body: JSON.stringify(crd.manifest),
      },
    );
    if (res.status >= 300)
      throw new Error(`applying CRD ${crd.name}: HTTP ${res.status}: ${res.body}`);
  }
  await Promise.all(crds.map((crd) => waitEstablished(endpoint, crd, timeoutMs)));
}

async function waitEstablished(endpoint: ApiEndpoint, crd: Crd, timeoutMs: number): Promise<void> {
  let last = "no answer yet";
  await pollUntil(
    async () => {
      const res = await apiRequest(endpoint, `${CRD_PATH}/${crd.name}`);
      if (res.status !== 200) {
        last = `HTTP ${res.status}`;
        return undefined;
      }
      const state = established(res.body);
      last = state.summary;
      return state.ok ? true : undefined;
    },
    () => `CRD ${crd.name} to be Established (last: ${last})`,
    { timeoutMs },
  );
  for (const version of crd.servedVersions) {
    const list = `/apis/${crd.group}/${version}/${crd.plural}?limit=1`;
    await pollUntil(
      async () => ((await apiRequest(endpoint, list)).status === 200 ? true : undefined),
      () => `${list} to be served`,
      { timeoutMs },
    );
  }
}
