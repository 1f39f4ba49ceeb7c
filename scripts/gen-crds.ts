/**
 * Writes manifests/crds/*.yaml from the zod schemas in shared/kinds (`npm run gen:crds`).
 * Removes generated files that no longer correspond to a kind; `--check` only reports drift.
 * `npm run gen:manifests` does this and every other generated manifest at once.
 */
import { GENERATED } from "./manifests/index.js";
import { generate } from "./manifests/write.js";

process.exitCode = await generate(
  GENERATED.filter((set) => set.group === "crds"),
  process.argv.includes("--check"),
);
