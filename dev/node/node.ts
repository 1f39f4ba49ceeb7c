// A real single-node Kubernetes on this machine (dev/node/README.md): containerd, kubelet,
// kube-proxy, kube-controller-manager, kube-scheduler, CoreDNS and an OCI registry, all inside the
// node's own network namespace, with the project's etcd + kube-apiserver (dev/control-plane).
// Stopped without a trace: no process, mount, cgroup or namespace is left behind.
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { type ApiEndpoint, apiRequest, pollUntil } from "../control-plane/api.js";
import { runWithProgress } from "../lib/progress.js";
import {
  Cleanup,
  type ControlPlane,
  type ControlPlaneUser,
  defaultUsers,
  launch,
  type Managed,
  NODE_APISERVER_PORT,
  startControlPlane,
  terminate,
} from "../control-plane/control-plane.js";
import {
  cniConfig,
  containerdConfig,
  coreDnsManifests,
  inNodeKubeconfig,
  kubeletConfig,
  kubeProxyConfig,
  type NodeFolders,
  registryConfig,
} from "./configs.js";
import { buildScratchImage, copyInRegistry, pushArchive, registryHas } from "./images.js";
import { nodeDir, nodeLayout, registryStorageDir } from "./layout.js";

const run = promisify(execFile);
const layout = nodeLayout;

/** Identities of the node's components (static tokens, like the test users). */
const componentUsers: readonly ControlPlaneUser[] = [
  { name: `system:node:${layout.name}`, groups: ["system:nodes"] },
  { name: "system:kube-controller-manager" },
  { name: "system:kube-scheduler" },
  { name: "system:kube-proxy" },
];

export interface NodeBinaries {
  readonly dir: string;
  readonly kubelet: string;
  readonly kubeProxy: string;
  readonly kubeScheduler: string;
  readonly kubeControllerManager: string;
  readonly coredns: string;
  readonly registry: string;
  readonly crane: string;
  /** k8s.io/kubernetes/test/images/agnhost (static), for the NetworkPolicy scenario's Pods. */
  readonly agnhost: string;
  /** The same v1.36.3 as the API server (the machine's may be outside kubectl's ±1 skew). */
  readonly kubectl: string;
}

export interface RealNode {
  readonly controlPlane: ControlPlane;
  readonly binaries: NodeBinaries;
  /** kubectl as admin (through the host's relay); rejects with stderr on a non-zero exit. */
  kubectl(args: readonly string[], input?: string): Promise<string>;
  /** kubectl as admin, with what it printed on stderr too (warnings); rejects as kubectl does. */
  kubectlOutput(
    args: readonly string[],
    input?: string,
  ): Promise<{ stdout: string; stderr: string }>;
  /** Pushes an image archive so pods pull it as `reference` (e.g. sdewan-functions:latest). */
  pushImage(archive: string, reference: string): Promise<void>;
  /** Another name for an image already pushed (no upload). */
  tagImage(from: string, to: string): Promise<void>;
  /** Runs a command inside the node's network namespace (e.g. curl a ClusterIP). */
  inNode(args: readonly string[]): Promise<string>;
  /** Stops and starts the kubelet (its pods keep running, as on a real node). */
  restartKubelet(): Promise<void>;
  stop(): Promise<void>;
}

export interface NodeOptions {
  readonly log?: (line: string) => void;
  readonly users?: readonly ControlPlaneUser[];
  /** CRD folders installed at start (default none: the user applies manifests/crds). */
  readonly crdDirs?: readonly string[];
  /** E.g. audit logging (dev/demo/at-rest.ts auditArgs). */
  readonly extraApiserverArgs?: readonly string[];
}

export class NodeStartError extends Error {
  override readonly name = "NodeStartError";
}

export async function nodeBinaries(log: (l: string) => void): Promise<NodeBinaries> {
  const dir = await runWithProgress("node build", "bash", [path.join(nodeDir, "build.sh")], {
    say: log,
  });
  const bin = (name: string): string => path.join(dir, name);
  return {
    dir,
    kubelet: bin("kubelet"),
    kubeProxy: bin("kube-proxy"),
    kubeScheduler: bin("kube-scheduler"),
    kubeControllerManager: bin("kube-controller-manager"),
    coredns: bin("coredns"),
    registry: bin("registry"),
    crane: bin("crane"),
    agnhost: bin("agnhost"),
    kubectl: bin("kubectl"),
  };
}

