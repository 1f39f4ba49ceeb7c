/**
 * What `npm run netpol` runs: the bundled CLI (scripts/bundle-netpol.ts), rebuilt first when any
 * of its inputs changed since it was built (their modification times against the bundle's), so
 * a check pays neither tsx's start-up nor a stale bundle. Plain JavaScript: Node's type stripping
 * would cost more to start than the check itself (loading its compiler, ~0.1-0.25 s measured);
 * the bundler it loads to rebuild is TypeScript, stripped by Node.
 */
import { readFileSync, statSync } from "node:fs";
import { enableCompileCache } from "node:module";
import path from "node:path";
import process from "node:process";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const bundle = path.join(root, "dist", "netpol", "netpol.js");
const inputs = path.join(root, "dist", "netpol", "inputs.json");

/** Why the bundle must be built, or null when it is up to date. */
function staleBecause() {
  let built;
  let listed;
  try {
    built = statSync(bundle).mtimeMs;
    listed = JSON.parse(readFileSync(inputs, "utf8"));
  } catch {
    return "not built yet";
  }
  if (!Array.isArray(listed)) return "its list of inputs is unreadable";
  for (const file of listed) {
    try {
      if (statSync(path.join(root, String(file))).mtimeMs > built) return `${String(file)} changed`;
    } catch {
      return `${String(file)} is gone`;
    }
  }
  return null;
}

const why = staleBecause();
if (why !== null) {
  process.stderr.write(`netpol: bundling the CLI first (${why})\n`);
  const bundler = pathToFileURL(path.join(root, "scripts", "bundle-netpol.ts")).href;
  const { bundleNetpolCli } = await import(bundler);
  await bundleNetpolCli();
}
// V8's code for the bundle, kept between runs (in the OS temp folder): the next start skips
// compiling it.
enableCompileCache();
await import(pathToFileURL(bundle).href);
