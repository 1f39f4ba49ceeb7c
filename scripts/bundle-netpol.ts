/**
 * The netpol CLI (dev/netpol/main.ts) as one ES module file, dist/netpol/netpol.js, with the
 * list of its inputs beside it (dist/netpol/inputs.json) so dev/netpol/launch.ts can tell when
 * it is stale. Under tsx a check spent ~1.7 s starting (compiling ~200 modules on every run);
 * bundled it starts in about a tenth of that (docs/netpol.md). `npm run netpol` builds it when
 * stale; `npm run bundle:netpol` builds it now. Only node: and esbuild are imported here: the
 * launcher loads this file with Node's own type stripping, not tsx.
 */
import { build } from "esbuild";
import { mkdir, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const NETPOL_BUNDLE = path.join(root, "dist", "netpol", "netpol.js");
export const NETPOL_BUNDLE_INPUTS = path.join(root, "dist", "netpol", "inputs.json");

/** Builds the bundle; two builds at once each write their own files, then rename (atomic). */
export async function bundleNetpolCli(): Promise<void> {
  await mkdir(path.dirname(NETPOL_BUNDLE), { recursive: true });
  const scratch = `${NETPOL_BUNDLE}.${process.pid}`;
  const result = await build({
    absWorkingDir: root,
    entryPoints: ["dev/netpol/main.ts"],
    outfile: scratch,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node24",
    // As the server's bundle (scripts/bundle.ts): less source for V8 to keep, names kept.
    minifyWhitespace: true,
    minifySyntax: true,
    external: ["@kubernetes/client-node"],
    // CommonJS dependencies call require(); an ES module has none of its own.
    banner: {
      js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
    },
    metafile: true,
    logLevel: "warning",
  });
  const inputs = Object.keys(result.metafile.inputs).sort();
  await writeFile(`${NETPOL_BUNDLE_INPUTS}.${process.pid}`, `${JSON.stringify(inputs)}\n`);
  await rename(scratch, NETPOL_BUNDLE);
  await rename(`${NETPOL_BUNDLE_INPUTS}.${process.pid}`, NETPOL_BUNDLE_INPUTS);
}

if (
  process.argv[1] !== undefined &&
  path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)
) {
  await bundleNetpolCli();
}
