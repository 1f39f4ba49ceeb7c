/**
 * The file side of the generators: writes (or with `--check` only reports) the generated
 * manifests of some groups. Used by scripts/gen-manifests.ts and the older gen-crds/gen-webhook.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { mkdir, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { driftOf, renderAll, type GeneratedSet, type TreeReader } from "./index.js";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The work tree under `root`, as the generators see it. */
export function workTree(root: string = REPO_ROOT): TreeReader {
  return {
    read: (file) => {
      const full = path.join(root, file);
      return existsSync(full) ? readFileSync(full, "utf8") : undefined;
    },
    yamlFiles: (dir) => {
      const full = path.join(root, dir);
      if (!existsSync(full)) return [];
      return readdirSync(full)
        .filter((f) => f.endsWith(".yaml"))
        .sort()
        .map((f) => `${dir}/${f}`);
    },
  };
}

/** Writes the sets' files (or reports drift with `check`); resolves with the exit code. */
export async function generate(sets: readonly GeneratedSet[], check: boolean): Promise<number> {
  const tree = workTree();
  const { changed, stale } = driftOf(tree, sets);
  const groups = sets.map((s) => s.group).join(", ");
  if (changed.length === 0 && stale.length === 0) {
    console.log(`generated manifests (${groups}): ${renderAll(sets).size} file(s) up to date`);
    return 0;
  }
  const report = [...changed, ...stale.map((f) => `${f} (stale)`)].join(", ");
  if (check) {
    console.log(`generated manifests out of date: ${report}`);
    return 1;
  }
  const wanted = renderAll(sets);
  for (const file of changed) {
    const target = path.join(REPO_ROOT, file);
    await mkdir(path.dirname(target), { recursive: true });
    await writeFile(target, wanted.get(file) ?? "");
  }
  for (const file of stale) await unlink(path.join(REPO_ROOT, file));
  console.log(`generated manifests written: ${report}`);
  return 0;
}
