/**
 * Writes manifests/webhook/validating-webhook-configuration.yaml from the rule registry
 * (`npm run gen:webhook`); `--check` only reports drift. `npm run gen:manifests` does this and
 * every other generated manifest at once.
 */
import { GENERATED } from "./manifests/index.js";
import { generate } from "./manifests/write.js";

process.exitCode = await generate(
  GENERATED.filter((set) => set.group === "webhook"),
  process.argv.includes("--check"),
);
