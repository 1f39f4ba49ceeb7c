/**
 * `npm run openfaas:render -- [--stack <file>] [--out <dir>] [--secret <name>=<key>,...]...`
 *
 * What OpenFaaS CE would create for a stack, as far as that can lawfully be found offline: builds
 * (or finds cached) faas-cli and the faas-netes CE renderer, starts the recording gateway
 * stand-in on loopback, runs the real `faas-cli login` and `faas-cli deploy -f <stack>` against
 * it, and writes
 *
 *   <out>/functions.yaml   the openfaas-fn Namespace and, per function, the Deployment and Service
 *                          faas-netes CE's own code made of faas-cli's request (kubectl apply -f)
 *   <out>/requests.json    every request faas-cli sent, with its answer (no password, no Secret value)
 *
 * Defaults: --stack stack.yml, --out build/openfaas-ce. REGISTRY and TAG from the environment
 * reach faas-cli's substitution of the stack's image names. --secret declares a Secret that
 * exists in openfaas-fn and its keys (faas-netes mounts each key as a file; defaults: the two
 * stack.yml reads, STACK_SECRETS). Exit 0 when faas-cli deployed every function, 1 otherwise, 2
 * on a bad command line.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { repoRoot } from "../control-plane/binaries.js";
import {
  FUNCTION_NAMESPACE_OBJECT,
  STACK_SECRETS,
  deployStack,
  manifestYaml,
} from "./deploy-stack.js";
import type { ProviderSecret } from "./provider.js";

const USAGE = `usage: npm run openfaas:render -- [--stack <file>] [--out <dir>] [--secret <name>=<key>,...]...`;

function fail(message: string, code: number): never {
  console.error(`openfaas:render: ${message}`);
  process.exit(code);
}

let values: { stack?: string; out?: string; secret?: string[]; help?: boolean };
try {
  ({ values } = parseArgs({
    options: {
      stack: { type: "string" },
      out: { type: "string" },
      secret: { type: "string", multiple: true },
      help: { type: "boolean", short: "h" },
    },
    strict: true,
  }));
} catch (error) {
  fail(`${(error as Error).message}\n${USAGE}`, 2);
}
if (values.help === true) {
  console.log(USAGE);
  process.exit(0);
}

const secrets = new Map<string, ProviderSecret>(STACK_SECRETS.map((s) => [s.name, s]));
for (const spec of values.secret ?? []) {
  const match = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?)=([^,=]+(,[^,=]+)*)$/.exec(spec);
  if (match === null) fail(`--secret ${spec}: write <name>=<key>[,<key>...]\n${USAGE}`, 2);
  const name = match[1] ?? "";
  secrets.set(name, { name, keys: (match[3] ?? "").split(",") });
}

const stackFile = path.resolve(values.stack ?? path.join(repoRoot, "stack.yml"));
if (!existsSync(stackFile)) fail(`${stackFile}: no such file`, 2);
const outDir = path.resolve(values.out ?? path.join(repoRoot, "build", "openfaas-ce"));

/** Builds (or finds cached) a Go tool; its progress shows on stderr. */
function tool(script: string): string {
  const printed =
    execFileSync("bash", [path.join(repoRoot, script)], {
      encoding: "utf8",
      stdio: ["ignore", "pipe", "inherit"],
    })
      .trim()
      .split("\n")
      .pop() ?? "";
  if (!existsSync(printed)) fail(`${script} could not build it (see above)`, 1);
  return printed;
}

const faasCli = tool("dev/faas-cli/build.sh");
const renderer = tool("dev/openfaas/build.sh");
const run = await deployStack({ faasCli, renderer, stackFile, secrets: [...secrets.values()] });
try {
  process.stdout.write(run.login.stdout + run.login.stderr);
  process.stdout.write(run.deploy.stdout + run.deploy.stderr);
  const { gateway } = run;
  mkdirSync(outDir, { recursive: true });
  const manifest = path.join(outDir, "functions.yaml");
  const used = [...secrets.values()].filter((s) =>
    gateway.functions.some((fn) => JSON.stringify(fn.request).includes(`"${s.name}"`)),
  );
  writeFileSync(
    manifest,
    manifestYaml(
      [
        FUNCTION_NAMESPACE_OBJECT,
        // By name: faas-cli deploys in Go's map order, which changes from run to run.
        ...[...gateway.functions]
          .sort((a, b) => a.name.localeCompare(b.name))
          .flatMap((fn) => fn.objects),
      ],
      [
        `What OpenFaaS CE's faas-netes (${path.basename(renderer)}, its own code) creates for`,
        `\`faas-cli deploy -f ${path.relative(repoRoot, stackFile)}\`, recorded by the gateway stand-in`,
        "(npm run openfaas:render; docs/deploy.md). Not checked offline: that each image is public.",
        "Before applying, the Secrets in openfaas-fn, with exactly these keys:",
        ...used.map((s) => `  ${s.name}: ${s.keys.join(", ")}`),
        "CE pulls with imagePullPolicy: Always: the node must reach a registry holding the images.",
      ],
    ),
  );
  writeFileSync(
    path.join(outDir, "requests.json"),
    `${JSON.stringify(gateway.requests, null, 2)}\n`,
  );
  const rendered = gateway.functions.map((fn) => fn.name);
  console.log(
    `\n${rendered.length} function(s) rendered (${rendered.join(", ")}):\n  ${manifest}\n` +
      `  ${path.join(outDir, "requests.json")} (${gateway.requests.length} requests)\n` +
      `apply: kubectl apply -f ${manifest}`,
  );
  if (run.login.status !== 0 || run.deploy.status !== 0) {
    fail(`faas-cli ${run.login.status !== 0 ? "login" : "deploy"} failed (see above)`, 1);
  }
} finally {
  await run.close();
}
