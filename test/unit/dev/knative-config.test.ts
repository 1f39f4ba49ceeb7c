// Knative's own config/, rendered as dev/node/knative.ts applies it, from the sources
// dev/knative/build-eventing.sh unpacks. Skipping symlinked files left the controller in
// CreateContainerConfigError on the node (ConfigMap eventing-transformations-images, a symlink into
// third_party/, never applied): every ConfigMap a Deployment needs must be in the install. Without the sources: outside CI
// skipped with the reason, in CI a failure.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../../../dev/control-plane/binaries.js";
import { stepManifests } from "../../../dev/node/knative.js";
import { knativeCommands, knativeInstallSteps } from "../../../dev/node/knative-install.js";
import { inCi } from "../../support/in-ci.js";

const dir =
  execFileSync("bash", [path.join(repoRoot, "dev/knative/build-eventing.sh"), "--print-path"], {
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .pop() ?? "";
const available = existsSync(path.join(dir, "knative-eventing", "config"));
if (!available && !inCi) {
  console.warn("Knative config/ checks SKIPPED: run `npm run knative:eventing:build`");
}
const maybe = available || inCi ? describe : describe.skip;

interface Obj {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  spec?: { template?: { spec?: PodSpec } };
}
interface PodSpec {
  volumes?: { configMap?: { name: string; optional?: boolean } }[];
  containers?: {
    env?: { valueFrom?: { configMapKeyRef?: { name: string; optional?: boolean } } }[];
  }[];
}

maybe("Knative's config/ as the node applies it", () => {
  const images = Object.fromEntries(
    Object.entries(knativeCommands).map(([importPath, binary]) => [importPath, `img/${binary}`]),
  );
  const build = { dir, commit: "0", images, sizes: {} };

  it("holds every ConfigMap its Deployments and StatefulSets mount or read", async () => {
    const objects: Obj[] = [];
    for (const step of knativeInstallSteps) {
      for (const doc of parseAllDocuments(await stepManifests(build, step))) {
        const obj = doc.toJS() as Obj | null;
        if (obj !== null) objects.push(obj);
      }
    }
    const configMaps = new Set(
      objects.filter((o) => o.kind === "ConfigMap").map((o) => o.metadata?.name),
    );
    const missing = new Set<string>();
    for (const o of objects) {
      if (o.kind !== "Deployment" && o.kind !== "StatefulSet") continue;
      const pod = o.spec?.template?.spec;
      const needed = [
        ...(pod?.volumes ?? []).map((v) => v.configMap),
        ...(pod?.containers ?? []).flatMap((c) =>
          (c.env ?? []).map((e) => e.valueFrom?.configMapKeyRef),
        ),
      ];
      for (const ref of needed) {
        if (ref !== undefined && ref.optional !== true && !configMaps.has(ref.name)) {
          missing.add(`${o.metadata?.name} needs ${ref.name}`);
        }
      }
    }
    expect([...missing]).toEqual([]);
  });
});
