// Where the kube-apiserver and etcd binaries come from: envtest's environment variables when set,
// else the version-keyed cache that dev/control-plane/build.sh fills. Nothing here builds.
import { execFile } from "node:child_process";
import { access, constants } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);

export const controlPlaneDir = path.dirname(fileURLToPath(import.meta.url));
export const repoRoot = path.resolve(controlPlaneDir, "..", "..");
export const buildScript = path.join(controlPlaneDir, "build.sh");
export const buildCommand = "npm run cluster:build";

export interface Binaries {
  readonly kubeApiserver: string;
  readonly etcd: string;
  /** Where they came from, for messages. */
  readonly source: string;
}

export class MissingBinariesError extends Error {
  override readonly name = "MissingBinariesError";
}

async function executable(file: string): Promise<boolean> {
  try {
    await access(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

async function checked(kubeApiserver: string, etcd: string, source: string): Promise<Binaries> {
  const missing = [];
  for (const file of [kubeApiserver, etcd]) if (!(await executable(file))) missing.push(file);
  if (missing.length > 0) {
    throw new MissingBinariesError(
      `control-plane binaries not found (${source}): ${missing.join(", ")}.\n` +
        `Build them with \`${buildCommand}\` (cold: 10-30 minutes, progress is printed; then cached), ` +
        `or point KUBEBUILDER_ASSETS at a directory holding envtest's kube-apiserver and etcd.`,
    );
  }
  return { kubeApiserver, etcd, source };
}

/** The cache directory build.sh writes to for the versions pinned in the wrapper modules. */
export async function cacheDir(): Promise<string> {
  const { stdout } = await run("bash", [buildScript, "--print-dir"], { timeout: 10_000 });
  return stdout.trim();
}

export async function resolveBinaries(env: NodeJS.ProcessEnv = process.env): Promise<Binaries> {
  const apiserverAsset = env.TEST_ASSET_KUBE_APISERVER;
  const etcdAsset = env.TEST_ASSET_ETCD;
  if (apiserverAsset || etcdAsset) {
    return checked(
      apiserverAsset ?? "",
      etcdAsset ?? "",
      "TEST_ASSET_KUBE_APISERVER / TEST_ASSET_ETCD",
    );
  }
  const assets = env.KUBEBUILDER_ASSETS;
  if (assets) {
    return checked(
      path.join(assets, "kube-apiserver"),
      path.join(assets, "etcd"),
      `KUBEBUILDER_ASSETS=${assets}`,
    );
  }
  const dir = await cacheDir();
  return checked(path.join(dir, "kube-apiserver"), path.join(dir, "etcd"), `build cache ${dir}`);
}
