// The project installed on a real node (dev/node) as a user installs it: our image and the
// simulators' pushed to the node's registry, manifests/plain applied as docs/deploy.md says, the
// user's Secrets, the webhook's TLS by manifests/webhook/README.md. Shared by the node scenarios
// (test/node) and `npm run demo -- --node`.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { repoRoot } from "../control-plane/binaries.js";
import { ALL_RULE_KINDS } from "../../shared/kinds/index.js";
import { pollUntil } from "../control-plane/api.js";
import { runWithProgress } from "../lib/progress.js";
import type { RealNode } from "./node.js";

const run = promisify(execFile);

export interface InstalledWorld {
  readonly node: RealNode;
  /** Folder of this run's audit log (our ServiceAccounts' requests, dev/demo/at-rest.ts), if any. */
  readonly auditDir: string;
  /** A scratch folder for what a user would keep on their disk (keys, passwords). */
  readonly scratch: string;
  kubectl(args: readonly string[], input?: string): Promise<string>;
  /** kubectl get -o json, parsed. */
  getJson<T>(args: readonly string[]): Promise<T>;
}

let log = (line: string): void => {
  process.stderr.write(`[node] ${line}\n`);
};
/** Long steps print progress as they go, with the caller's prefix (setProgress). */
export function progress(line: string): void {
  log(line);
}
export function setProgress(to: (line: string) => void): void {
  log = to;
}

export function worldOf(node: RealNode, scratch: string, auditDir = ""): InstalledWorld {
  const kubectl = (args: readonly string[], input?: string): Promise<string> =>
    node.kubectl(args, input);
  return {
    node,
    auditDir,
    scratch,
    kubectl,
    getJson: async <T>(args: readonly string[]): Promise<T> =>
      JSON.parse(await kubectl(["get", ...args, "-o", "json"])) as T,
  };
}

/** Runs a build script, forwarding its progress; its last stdout line is the result. */
export function buildScript(file: string, args: readonly string[] = []): Promise<string> {
  return runWithProgress(path.basename(file), "bash", [path.join(repoRoot, file), ...args], {
    say: progress,
  });
}

/** Our image, from the unmodified Dockerfile, under each name a manifest gives it. */
export async function pushProjectImage(
  world: InstalledWorld,
  references: readonly string[] = ["sdewan-functions:latest"],
): Promise<void> {
  const archive = await buildScript("dev/image/build.sh");
  const t = Date.now();
  const [first, ...others] = references;
  if (first === undefined) return;
  await world.node.pushImage(archive, first);
  for (const reference of others) await world.node.tagImage(first, reference);
  progress(`pushed ${references.join(", ")} to the node's registry in ${Date.now() - t} ms`);
}

/** The simulators' image (dev/image/build-sims.sh), as test/node/fixtures name it. */
export async function pushSimulatorImage(world: InstalledWorld): Promise<void> {
  const archive = path.join(world.scratch, "sdewan-sims.tar");
  await buildScript("dev/image/build-sims.sh", [archive]);
  await world.node.pushImage(archive, "sdewan-sims:latest");
  progress("pushed sdewan-sims:latest");
}

export async function openssl(args: readonly string[]): Promise<void> {
  await run("openssl", [...args]);
}

interface Deployment {
  metadata: { name: string };
  status?: { availableReplicas?: number; updatedReplicas?: number; replicas?: number };
  spec: { replicas?: number };
}

/** Why the Deployments of `namespace` (all, or those named) are not all Available, or undefined. */
export async function notAvailable(
  world: InstalledWorld,
  namespace: string,
  names?: readonly string[],
): Promise<string | undefined> {
  const list = await world.getJson<{ items: Deployment[] }>(["-n", namespace, "deployments"]);
  const pending = list.items
    .filter((d) => names === undefined || names.includes(d.metadata.name))
    .filter((d) => {
      const want = d.spec.replicas ?? 1;
      return (
        (d.status?.availableReplicas ?? 0) !== want ||
        (d.status?.updatedReplicas ?? 0) !== want ||
        (d.status?.replicas ?? 0) !== want
      );
    })
    .map((d) => `${d.metadata.name} ${d.status?.availableReplicas ?? 0}/${d.spec.replicas ?? 1}`);
  if (names !== undefined && list.items.length < names.length) return "not created yet";
  return pending.length === 0 ? undefined : pending.join(", ");
}

