/**
 * Writes manifests/crds/*.yaml from the zod schemas in shared/rules (`npm run gen:crds`).
 * Removes generated files that no longer correspond to a kind; `--check` only reports drift.
 */
import { readdir, readFile, unlink, writeFile, mkdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { renderCrdFiles } from "../shared/rules/crd.js";

const CRD_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "manifests", "crds");

async function main(): Promise<number> {
  const check = process.argv.includes("--check");
  const wanted = renderCrdFiles();
  await mkdir(CRD_DIR, { recursive: true });
  const present = (await readdir(CRD_DIR)).filter((f) => f.endsWith(".yaml"));
  const drift: string[] = [];
  for (const [file, text] of wanted) {
    const target = path.join(CRD_DIR, file);
    const current = present.includes(file) ? await readFile(target, "utf8") : undefined;
    if (current === text) continue;
    drift.push(file);
    if (!check) await writeFile(target, text);
  }
  for (const file of present.filter((f) => !wanted.has(f))) {
    drift.push(`${file} (stale)`);
    if (!check) await unlink(path.join(CRD_DIR, file));
  }
  const verb = check ? "out of date" : "written";
  console.log(
    drift.length === 0
      ? `manifests/crds: ${wanted.size} CRDs up to date`
      : `manifests/crds ${verb}: ${drift.join(", ")}`,
  );
  return check && drift.length > 0 ? 1 : 0;
}

process.exitCode = await main();
