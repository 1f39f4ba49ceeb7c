// Every install variant builds with kustomize itself (dev/kustomize/build.sh builds it from its Go
// module; .ci/run does that first), and the output holds every object of the variant's files,
// once: its own files, the folders it includes, its generated ConfigMaps, less what its patches
// delete. Without the binary: in CI a failure, elsewhere a skip with the command that builds it.
import path from "node:path";
import { parseDocs, yamlDocs, type Doc } from "./repo-files.js";
import {
  describeWithKustomize,
  kustomizeAvailable,
  kustomizeBuild,
} from "../../support/kustomize.js";
import { inCi } from "../../support/in-ci.js";

const key = (d: Doc): string => `${d.kind}/${d.metadata?.namespace ?? ""}/${d.metadata?.name}`;

interface Kustomization {
  readonly resources?: string[];
  readonly configMapGenerator?: { name: string; namespace?: string }[];
  readonly patches?: { patch?: string }[];
}

/** Objects a `$patch: delete` patch of the kustomization removes. */
function deletedBy(kustomization: Kustomization): string[] {
  return (kustomization.patches ?? [])
    .map((p) => (p.patch === undefined ? undefined : parseDocs(p.patch)[0]))
    .filter((d): d is Doc => d !== undefined && d["$patch"] === "delete")
    .map(key);
}

/** The objects a variant's own files declare, plus those of the folders it includes. */
function declared(folder: string): string[] {
  const kustomization = (yamlDocs(`${folder}/kustomization.yaml`)[0] ?? {}) as Kustomization;
  const resources = kustomization.resources ?? [];
  const own = resources
    .filter((r) => r.endsWith(".yaml"))
    .flatMap((f) => yamlDocs(`${folder}/${f}`));
  const included = resources
    .filter((r) => !r.endsWith(".yaml"))
    .flatMap((r) => declared(path.posix.normalize(`${folder}/${r}`)));
  const generated = (kustomization.configMapGenerator ?? []).map(
    (g) => `ConfigMap/${g.namespace ?? ""}/${g.name}`,
  );
  const deleted = deletedBy(kustomization);
  return [...own.map(key), ...included, ...generated].filter((k) => !deleted.includes(k));
}

/** A generated ConfigMap's key without the content hash kustomize appends to its name. */
const withoutHash = (built: string, generated: readonly string[]): string => {
  const unhashed = built.replace(/-[a-z0-9]{10}$/, "");
  return generated.includes(unhashed) ? unhashed : built;
};

describe("kustomize availability", () => {
  // Runs everywhere (no skipped test in a green CI run); fails only in CI without the binary.
  it("kustomize was built by .ci/run (npm run kustomize:build) when in CI", () => {
    expect(kustomizeAvailable || !inCi).toBe(true);
  });
});

describeWithKustomize().each([
  "manifests/rbac",
  "manifests/knative",
  "manifests/openfaas",
  "manifests/webhook",
  "manifests/monitoring",
  "manifests/plain",
  "manifests/plain/webhook",
])("kustomize build %s", (folder) => {
  it("succeeds and emits every object its files declare, once", () => {
    const expected = declared(folder);
    const generated = expected.filter((k) => k.startsWith("ConfigMap/"));
    const built = kustomizeBuild<Doc>(folder).map((d) => withoutHash(key(d), generated));
    expect([...built].sort()).toEqual([...new Set(expected)].sort());
  });
});
