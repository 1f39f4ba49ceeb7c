// npm run cluster:up   -> starts a local control plane, writes .cluster/kubeconfig, runs until Ctrl-C
// npm run cluster:up -- --node -> the same API server with a real node (dev/node: kubelet,
//                         containerd, kube-proxy, CoreDNS, a registry) in a network namespace
// npm run cluster:down -> stops the one cluster:up started (from another terminal)
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { pollUntil } from "./api.js";
import { repoRoot } from "./binaries.js";
import { nodeLayout } from "../node/layout.js";
import { startNode } from "../node/node.js";
import { type ControlPlane, defaultCrdDir, startControlPlane } from "./control-plane.js";

const stateDir = path.join(repoRoot, ".cluster");
const kubeconfigPath = path.join(stateDir, "kubeconfig");
/** Full connection info (all users); integration tests reuse it when SDEWAN_TEST_CLUSTER points here. */
const infoPath = path.join(stateDir, "cluster.json");
const pidPath = path.join(stateDir, "pid");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function runningPid(): Promise<number | undefined> {
  try {
    const pid = Number((await readFile(pidPath, "utf8")).trim());
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function removeState(): Promise<void> {
  await Promise.all([kubeconfigPath, infoPath, pidPath].map((f) => rm(f, { force: true })));
}

async function up(): Promise<void> {
  const existing = await runningPid();
  if (existing !== undefined) {
    throw new Error(
      `a cluster is already running (pid ${existing}); stop it with npm run cluster:down`,
    );
  }
  const log = (line: string): void => console.error(`[cluster] ${line}`);
  const withNode = process.argv.includes("--node");
  const node = withNode ? await startNode({ log, crdDirs: [defaultCrdDir] }) : undefined;
  const cp: ControlPlane = node?.controlPlane ?? (await startControlPlane({ log }));
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: stopping`);
    (node ?? cp)
      .stop()
      .then(removeState)
      .then(
        () => {
          log("stopped");
          process.exit(0);
        },
        (error: unknown) => {
          console.error(error);
          process.exit(1);
        },
      );
  };
  process.on("SIGINT", () => stop("SIGINT"));
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGHUP", () => stop("SIGHUP"));

  await mkdir(stateDir, { recursive: true });
  await writeFile(kubeconfigPath, await readFile(cp.kubeconfigPath), { mode: 0o600 });
  await writeFile(infoPath, JSON.stringify(cp.info(), null, 2), { mode: 0o600 });
  await writeFile(pidPath, `${process.pid}\n`);
  const users = Object.values(cp.users)
    .map((u) => `${u.name} (${u.kubeconfigPath})`)
    .join(", ");
  console.log(
    [
      `kube-apiserver ${cp.server} ready in ${cp.startMs} ms; CRDs: ${cp.crds.length}`,
      ...(node === undefined
        ? []
        : [
            `node ${nodeLayout.name} Ready: pods ${nodeLayout.podSubnet}, Services ${nodeLayout.serviceRange}, cluster DNS, registry ${nodeLayout.registry}, all inside network namespace ${nodeLayout.netns}`,
          ]),
      `admin kubeconfig: ${kubeconfigPath}`,
      `other users: ${users || "none"}`,
      `run integration tests against it: SDEWAN_TEST_CLUSTER=${infoPath} npm run test:jest -- --selectProjects integration`,
      "",
      `export KUBECONFIG=${kubeconfigPath}`,
      "",
      "Ctrl-C or `npm run cluster:down` stops it.",
    ].join("\n"),
  );
  // Keep the event loop alive until a signal arrives (the children are unref'd).
  setInterval(() => undefined, 1 << 30);
}

async function down(): Promise<void> {
  const pid = await runningPid();
  if (pid === undefined) {
    await removeState();
    console.log("no cluster running");
    return;
  }
  process.kill(pid, "SIGTERM");
  await pollUntil(
    () => Promise.resolve(alive(pid) ? undefined : true),
    () => `cluster process ${pid} to exit`,
    // a node's stop removes its pods, containers and namespaces too
    { timeoutMs: 90_000, intervalMs: 100 },
  );
  console.log(`stopped cluster (pid ${pid})`);
}

const command = process.argv[2];
const commands: Record<string, () => Promise<void>> = { up, down };
const run = command === undefined ? undefined : commands[command];
if (run === undefined) {
  console.error("usage: tsx dev/control-plane/cli.ts up|down");
  process.exit(2);
}
run().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
