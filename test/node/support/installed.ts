// The world of the node scenarios (test/node): one real node (dev/node) per run, our image and the
// simulators' pushed to its registry, the project installed from its manifests as a user does.
import { execFile, spawn } from "node:child_process";
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "../../../dev/control-plane/binaries.js";
import { auditArgs } from "../../../dev/demo/at-rest.js";
import { type RealNode, startNode } from "../../../dev/node/node.js";

const run = promisify(execFile);

export interface InstalledWorld {
  readonly node: RealNode;
  /** Folder of this run's audit log (our ServiceAccounts' requests, dev/demo/at-rest.ts). */
  readonly auditDir: string;
  kubectl(args: readonly string[], input?: string): Promise<string>;
  /** kubectl get -o json, parsed. */
  getJson<T>(args: readonly string[]): Promise<T>;
  log(line: string): void;
}

const started = Date.now();
export function progress(line: string): void {
  // Long steps print progress (jest shows stderr as it comes with --verbose=false).
  process.stderr.write(`[node e2e ${((Date.now() - started) / 1000).toFixed(1)} s] ${line}\n`);
}

/** Runs a build script, forwarding its progress; its last stdout line is the result. */
export function buildScript(file: string, args: readonly string[] = []): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [path.join(repoRoot, file), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => {
      for (const line of d.toString().split("\n")) if (line.trim() !== "") progress(line);
    });
    child.on("error", reject);
    child.on("close", (code) =>
      code === 0
        ? resolve(out.trim().split("\n").pop() ?? "")
        : reject(new Error(`${file} exited ${code}`)),
    );
  });
}

export async function startInstalledWorld(): Promise<InstalledWorld> {
  const auditDir = await mkdtemp(path.join(os.tmpdir(), "sdewan-node-audit-"));
  const node = await startNode({ log: progress, extraApiserverArgs: await auditArgs(auditDir) });
  const kubectl = (args: readonly string[], input?: string): Promise<string> =>
    node.kubectl(args, input);
  return {
    node,
    auditDir,
    kubectl,
    getJson: async <T>(args: readonly string[]): Promise<T> =>
      JSON.parse(await kubectl(["get", ...args, "-o", "json"])) as T,
    log: progress,
  };
}

/** Our image, from the unmodified Dockerfile, as the manifests name it: sdewan-functions:latest. */
export async function pushProjectImage(world: InstalledWorld): Promise<void> {
  const archive = await buildScript("dev/image/build.sh");
  const t = Date.now();
  await world.node.pushImage(archive, "sdewan-functions:latest");
  progress(`pushed sdewan-functions:latest to the node's registry in ${Date.now() - t} ms`);
}

export async function openssl(args: readonly string[]): Promise<void> {
  await run("openssl", [...args]);
}