async function inNode(args: readonly string[], timeoutMs = 30_000): Promise<string> {
  const { stdout } = await run("nsenter", [`--net=/run/netns/${layout.netns}`, "--", ...args], {
    timeout: timeoutMs,
    maxBuffer: 16 << 20,
  });
  return stdout.trim();
}

async function teardown(): Promise<string> {
  const { stdout } = await run(
    "bash",
    [path.join(nodeDir, "teardown.sh"), layout.netns, layout.stateDir, layout.runDir],
    { timeout: 120_000 },
  );
  return stdout.trim();
}

async function nodeRunning(): Promise<boolean> {
  try {
    const pid = Number((await readFile(path.join(layout.runDir, "owner.pid"), "utf8")).trim());
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function waitFor<T>(what: string, probe: () => Promise<T | undefined>, abort?: Promise<never>) {
  return pollUntil(
    async () => {
      try {
        return await probe();
      } catch {
        return undefined;
      }
    },
    () => what,
    { timeoutMs: 180_000, intervalMs: 250, ...(abort === undefined ? {} : { abort }) },
  );
}

async function systemImages(binaries: NodeBinaries, work: string, log: (l: string) => void) {
  const pause = "registry.k8s.io/pause:3.10";
  if (!(await registryHas(pause))) {
    const bin = path.join(work, "pause");
    await run("gcc", ["-Os", "-static", "-o", bin, path.join(nodeDir, "images", "pause.c")]);
    await run("strip", [bin]);
    await buildScratchImage(binaries.crane, {
      reference: pause,
      files: [[bin, "/pause"]],
      entrypoint: ["/pause"],
      user: "65535:65535",
    });
    log(`pushed ${pause} (built from dev/node/images/pause.c)`);
  }
  const version = path.basename(binaries.dir).replace(/^.*-coredns-(v[^-]+)-.*$/, "$1");
  const coredns = `registry.k8s.io/coredns/coredns:${version}`;
  if (!(await registryHas(coredns))) {
    await buildScratchImage(binaries.crane, {
      reference: coredns,
      files: [[binaries.coredns, "/coredns"]],
      entrypoint: ["/coredns"],
      user: "65532:65532",
    });
    log(`pushed ${coredns}`);
  }
  return { coredns };
}

export async function startNode(options: NodeOptions = {}): Promise<RealNode> {
  const started = Date.now();
  const log = options.log ?? ((): void => undefined);
  const elapsed = (): string => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  if (process.getuid?.() !== 0)
    throw new NodeStartError("the node needs root (namespaces, mounts)");
  if (await nodeRunning()) {
    throw new NodeStartError(
      `a node is already running on this machine (${layout.runDir}/owner.pid); only one can`,
    );
  }
  await runWithProgress("node packages", "bash", [path.join(nodeDir, "install.sh")], { say: log });
  const binaries = await nodeBinaries(log);
  // Whatever a node that died without stopping left behind.
  await teardown();
  await mkdir(layout.runDir, { recursive: true });
  await mkdir(layout.stateDir, { recursive: true });
  await writeFile(path.join(layout.runDir, "owner.pid"), `${process.pid}\n`);
  await run("bash", [path.join(nodeDir, "net-up.sh"), layout.netns, layout.bridge]);

  const work = await mkdtemp("/dev/shm/sdewan-cp-node-");
  const cleanup = new Cleanup(work);
  cleanup.reaperScript(
    `${path.join(nodeDir, "teardown.sh")} ${layout.netns} ${layout.stateDir} ${layout.runDir}`,
  );
  const daemons: Managed[] = [];
  const daemon = (name: string, bin: string, args: readonly string[]): Managed => {
    const managed = launch(name, bin, args, path.join(work, `${name}.log`), layout.netns);
    cleanup.track(managed);
    daemons.push(managed);
    return managed;
  };
  let controlPlane: ControlPlane | undefined;

  const stopAll = async (): Promise<void> => {
    // The node's components first, then the API server, then the containers, then containerd.
    const order = ["kube-proxy", "kubelet", "kube-scheduler", "kube-controller-manager"];
    for (const name of order) {
      const managed = daemons.find((d) => d.name === name);
      if (managed !== undefined) await terminate(managed, 5_000);
    }
    await controlPlane?.stop();
    if (existsSync(`${layout.runDir}/containerd/containerd.sock`)) {
      const ctr = ["ctr", `--address=${layout.runDir}/containerd/containerd.sock`, "-n", "k8s.io"];
      const tasks = await run(ctr[0] ?? "ctr", [...ctr.slice(1), "tasks", "ls", "-q"]).catch(
        () => ({ stdout: "" }),
      );
      for (const id of tasks.stdout.split("\n").filter((t) => t !== "")) {
        await run(ctr[0] ?? "ctr", [...ctr.slice(1), "tasks", "kill", "-s", "KILL", id]).catch(
          () => undefined,
        );
      }
    }
    await cleanup.stop();
    const report = await teardown();
    log(report);
  };

  try {
    const folders: NodeFolders = {
      work,
      registryStorage: registryStorageDir(),
      caCertPath: path.join(work, "ca.crt"),
    };
    await mkdir(folders.registryStorage, { recursive: true });
    await mkdir(path.join(work, "cni"), { recursive: true });
    await writeFile(path.join(work, "cni", "10-sdewan-node.conflist"), cniConfig(layout, folders));
    await writeFile(path.join(work, "containerd.toml"), containerdConfig(layout, folders));
    await writeFile(path.join(work, "registry.yml"), registryConfig(layout, folders));
    await writeFile(path.join(work, "resolv.conf"), "# cluster DNS only (kubelet clusterDNS)\n");

    const registry = daemon("registry", binaries.registry, [
      "serve",
      path.join(work, "registry.yml"),
    ]);
    const containerd = daemon("containerd", "containerd", [
      "--config",
      path.join(work, "containerd.toml"),
    ]);
    await waitFor(
      "the node's registry",
      async () =>
        (await inNode(["curl", "-sf", `http://${layout.registry}/v2/`])) === "{}"
          ? true
          : undefined,
      registry.died,
    );
    await waitFor(
      "containerd",
      async () => {
        await run("ctr", [`--address=${layout.runDir}/containerd/containerd.sock`, "version"]);
        return true;
      },
      containerd.died,
    );
    log(`registry and containerd up (${elapsed()})`);
    const images = systemImages(binaries, work, log);

    controlPlane = await startControlPlane({
      log,
      users: [...(options.users ?? defaultUsers), ...componentUsers],
      // A new cluster has no CRDs: installing them is the user's first step (docs/deploy.md).
      crdDirs: options.crdDirs ?? [],
      ...(options.extraApiserverArgs === undefined
        ? {}
        : { extraApiserverArgs: options.extraApiserverArgs }),
      node: {
        netns: layout.netns,
        address: layout.address,
        serviceRange: layout.serviceRange,
        serviceRangeFirstIp: layout.kubernetesServiceIp,
        runDir: layout.runDir,
      },
    });
    const cp = controlPlane;
    await writeFile(folders.caCertPath, cp.caPem);
    const kubeconfigFor = async (user: string): Promise<string> => {
      const file = path.join(work, `${user.replace(/[^a-z0-9-]/g, "_")}.kubeconfig`);
      const credentials = cp.user(user);
      await writeFile(
        file,
        inNodeKubeconfig(layout, NODE_APISERVER_PORT, cp.caPem, user, credentials.token),
        { mode: 0o600 },
      );
      return file;
    };
    const pkiDir = path.join(cp.dir, "pki");
    const kcm = await kubeconfigFor("system:kube-controller-manager");
    daemon("kube-controller-manager", binaries.kubeControllerManager, [
      `--kubeconfig=${kcm}`,
      `--authentication-kubeconfig=${kcm}`,
      `--authorization-kubeconfig=${kcm}`,
      `--service-account-private-key-file=${path.join(pkiDir, "sa.key")}`,
      `--root-ca-file=${cp.caCertPath}`,
      "--use-service-account-credentials=true",
      `--cluster-signing-cert-file=${cp.caCertPath}`,
      `--cluster-signing-key-file=${cp.caKeyPath}`,
      `--service-cluster-ip-range=${layout.serviceRange}`,
      "--leader-elect=false",
      "--bind-address=127.0.0.1",
      "--profiling=false",
    ]);
    const scheduler = await kubeconfigFor("system:kube-scheduler");
    daemon("kube-scheduler", binaries.kubeScheduler, [
      `--kubeconfig=${scheduler}`,
      `--authentication-kubeconfig=${scheduler}`,
      `--authorization-kubeconfig=${scheduler}`,
      "--leader-elect=false",
      "--bind-address=127.0.0.1",
      "--profiling=false",
    ]);
    await writeFile(path.join(work, "kubelet.yaml"), kubeletConfig(layout, folders));
    const kubeletKubeconfig = await kubeconfigFor(`system:node:${layout.name}`);
    const kubeletArgs = [
      `--config=${path.join(work, "kubelet.yaml")}`,
      `--kubeconfig=${kubeletKubeconfig}`,
      `--hostname-override=${layout.name}`,
      `--node-ip=${layout.address}`,
      `--root-dir=${layout.stateDir}/kubelet`,
      `--cert-dir=${layout.stateDir}/kubelet/pki`,
    ];
    daemon("kubelet", binaries.kubelet, kubeletArgs);
    const proxyKubeconfig = await kubeconfigFor("system:kube-proxy");
    await writeFile(path.join(work, "kube-proxy.yaml"), kubeProxyConfig(layout, proxyKubeconfig));
    daemon("kube-proxy", binaries.kubeProxy, [`--config=${path.join(work, "kube-proxy.yaml")}`]);

    const admin: ApiEndpoint = cp.endpoint();
    await waitFor(`Node ${layout.name} Ready`, async () => {
      const res = await apiRequest(admin, `/api/v1/nodes/${layout.name}`);
      const node = JSON.parse(res.body) as {
        status?: { conditions?: { type: string; status: string }[] };
      };
      const ready = node.status?.conditions?.find((c) => c.type === "Ready")?.status === "True";
      return ready ? true : undefined;
    });
    log(`Node ${layout.name} Ready (${elapsed()})`);
    await waitFor("the default ServiceAccount", async () =>
      (await apiRequest(admin, "/api/v1/namespaces/default/serviceaccounts/default")).status === 200
        ? true
        : undefined,
    );

    const kubectlOutput = async (
      args: readonly string[],
      input?: string,
    ): Promise<{ stdout: string; stderr: string }> => {
      return new Promise((resolve, reject) => {
        const child = spawn(binaries.kubectl, [`--kubeconfig=${cp.kubeconfigPath}`, ...args], {
          stdio: ["pipe", "pipe", "pipe"],
        });
        let out = "";
        let err = "";
        child.stdout.on("data", (d: Buffer) => (out += d.toString()));
        child.stderr.on("data", (d: Buffer) => (err += d.toString()));
        child.on("error", reject);
        child.on("close", (code) =>
          code === 0
            ? resolve({ stdout: out.trim(), stderr: err.trim() })
            : reject(new Error(`kubectl ${args.join(" ")}: ${err.trim() || `exit ${code}`}`)),
        );
        child.stdin.end(input ?? "");
      });
    };
    const kubectl = async (args: readonly string[], input?: string): Promise<string> =>
      (await kubectlOutput(args, input)).stdout;
    const { coredns } = await images;
    await kubectl(["apply", "-f", "-"], coreDnsManifests(layout, coredns));
    await kubectl([
      "-n",
      "kube-system",
      "rollout",
      "status",
      "deployment/coredns",
      "--timeout=120s",
    ]);
    log(`cluster DNS ready; node up in ${elapsed()}`);

    let kubelet = daemons.find((d) => d.name === "kubelet");
    return {
      controlPlane: cp,
      binaries,
      kubectl,
      kubectlOutput,
      pushImage: (archive, reference) => pushArchive(binaries.crane, archive, reference),
      tagImage: (from, to) => copyInRegistry(binaries.crane, from, to),
      inNode: (args) => inNode(args),
      restartKubelet: async () => {
        if (kubelet !== undefined) await terminate(kubelet, 10_000);
        kubelet = daemon("kubelet", binaries.kubelet, kubeletArgs);
      },
      stop: stopAll,
    };
  } catch (error) {
    await stopAll().catch(() => undefined);
    throw error;
  }
}
