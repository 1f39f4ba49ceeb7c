/**
 * `npm run bundle`: the function server as a few ES module files in dist/bundle/, what the image
 * runs. Loading ~550 module files was most of a cold start; one bundle loads in about half the
 * time. Besides the server, `all` and `runtime` are entries so the image build can import
 * (compile) every chunk without starting a server. @kubernetes/client-node stays outside: only
 * exec / auth-provider / proxy kubeconfigs load it (shared/kube/config.ts).
 */
import { build } from "esbuild";
import path from "node:path";
import { fileURLToPath } from "node:url";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

await build({
  absWorkingDir: root,
  entryPoints: {
    server: "functions/server.ts",
    all: "functions/all.ts",
    runtime: "shared/runtime/index.ts",
  },
  outdir: "dist/bundle",
  entryNames: "[name]",
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node24",
  sourcemap: true,
  // V8 keeps every loaded module's source text for as long as the process lives (and as UTF-16
  // when one comment holds a non-ASCII character): whitespace, comments and dead branches left
  // out, the source kept in memory is 6.1 -> 4.0 MiB. Names stay, so stack traces read as they are.
  minifyWhitespace: true,
  minifySyntax: true,
  external: ["@kubernetes/client-node"],
  // CommonJS dependencies (express, pino...) call require(); an ES module has none of its own.
  banner: {
    js: "import { createRequire as __bundleRequire } from 'node:module'; const require = __bundleRequire(import.meta.url);",
  },
  logLevel: "warning",
});