/** manifests/webhook/README.md, option B (a self-signed CA), the steps after the Deployment. */
export async function webhookTlsAsReadmeSays(world: InstalledWorld): Promise<void> {
  const dir = await mkdtemp(path.join(world.scratch, "webhook-ca-"));
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days"];
  await openssl([
    "req",
    "-x509",
    ...ec,
    "365",
    "-subj",
    "/CN=validate-admission-ca",
    "-keyout",
    `${dir}/ca.key`,
    "-out",
    `${dir}/ca.crt`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign",
  ]);
  const names =
    "DNS:validate-admission.sdewan-system.svc,DNS:validate-admission.sdewan-system.svc.cluster.local";
  await openssl([
    "req",
    "-x509",
    ...ec,
    "365",
    "-subj",
    "/CN=validate-admission.sdewan-system.svc",
    "-keyout",
    `${dir}/tls.key`,
    "-out",
    `${dir}/tls.crt`,
    "-CA",
    `${dir}/ca.crt`,
    "-CAkey",
    `${dir}/ca.key`,
    "-addext",
    `subjectAltName=${names}`,
    "-addext",
    "extendedKeyUsage=serverAuth",
  ]);
  await world.kubectl([
    "-n",
    "sdewan-system",
    "create",
    "secret",
    "tls",
    "validate-admission-tls",
    "--cert",
    `${dir}/tls.crt`,
    "--key",
    `${dir}/tls.key`,
  ]);
  const ca = (await readFile(`${dir}/ca.crt`)).toString("base64");
  const patch = [0, 1, 2, 3].map((i) => ({
    op: "add",
    path: `/webhooks/${i}/clientConfig/caBundle`,
    value: ca,
  }));
  await world.kubectl([
    "patch",
    "validatingwebhookconfiguration",
    "sdewan-validate-admission",
    "--type=json",
    "-p",
    JSON.stringify(patch),
  ]);
}

/** A fresh random secret value, kept where a user would keep it. */
export async function secretFile(world: InstalledWorld, name: string): Promise<string> {
  const file = path.join(world.scratch, name);
  const { randomBytes } = await import("node:crypto");
  await writeFile(file, randomBytes(18).toString("base64url"), { mode: 0o600 });
  return file;
}

/** `kubectl create secret generic`, its data from `sources` as kubectl takes them. */
export async function createSecret(
  world: InstalledWorld,
  namespace: string,
  name: string,
  ...sources: string[]
): Promise<void> {
  await world.kubectl(["-n", namespace, "create", "secret", "generic", name, ...sources]);
}

/**
 * The TLS fabric of the peers east and west (the peer gateway simulator's `--fabric-only`), made
 * once per world: its `gateway` folder is the gateways' Secret, `identity` the functions'.
 */
export async function peerFabric(world: InstalledWorld): Promise<string> {
  const fabric = path.join(world.scratch, "fabric");
  if (existsSync(path.join(fabric, "identity"))) return fabric;
  await run(
    "npx",
    ["tsx", repo("dev/peer-gateway-sim/main.ts"), "--fabric-only", "--dir", fabric, "east", "west"],
    { cwd: repoRoot },
  );
  return fabric;
}

/** What a CNF simulator pod holds, through the API server's pod proxy: "collection/name" keys. */
export async function cnfHolds(
  world: InstalledWorld,
  namespace: string,
  pod: string,
): Promise<Map<string, unknown>> {
  const raw = await world.kubectl([
    "get",
    "--raw",
    `/api/v1/namespaces/${namespace}/pods/${pod}:80/proxy/_sim/state`,
  ]);
  const state = JSON.parse(raw) as { collections: Record<string, { name: string }[]> };
  const held = new Map<string, unknown>();
  for (const [collection, items] of Object.entries(state.collections)) {
    for (const item of items) held.set(`${collection}/${item.name}`, item);
  }
  return held;
}

