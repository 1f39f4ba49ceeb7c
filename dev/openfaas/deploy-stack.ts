/**
 * `faas-cli login` + `faas-cli deploy -f <stack>` (the real faas-cli, dev/faas-cli/build.sh)
 * against the recording gateway stand-in (gateway.ts), whose deploys faas-netes CE's own code
 * answers and renders (dev/openfaas/build.sh); then the manifest of what CE would have created.
 * Used by `npm run openfaas:render` (main.ts) and test/e2e/openfaas-ce.test.ts.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { repoRoot } from "../control-plane/binaries.js";
import { FUNCTION_NAMESPACE, RecordingGateway } from "./gateway.js";
import type { KubeObject, ProviderSecret } from "./provider.js";

export interface CommandResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Where a Go tool's build script puts its binary (last line of `--print-path`), and why not. */
export function toolAvailability(script: string): { binary: string; missing?: string } {
  const binary =
    execFileSync("bash", [path.join(repoRoot, script), "--print-path"], { encoding: "utf8" })
      .trim()
      .split("\n")
      .pop() ?? "";
  if (binary !== "" && existsSync(binary)) return { binary };
  const record = path.join(path.dirname(binary), "UNAVAILABLE");
  const missing = existsSync(record)
    ? readFileSync(record, "utf8").trim()
    : `run \`bash ${script}\``;
  return { binary, missing };
}

/** A private faas-cli configuration (credentials) folder, and the environment that uses it. */
export class FaasCli {
  readonly configDir: string;

  constructor(
    readonly binary: string,
    readonly gatewayUrl: string,
    private readonly extraEnv: Readonly<Record<string, string>> = {},
  ) {
    this.configDir = mkdtempSync(path.join(os.tmpdir(), "sdewan-faas-cli-config-"));
  }

  /**
   * Runs faas-cli (asynchronously: the gateway stand-in may live in this process). Its
   * credentials go to configDir (OPENFAAS_CONFIG; with CI=true faas-cli would otherwise write
   * them to ./.openfaas in the checkout).
   */
  run(
    args: readonly string[],
    options: { cwd?: string; input?: string } = {},
  ): Promise<CommandResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(this.binary, args, {
        cwd: options.cwd ?? repoRoot,
        env: {
          ...process.env,
          ...this.extraEnv,
          OPENFAAS_CONFIG: this.configDir,
          OPENFAAS_URL: this.gatewayUrl,
        },
        stdio: ["pipe", "pipe", "pipe"],
        timeout: 120_000,
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on("data", (chunk: Buffer) => out.push(chunk));
      child.stderr.on("data", (chunk: Buffer) => err.push(chunk));
      child.once("error", reject);
      child.once("close", (status) =>
        resolve({
          status,
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8"),
        }),
      );
      child.stdin.end(options.input ?? "");
    });
  }

  login(user: string, password: string): Promise<CommandResult> {
    return this.run(
      ["login", "--gateway", this.gatewayUrl, "--username", user, "--password-stdin"],
      { input: password },
    );
  }

  deploy(stackFile: string, extra: readonly string[] = []): Promise<CommandResult> {
    return this.run(
      ["deploy", "-f", path.basename(stackFile), "--gateway", this.gatewayUrl, ...extra],
      { cwd: path.dirname(path.resolve(stackFile)) },
    );
  }

  dispose(): void {
    rmSync(this.configDir, { recursive: true, force: true });
  }
}

/**
 * The Secrets stack.yml's functions read, as docs/deploy.md has them made: sdewan-cnf-password
 * by `faas-cli secret create` (faas-netes stores the value under the Secret's own name),
 * clusterlink-peer-tls by `kubectl create secret generic --from-file` of ca.crt, tls.crt and
 * tls.key. faas-netes projects each key as a file, so the keys shape the Deployment.
 */
export const STACK_SECRETS: readonly ProviderSecret[] = [
  { name: "sdewan-cnf-password", keys: ["sdewan-cnf-password"] },
  { name: "clusterlink-peer-tls", keys: ["ca.crt", "tls.crt", "tls.key"] },
];

export interface StackDeployOptions {
  readonly faasCli: string;
  readonly renderer: string;
  readonly stackFile: string;
  /** Extra environment for faas-cli (the stack's REGISTRY and TAG). */
  readonly env?: Readonly<Record<string, string>>;
  /** Secrets that exist before the deploy; default STACK_SECRETS. */
  readonly secrets?: readonly ProviderSecret[];
}

export interface StackDeploy {
  readonly gateway: RecordingGateway;
  readonly faasCli: FaasCli;
  readonly login: CommandResult;
  readonly deploy: CommandResult;
  /** Stops the stand-in and forgets faas-cli's credentials. */
  close(): Promise<void>;
}

/** Starts a stand-in, logs faas-cli in to it and deploys the stack; the caller closes. */
export async function deployStack(options: StackDeployOptions): Promise<StackDeploy> {
  const password = randomBytes(24).toString("base64url");
  const gateway = await RecordingGateway.start({
    renderer: options.renderer,
    password,
    secrets: options.secrets ?? STACK_SECRETS,
  });
  const faasCli = new FaasCli(options.faasCli, gateway.url, options.env);
  const close = async (): Promise<void> => {
    faasCli.dispose();
    await gateway.close();
  };
  try {
    const login = await faasCli.login("admin", password);
    const deploy = await faasCli.deploy(options.stackFile);
    return { gateway, faasCli, login, deploy, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** The function namespace as the chart makes it (faas-netes namespaces.yml, mesh hints left out). */
export const FUNCTION_NAMESPACE_OBJECT: KubeObject = {
  apiVersion: "v1",
  kind: "Namespace",
  metadata: { name: FUNCTION_NAMESPACE, labels: { role: "openfaas-fn" } },
};

/**
 * One YAML document per object, without the fields an API server fills in (faas-netes sends a
 * null creationTimestamp and an empty status; both are dropped on apply anyway).
 */
export function manifestYaml(objects: readonly KubeObject[], header: readonly string[]): string {
  const clean = (object: KubeObject): unknown => {
    const { status: _status, ...rest } = object;
    return withoutNullTimestamps(rest);
  };
  const comment = header.map((line) => `# ${line}`.trimEnd()).join("\n");
  const docs = objects.map((o) => stringify(clean(o), { lineWidth: 0 }).trimEnd());
  return `${comment}\n${docs.map((d) => `---\n${d}`).join("\n")}\n`;
}

/** `value` without any `creationTimestamp: null` (the Deployment's and its pod template's). */
function withoutNullTimestamps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutNullTimestamps);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key, v]) => !(key === "creationTimestamp" && v === null))
      .map(([key, v]) => [key, withoutNullTimestamps(v)]),
  );
}
