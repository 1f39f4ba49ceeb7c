// Images for the node: built with buildah (no Docker), pushed to the node's registry, pulled by
// containerd through its mirrors as on any cluster.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { nodeLayout, registryPath } from "./layout.js";

const run = promisify(execFile);
const inNode = (args: readonly string[]): [string, string[]] => [
  "nsenter",
  [`--net=/run/netns/${nodeLayout.netns}`, "--", ...args],
];

async function sh(file: string, args: readonly string[], timeoutMs = 600_000): Promise<string> {
  try {
    const { stdout } = await run(file, [...args], { timeout: timeoutMs, maxBuffer: 16 << 20 });
    return stdout.trim();
  } catch (error) {
    const e = error as { stderr?: string; message: string };
    throw new Error(`${file} ${args.join(" ")} failed: ${(e.stderr ?? e.message).trim()}`);
  }
}

function split(reference: string): { repository: string; tag: string } {
  const at = reference.lastIndexOf(":");
  const slash = reference.lastIndexOf("/");
  if (at <= slash) return { repository: registryPath(reference), tag: "latest" };
  return { repository: registryPath(reference.slice(0, at)), tag: reference.slice(at + 1) };
}

/** True when the node's registry already serves `reference` (e.g. from an earlier run). */
export async function registryHas(reference: string): Promise<boolean> {
  const { repository, tag } = split(reference);
  const [file, args] = inNode([
    "curl",
    "-s",
    "-o",
    "/dev/null",
    "-w",
    "%{http_code}",
    "-I",
    "-H",
    "Accept: application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json",
    `http://${nodeLayout.registry}/v2/${repository}/manifests/${tag}`,
  ]);
  return (await sh(file, args, 10_000)) === "200";
}

/** Pushes an image archive (docker-archive or OCI tarball) so the node pulls it as `reference`. */
export async function pushArchive(
  crane: string,
  archive: string,
  reference: string,
): Promise<void> {
  const { repository, tag } = split(reference);
  const [file, args] = inNode([
    crane,
    "push",
    "--insecure",
    archive,
    `${nodeLayout.registry}/${repository}:${tag}`,
  ]);
  await sh(file, args);
}

/** Gives an image already in the node's registry another name (blobs mounted, nothing re-sent). */
export async function copyInRegistry(crane: string, from: string, to: string): Promise<void> {
  const name = (reference: string): string => {
    const { repository, tag } = split(reference);
    return `${nodeLayout.registry}/${repository}:${tag}`;
  };
  const [file, args] = inNode([crane, "copy", "--insecure", name(from), name(to)]);
  await sh(file, args);
}

export interface ScratchImage {
  readonly reference: string;
  /** Host path -> path in the image. */
  readonly files: ReadonlyArray<readonly [string, string]>;
  readonly entrypoint: readonly string[];
  readonly user: string;
}

/** A FROM-scratch image of static binaries, built by buildah and pushed to the node's registry. */
export async function buildScratchImage(crane: string, image: ScratchImage): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), "sdewan-node-image-"));
  const container = await sh("buildah", ["from", "scratch"]);
  try {
    for (const [from, to] of image.files) await sh("buildah", ["copy", container, from, to]);
    await sh("buildah", [
      "config",
      "--entrypoint",
      JSON.stringify(image.entrypoint),
      "--user",
      image.user,
      container,
    ]);
    const archive = path.join(work, "image.tar");
    const local = `localhost/sdewan-node-build/${path.basename(split(image.reference).repository)}`;
    await sh("buildah", ["commit", "-q", "--rm", container, local]);
    await sh("buildah", ["push", "-q", local, `docker-archive:${archive}:${local}`]);
    await sh("buildah", ["rmi", "-f", local]);
    await pushArchive(crane, archive, image.reference);
  } finally {
    await run("buildah", ["rm", container]).catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}
