// Knative's real PingSource adapter (`mtping`, ./cmd/mtping, built by dev/knative/build.sh from
// the vendored eventing sources) run outside a cluster against the test control plane, as Knative
// runs it for the PingSource of manifests/knative/pingsource.yaml (facts from the shared tools
// README): the PingSource CRD of the same eventing commit; a system namespace of its own holding
// Knative's `config-logging` and `config-observability` ConfigMaps and mtping's leader-election
// Lease; the PingSource's status written here, as Knative's PingSource controller would (the sink
// URI and Ready=True; without Ready mtping schedules nothing). mtping binds *:8080 and *:8008, so it
// runs in a network namespace of its own (KnativeAdapter, netns-relay.ts).
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { apiRequest, type ApiEndpoint } from "../../dev/control-plane/api.js";
import { applyCrds, readCrdFile } from "../../dev/control-plane/crds.js";
import { repoRoot } from "../../dev/control-plane/binaries.js";
import { adapterAvailability, skipUnlessCi, type AvailabilityOptions } from "./knative.js";
import { inCi } from "../support/in-ci.js";

type Doc = Record<string, unknown>;

/** mtping and the eventing sources it came with (Knative's CRDs and ConfigMaps), or why not (in CI thrown). */
export function mtpingAvailability(options: AvailabilityOptions = {}): {
  binary: string;
  sources: string;
  skip?: string;
} {
  const adapter = adapterAvailability(options);
  const dir = path.dirname(adapter.binary);
  const found = { binary: path.join(dir, "mtping"), sources: path.join(dir, "kn-min") };
  if (adapter.skip !== undefined) return { ...found, skip: adapter.skip };
  const missing = existsSync(found.binary)
    ? undefined
    : "run `npm run knative:build` (it builds mtping)";
  return { ...found, ...skipUnlessCi(options.ci ?? inCi, missing) };
}

async function request(
  api: ApiEndpoint,
  method: string,
  url: string,
  body?: object,
  contentType?: string,
): Promise<number> {
  const res = await apiRequest(api, url, {
    method,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    ...(contentType === undefined ? {} : { contentType }),
  });
  if (res.status >= 300 && res.status !== 409) {
    throw new Error(`${method} ${url}: HTTP ${res.status}: ${res.body}`);
  }
  return res.status;
}

type PingSourceDoc = Doc & {
  metadata: { name: string; namespace: string };
  spec: Doc & { schedule: string; data: string };
};

/** Every PingSource of manifests/knative/pingsource.yaml (the resync, the heartbeat tick). */
export function manifestPingSources(): PingSourceDoc[] {
  return parseAllDocuments(
    readFileSync(path.join(repoRoot, "manifests/knative/pingsource.yaml"), "utf8"),
  )
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is PingSourceDoc => d?.["kind"] === "PingSource");
}

/** The resync PingSource of manifests/knative/pingsource.yaml (sdewan-resync). */
export function manifestPingSource(): PingSourceDoc {
  const doc = manifestPingSources().find((d) => d.metadata.name === "sdewan-resync");
  if (doc === undefined) throw new Error("no PingSource sdewan-resync in manifests/knative");
  return doc;
}

/**
 * Installs what mtping needs that is not the PingSource itself: Knative's PingSource CRD and, in
 * `systemNamespace`, Knative's logging and observability ConfigMaps.
 */
export async function installPingSourceSupport(
  api: ApiEndpoint,
  sources: string,
  systemNamespace: string,
): Promise<void> {
  await applyCrds(
    api,
    await readCrdFile(path.join(sources, "config/core/resources/pingsource.yaml")),
  );
  for (const file of ["logging.yaml", "observability.yaml"]) {
    const doc = parseAllDocuments(
      readFileSync(path.join(sources, "config/core/configmaps", file), "utf8"),
    )
      .map((d) => d.toJS() as Doc | null)
      .find((d) => d?.["kind"] === "ConfigMap") as (Doc & { metadata: Doc }) | undefined;
    if (doc === undefined) throw new Error(`no ConfigMap in Knative's ${file}`);
    doc.metadata["namespace"] = systemNamespace;
    await request(api, "POST", `/api/v1/namespaces/${systemNamespace}/configmaps`, doc);
  }
}

const pingSourcePath = (namespace: string, name?: string) =>
  `/apis/sources.knative.dev/v1/namespaces/${namespace}/pingsources${name === undefined ? "" : `/${name}`}`;

/**
 * Creates `source` and marks it as Knative's PingSource controller would once it resolved the
 * sink: status.sinkUri = `sinkUri` and Ready=True.
 */
export async function createReadyPingSource(
  api: ApiEndpoint,
  source: ReturnType<typeof manifestPingSource>,
  sinkUri: string,
): Promise<void> {
  const { namespace, name } = source.metadata;
  await request(api, "POST", "/api/v1/namespaces", { metadata: { name: namespace } });
  await request(api, "POST", pingSourcePath(namespace), source);
  const now = new Date().toISOString();
  await request(
    api,
    "PATCH",
    `${pingSourcePath(namespace, name)}/status`,
    {
      status: {
        sinkUri,
        conditions: ["Ready", "SinkProvided", "Deployed"].map((type) => ({
          type,
          status: "True",
          lastTransitionTime: now,
        })),
      },
    },
    "application/merge-patch+json",
  );
}

export async function deletePingSource(
  api: ApiEndpoint,
  source: ReturnType<typeof manifestPingSource>,
): Promise<void> {
  const { namespace, name } = source.metadata;
  const res = await apiRequest(api, pingSourcePath(namespace, name), { method: "DELETE" });
  if (res.status >= 300 && res.status !== 404) {
    throw new Error(`deleting PingSource ${namespace}/${name}: HTTP ${res.status}`);
  }
}

/** mtping's environment outside a cluster (its Lease and ConfigMaps in `systemNamespace`). */
export const mtpingEnvironment = (systemNamespace: string): Record<string, string> => ({
  SYSTEM_NAMESPACE: systemNamespace,
  NAMESPACE: systemNamespace,
  POD_NAME: "pingsource-mt-adapter-e2e",
  // No send timeout of its own (the function's answer decides).
  K_SINK_TIMEOUT: "-1",
});
