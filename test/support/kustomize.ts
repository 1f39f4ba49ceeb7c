// kustomize as the tests run it (the packaging unit tests, the plain install's integration test):
// the binary dev/kustomize/build.sh builds (.ci/run does that first) or KUSTOMIZE names, whether
// it is there, and `kustomize build` of a folder as objects. Without the binary: in CI a failure,
// elsewhere a skip with the command that builds it.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { inCi } from "./in-ci.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export const KUSTOMIZE =
  process.env["KUSTOMIZE"] ??
  execFileSync("bash", [path.join(REPO, "dev/kustomize/build.sh"), "--print-path"], {
    encoding: "utf8",
  })
    .trim()
    .split("\n")
    .pop() ??
  "";

export const kustomizeAvailable = KUSTOMIZE !== "" && existsSync(KUSTOMIZE);

/** `describe` when kustomize is there or in CI (where its absence fails); else a skip, said once. */
export function describeWithKustomize(): jest.Describe {
  if (kustomizeAvailable || inCi) return describe;
  console.warn("kustomize checks SKIPPED: run `npm run kustomize:build` (or set KUSTOMIZE)");
  return describe.skip;
}

/** The objects `kustomize build <folder>` emits (the folder relative to the repository). */
export function kustomizeBuild<T = Record<string, unknown>>(folder: string): T[] {
  const output = execFileSync(KUSTOMIZE, ["build", path.join(REPO, folder)], {
    encoding: "utf8",
    timeout: 60_000,
  });
  return parseAllDocuments(output)
    .map((d) => d.toJS() as T | null)
    .filter((d): d is T => d !== null);
}
