// Every install variant builds with kustomize itself (dev/kustomize/build.sh builds it from its Go
// module; .ci/run does that first), and the output holds every object of the variant's files.
// Without the binary: in CI a failure, elsewhere a skip with the command that builds it.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { parseAllDocuments } from "yaml";
import { manifestFiles, repoPath, yamlDocs, type Doc } from "./repo-files.js";
import { inCi } from "../../support/in-ci.js";

const binary =
  process.env["KUSTOMIZE"] ??
  execFileSync("bash", [repoPath("dev/kustomize/build.sh"), "--print-path"], { encoding: "utf8" })
    .trim()
    .split("\n")
    .pop() ??
  "";
const available = binary !== "" && existsSync(binary);
if (!available && !inCi) {
  console.warn("kustomize checks SKIPPED: run `npm run kustomize:build` (or set KUSTOMIZE)");
}

const key = (d: Doc): string => `${d.kind}/${d.metadata?.namespace ?? ""}/${d.metadata?.name}`;

/** The objects a variant's own files declare, plus those of the folders it includes. */
function declared(folder: string): string[] {
  const resources = (yamlDocs(`${folder}/kustomization.yaml`)[0]?.["resources"] ?? []) as string[];
  const own = manifestFiles(folder)
    .filter((f) => resources.includes(f))
    .flatMap((f) => yamlDocs(`${folder}/${f}`));
  const included = resources
    .filter((r) => r.startsWith("../"))
    .flatMap((r) => declared(`${folder}/${r}`.replace(/[^/]+\/\.\.\//, "")));
  return [...own.map(key), ...included];
}

describe("kustomize availability", () => {
  // Runs everywhere (no skipped test in a green CI run); fails only in CI without the binary.
  it("kustomize was built by .ci/run (npm run kustomize:build) when in CI", () => {
    expect(available || !inCi).toBe(true);
  });
});

(available || inCi ? describe : describe.skip).each([
  "manifests/rbac",
  "manifests/knative",
  "manifests/openfaas",
  "manifests/webhook",
  "manifests/monitoring",
])("kustomize build %s", (folder) => {
  it("succeeds and emits every object its files declare, once", () => {
    const output = execFileSync(binary, ["build", repoPath(folder)], {
      encoding: "utf8",
      timeout: 60_000,
    });
    const built = parseAllDocuments(output).map((d) => key(d.toJS() as Doc));
    expect([...built].sort()).toEqual([...new Set(declared(folder))].sort());
  });
});
