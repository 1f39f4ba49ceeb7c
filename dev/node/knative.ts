// Knative Eventing on the real node, installed as Knative installs itself: each command of its
// core built (dev/knative/build-eventing.sh) into a FROM-scratch image in the node's registry, then
// its own config/ applied step by step (dev/node/knative-install.ts) with our images for ko://.
import { mkdtemp, readdir, readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { buildScratchImage, registryHas } from "./images.js";
import {
  buildScript,
  type InstalledWorld,
  notAvailable,
  progress,
  repo,
  until,
  userSecrets,
} from "./install.js";
import {
  knativeCommands,
  knativeImage,
  knativeInstallSteps,
  manifestFiles,
  substituteKoImages,
} from "./knative-install.js";
import { nodeLayout } from "./layout.js";

export const KNATIVE_NAMESPACE = "knative-eventing";
const CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

export interface KnativeBuild {
  readonly dir: string;
  readonly commit: string;
  /** ko import path -> image reference in the node's registry. */
  readonly images: Readonly<Record<string, string>>;
  /** Binary name -> bytes (the image is that plus the CA bundle). */
  readonly sizes: Readonly<Record<string, number>>;
}

/** Builds (or finds cached) every command and pushes each image the registry does not have yet. */
export async function pushKnativeImages(world: InstalledWorld): Promise<KnativeBuild> {
  const dir = await buildScript("dev/knative/build-eventing.sh");
  const commit = /knative-eventing-core-([0-9a-f]{12})$/.exec(dir)?.[1];
  if (commit === undefined) throw new Error(`build-eventing.sh gave no build folder: ${dir}`);
  const images: Record<string, string> = {};
  const sizes: Record<string, number> = {};
  for (const [importPath, binary] of Object.entries(knativeCommands)) {
    const reference = knativeImage(nodeLayout.registry, binary, commit);
    const file = path.join(dir, "bin", binary);
    sizes[binary] = (await stat(file)).size;
    images[importPath] = reference;
    if (await registryHas(reference)) continue;
    const t = Date.now();
    await buildScratchImage(world.node.binaries.crane, {
      reference,
      files: [
        [file, `/ko-app/${binary}`],
        [CA_BUNDLE, CA_BUNDLE],
      ],
      entrypoint: [`/ko-app/${binary}`],
      user: "65532:65532",
    });
    progress(`pushed ${reference} in ${Date.now() - t} ms`);
  }
  return { dir, commit, images, sizes };
}

/** Regular files (symlinks followed: config/'s top level is mostly symlinks) under `dir`. */
async function filesUnder(dir: string, recursive: boolean): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(dir, { recursive })) {
    if ((await stat(path.join(dir, entry))).isFile()) files.push(entry);
  }
  return files;
}

/** The YAML of one install step, ko:// replaced (throws on a command we have no image for). */
export async function stepManifests(
  build: KnativeBuild,
  step: (typeof knativeInstallSteps)[number],
): Promise<string> {
  const root = path.join(build.dir, "knative-eventing", step.dir);
  const docs: string[] = [];
  for (const file of manifestFiles(await filesUnder(root, step.recursive))) {
    docs.push(await readFile(path.join(root, file), "utf8"));
  }
  return substituteKoImages(docs.join("\n---\n"), build.images);
}

/** Applies Knative's steps in order; resolves when every Deployment of knative-eventing is Available. */
export async function installKnative(
  world: InstalledWorld,
  build: KnativeBuild,
  timeoutMs = 300_000,
): Promise<void> {
  for (const step of knativeInstallSteps) {
    const t = Date.now();
    await world.kubectl(["apply", "-f", "-"], await stepManifests(build, step));
    if (step.name === "crds") {
      await world.kubectl([
        "wait",
        "--for=condition=Established",
        "crd",
        "-l",
        "knative.dev/crd-install=true",
        "--timeout=60s",
      ]);
    }
    progress(`knative ${step.name} applied in ${Date.now() - t} ms`);
  }
  await until(
    `${KNATIVE_NAMESPACE} Available`,
    () => notAvailable(world, KNATIVE_NAMESPACE),
    timeoutMs,
  );
}

/** The image manifests/knative-deployments' dead-letter sink names (Knative's release). */
const EVENT_DISPLAY = "gcr.io/knative-releases/knative.dev/eventing/cmd/event_display";

/**
 * manifests/knative-deployments as docs/deploy.md installs it: the CRDs, then the variant through
 * an overlay of the user's that points the dead-letter sink's image at the one built here (the
 * `images:` docs/deploy.md describes), then the Secrets a user creates (userSecrets). Resolves
 * once applied; the Broker, sources and Pods turn Ready after.
 */
export async function installKnativeDeployments(
  world: InstalledWorld,
  build: KnativeBuild,
): Promise<void> {
  const sink = build.images["knative.dev/eventing/cmd/event_display"];
  if (sink === undefined) throw new Error("no event_display image was built");
  const colon = sink.lastIndexOf(":");
  const overlay = await mkdtemp(path.join(world.scratch, "knative-overlay-"));
  await writeFile(
    path.join(overlay, "kustomization.yaml"),
    // kustomize takes a folder only by a relative path.
    `resources: [${path.relative(overlay, repo("manifests/knative-deployments"))}]
images:
  - { name: ${EVENT_DISPLAY}, newName: ${sink.slice(0, colon)}, newTag: "${sink.slice(colon + 1)}" }
`,
  );
  await world.kubectl(["apply", "--server-side", "-f", repo("manifests/crds/")]);
  await world.kubectl(["apply", "-k", overlay]);
  await userSecrets(world);
}
