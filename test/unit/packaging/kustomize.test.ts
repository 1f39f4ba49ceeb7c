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

// With the API group: manifests/knative-deployments swaps Knative Services for core ones of the
// same names.
const key = (d: Doc): string =>
  `${d.apiVersion}/${d.kind}/${d.metadata?.namespace ?? ""}/${d.metadata?.name}`;

interface Kustomization {
  readonly resources?: string[];
  readonly configMapGenerator?: { name: string; namespace?: string }[];
  readonly patches?: { patch?: string; target?: { group?: string; kind?: string } }[];
}

/** Whether a `$patch: delete` patch of the kustomization removes `doc`: the one it names, or
 * every object of its target's group and kind. */
function deletedBy(kustomization: Kustomization): (doc: Doc) => boolean {
  const deletes = (kustomization.patches ?? [])
    .map((p) => ({ target: p.target, doc: parseDocs(p.patch ?? "")[0] }))
    .filter(({ doc }) => doc?.["$patch"] === "delete");
  return (d) =>
    deletes.some(({ target, doc }) =>
      target === undefined
        ? key(doc as Doc) === key(d)
        : d.kind === target.kind && d.apiVersion?.startsWith(`${target.group}/`),
    );
}

/** The objects a variant's own files declare, plus those of the folders it includes. */
function declared(folder: string): Doc[] {
  const kustomization = (yamlDocs(`${folder}/kustomization.yaml`)[0] ?? {}) as Kustomization;
  const resources = kustomization.resources ?? [];
  const own = resources
    .filter((r) => r.endsWith(".yaml"))
    .flatMap((f) => yamlDocs(`${folder}/${f}`));
  const included = resources
    .filter((r) => !r.endsWith(".yaml"))
    .flatMap((r) => declared(path.posix.normalize(`${folder}/${r}`)));
  const generated = (kustomization.configMapGenerator ?? []).map((g): Doc => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: g,
  }));
  const deleted = deletedBy(kustomization);
  return [...own, ...included, ...generated].filter((d) => !deleted(d));
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
  "manifests/knative-deployments",
  "manifests/functions",
  "manifests/openfaas",
  "manifests/webhook",
  "manifests/monitoring",
  "manifests/plain",
  "manifests/plain/webhook",
])("kustomize build %s", (folder) => {
  it("succeeds and emits every object its files declare, once", () => {
    const expected = declared(folder).map(key);
    const generated = expected.filter((k) => k.startsWith("v1/ConfigMap/"));
    const built = kustomizeBuild<Doc>(folder).map((d) => withoutHash(key(d), generated));
    expect([...built].sort()).toEqual([...new Set(expected)].sort());
  });
});
