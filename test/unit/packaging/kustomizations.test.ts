// Each install variant's kustomization lists every manifest of its folder (a file left out would
// silently not be installed): as a resource, or as a file a ConfigMap is generated from; and
// only files and folders that exist.
import { existsSync } from "node:fs";
import { manifestFiles, repoPath, yamlDocs } from "./repo-files.js";

describe.each([
  "manifests/rbac",
  "manifests/knative",
  "manifests/knative-deployments",
  "manifests/functions",
  "manifests/openfaas",
  "manifests/webhook",
  "manifests/monitoring",
  "manifests/plain",
  "manifests/plain/webhook",
  "manifests/netpol-agent",
])("%s/kustomization.yaml", (folder) => {
  const kustomization = yamlDocs(`${folder}/kustomization.yaml`)[0] ?? {};
  const resources = (kustomization["resources"] ?? []) as string[];
  // configMapGenerator files: "<key>=<file>" or "<file>".
  const generatorFiles = (
    (kustomization["configMapGenerator"] ?? []) as { files?: string[] }[]
  ).flatMap((g) => (g.files ?? []).map((f) => f.split("=").pop() ?? f));

  it("names only files and folders that exist", () => {
    for (const resource of [...resources, ...generatorFiles]) {
      expect([resource, existsSync(repoPath(`${folder}/${resource}`))]).toEqual([resource, true]);
    }
  });

  it("names every manifest of the folder (OpenFaaS Pro's binding is the documented swap)", () => {
    const listed = [...resources.filter((r) => r.endsWith(".yaml")), ...generatorFiles];
    const expected = manifestFiles(folder).filter((f) => f !== "rbac-pro.yaml");
    expect([...listed].sort()).toEqual(expected);
  });
});