export interface PodView {
  metadata: { name: string; labels?: Record<string, string>; deletionTimestamp?: string };
  status: { podIP?: string; phase?: string; conditions?: { type: string; status: string }[] };
}

export async function readyPods(
  world: InstalledWorld,
  namespace: string,
  selector: string,
): Promise<PodView[]> {
  const list = await world.getJson<{ items: PodView[] }>(["-n", namespace, "pods", "-l", selector]);
  return list.items.filter(
    (p) =>
      p.metadata.deletionTimestamp === undefined &&
      p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  );
}

/** Polls `pending` (a reason, or undefined when done); resolves with the milliseconds it took. */
export async function until(
  what: string,
  pending: () => Promise<string | undefined>,
  timeoutMs: number,
): Promise<number> {
  const t = Date.now();
  let last = "";
  await pollUntil(
    async () => {
      try {
        const reason = await pending();
        last = reason ?? "";
        return reason === undefined ? true : undefined;
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
        return undefined;
      }
    },
    () => `${what} (${last})`,
    { timeoutMs, intervalMs: 500 },
  );
  return Date.now() - t;
}

export const CNF_NAMESPACE = "sdewan-node";
/** Every rule kind's resource, for one `kubectl get` of them all (from the registry). */
export const RULE_RESOURCES = ALL_RULE_KINDS.map(
  (k) => `${k.plural}.batch.sdewan.akraino.org`,
).join(",");
export const repo = (p: string): string => path.join(repoRoot, p);

/**
 * manifests/plain as docs/deploy.md installs it: the CRDs, the variant, the Secrets a user creates
 * (userSecrets), the webhook's TLS; resolves once every Deployment of sdewan-system is Available.
 */
export async function installPlain(world: InstalledWorld): Promise<void> {
  await world.kubectl(["apply", "--server-side", "-f", repo("manifests/crds/")]);
  await world.kubectl(["apply", "-k", repo("manifests/plain")]);
  await userSecrets(world);
  await webhookTlsAsReadmeSays(world);
  await until("sdewan-system Available", () => notAvailable(world, "sdewan-system"), 300_000);
}

/**
 * The Secrets docs/deploy.md has a user create: the CNF password in sdewan-system and in the CNF's
 * namespace (created here), the peer gateways' identity there and ClusterLink's client identity.
 */
export async function userSecrets(world: InstalledWorld): Promise<void> {
  const password = await secretFile(world, "cnf-password");
  await world.kubectl(["create", "namespace", CNF_NAMESPACE]);
  for (const ns of ["sdewan-system", CNF_NAMESPACE]) {
    await createSecret(world, ns, "sdewan-cnf-credentials", `--from-file=password=${password}`);
  }
  const fabric = await peerFabric(world);
  await createSecret(world, CNF_NAMESPACE, "peer-gateway-sim-tls", `--from-file=${fabric}/gateway`);
  await createSecret(
    world,
    "sdewan-system",
    "clusterlink-peer-tls",
    `--from-file=${fabric}/identity`,
  );
}

/** The CNF and the peer gateways as Pods of the simulators (test/node/fixtures), Available. */
export async function applyFixtures(world: InstalledWorld): Promise<void> {
  await world.kubectl(["-n", CNF_NAMESPACE, "apply", "-k", repo("test/node/fixtures")]);
  await until("CNF and gateways Available", () => notAvailable(world, CNF_NAMESPACE), 180_000);
}

/** `kubectl apply -k manifests/samples` in the CNF's namespace. */
export async function applySamples(world: InstalledWorld): Promise<void> {
  // The webhook's configuration takes effect through an informer, so the first apply may race
  // it: apply is idempotent, repeat it.
  await until(
    "kubectl apply -k manifests/samples",
    async () => {
      try {
        await world.kubectl(["-n", CNF_NAMESPACE, "apply", "-k", repo("manifests/samples")]);
        return undefined;
      } catch (error) {
        return String(error);
      }
    },
    60_000,
  );
}
