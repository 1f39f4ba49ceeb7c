// kubectl (from PATH, or KUBECTL) against the run's API server, as a user at a terminal runs it:
// its exit code, what it printed, and the warnings it printed ("Warning: <text>" on stderr, one a
// line). Outside CI a test may skip when there is no kubectl; in CI it must be there.
import { spawn, spawnSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { userFromInfo } from "../../../dev/control-plane/control-plane.js";
import { clusterInfo } from "./cluster.js";

const KUBECTL = process.env["KUBECTL"] ?? "kubectl";

/** Whether a kubectl runs here (its client version answers). */
export const haveKubectl =
  spawnSync(KUBECTL, ["version", "--client"], { stdio: "ignore" }).status === 0;

export interface KubectlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The warnings kubectl printed, in order, without the "Warning: " prefix. */
  readonly warnings: readonly string[];
}

/** Who kubectl authenticates as: a declared user of the run (default the admin) or a token. */
export type KubectlUser = { readonly user: string } | { readonly token: string };

async function kubeconfigOf(as: KubectlUser): Promise<string> {
  const info = clusterInfo();
  if ("user" in as) return userFromInfo(info, as.user).kubeconfigPath;
  const file = path.join(info.dir, `kubeconfig-token-${Math.random().toString(36).slice(2)}`);
  const config = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      { name: "test", cluster: { server: info.server, "certificate-authority": info.caCertPath } },
    ],
    users: [{ name: "token", user: { token: as.token } }],
    contexts: [{ name: "test", context: { cluster: "test", user: "token" } }],
    "current-context": "test",
  };
  await writeFile(file, JSON.stringify(config), { mode: 0o600 });
  return file;
}

/** Runs `kubectl <args>` with `input` on stdin; resolves with what happened, whatever the exit code. */
export async function kubectl(
  args: readonly string[],
  options: { readonly input?: string; readonly as?: KubectlUser } = {},
): Promise<KubectlResult> {
  const kubeconfig = await kubeconfigOf(options.as ?? { user: "admin" });
  return new Promise((resolve, reject) => {
    const child = spawn(KUBECTL, [`--kubeconfig=${kubeconfig}`, ...args], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, KUBECTL_COMMAND_HEADERS: "false", NO_COLOR: "1" },
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => {
      const warnings = stderr
        .split("\n")
        .filter((line) => line.startsWith("Warning: "))
        .map((line) => line.slice("Warning: ".length));
      resolve({ code: code ?? -1, stdout, stderr, warnings });
    });
    child.stdin.end(options.input ?? "");
  });
}
