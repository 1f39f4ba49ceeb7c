/**
 * Writes manifests/webhook/validating-webhook-configuration.yaml from the rule registry
 * (`npm run gen:webhook`); `--check` only reports drift.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { renderWebhookManifest } from "../shared/admission/webhook-config.js";

const TARGET = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  "..",
  "manifests",
  "webhook",
  "validating-webhook-configuration.yaml",
);

async function main(): Promise<number> {
  const check = process.argv.includes("--check");
  const wanted = renderWebhookManifest();
  const current = await readFile(TARGET, "utf8").catch(() => undefined);
  if (current === wanted) {
    console.log("manifests/webhook: validating-webhook-configuration.yaml up to date");
    return 0;
  }
  if (check) {
    console.log("manifests/webhook: validating-webhook-configuration.yaml is out of date");
    return 1;
  }
  await writeFile(TARGET, wanted);
  console.log("manifests/webhook: validating-webhook-configuration.yaml written");
  return 0;
}

process.exitCode = await main();
