// Each install variant's kustomization lists every manifest of its folder (a file left out would
// silently not be installed), and only files and folders that exist.
import { existsSync } from "node:fs";
import { manifestFiles, repoPath, yamlDocs } from "./repo-files.js";

describe.each([
  "manifests/rbac",
  "manifests/knative",
  "manifests/openfaas",
  "manifests/webhook",
  "manifests/monitoring",
  "manifests/netpol-agent",
])("%s/kustomization.yaml", (folder) => {
  const resources = (yamlDocs(`${folder}/kustomization.yaml`)[0]?.["resources"] ?? []) as string[];

  it("names only files and folders that exist", () => {
    for (const resource of resources) {
      expect([resource, existsSync(repoPath(`${folder}/${resource}`))]).toEqual([resource, true]);
    }
  });

  it("names every manifest of the folder (OpenFaaS Pro's binding is the documented swap)", () => {
    const listed = resources.filter((r) => !r.startsWith("../"));
    const expected = manifestFiles(folder).filter((f) => f !== "rbac-pro.yaml");
    expect([...listed].sort()).toEqual(expected);
  });
});
