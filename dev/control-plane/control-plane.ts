// A real Kubernetes control plane on loopback for tests and the demo: etcd + kube-apiserver,
// started from binaries built by dev/control-plane/build.sh (or envtest's), torn down without a
// trace. No controller-manager, scheduler or kubelet: nothing acts on objects by itself.
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, openSync, readFileSync, rmSync } from "node:fs";
import { access, constants, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { Writable } from "node:stream";
import { promisify } from "node:util";
import { stringify } from "yaml";
import { KUBERNETES_SERVICE_IP, SERVICE_RANGE } from "./addresses.js";
import { type ApiEndpoint, apiRequest, DeadlineError, plainGet, pollUntil } from "./api.js";
import { type Binaries, controlPlaneDir, repoRoot, resolveBinaries } from "./binaries.js";
import {
  type CertificateAuthority,
  createCertificateAuthority,
  createSigningKeyPair,
  type IssuedCertificate,
  issueCertificate,
} from "./certs.js";
import { applyCrds, type Crd, readCrdDir } from "./crds.js";

const execFileAsync = promisify(execFile);

export const ADMIN_USER = "admin";
export const LOOPBACK = "127.0.0.1";
export const defaultCrdDir = path.join(repoRoot, "manifests", "crds");

export interface ControlPlaneUser {
  readonly name: string;
  /** Kubernetes groups of the user; "system:authenticated" is added by the API server. */
  readonly groups?: readonly string[];
}

/** The users tests and the demo cluster get unless told otherwise: plain users with no RBAC. */
export const defaultUsers: readonly ControlPlaneUser[] = [
  { name: "alice", groups: ["sdewan:testers"] },
  { name: "bob" },
];

export interface UserCredentials {
  readonly name: string;
  readonly groups: readonly string[];
  readonly token: string;
  /** A kubeconfig file that authenticates as this user. */
  readonly kubeconfigPath: string;
}

/** Everything a client in another process needs; JSON-serialisable. */
export interface ControlPlaneInfo {
  readonly server: string;
  readonly caPem: string;
  readonly caCertPath: string;
  /** The CA's key, so tests can issue webhook serving certificates the cluster's CA signed. */
  readonly caKeyPath: string;
  readonly dir: string;
  /** Admin kubeconfig (user "admin" in group system:masters). */
  readonly kubeconfigPath: string;
  readonly etcdUrl: string;
  readonly admin: UserCredentials;
  readonly users: Readonly<Record<string, UserCredentials>>;
  /** Names of the CRDs installed at start. */
  readonly crds: readonly string[];
  readonly ownerPid: number;
  readonly binaries: Binaries;
  readonly startMs: number;
}

export interface ServingCertificateRequest {
  /** Defaults to ["127.0.0.1"]. */
  readonly ips?: readonly string[];
  /** Defaults to ["localhost"]. */
  readonly dnsNames?: readonly string[];
  readonly commonName?: string;
}

export interface ControlPlane extends ControlPlaneInfo {
  /** Credentials of a declared user (or "admin"); throws for an unknown name. */
  user(name: string): UserCredentials;
  /** Server, CA and token of a user, for raw HTTPS requests. */
  endpoint(user?: string): ApiEndpoint;
  /** A JSON-serialisable snapshot, e.g. for test workers. */
  info(): ControlPlaneInfo;
  applyCrds(crds: readonly Crd[]): Promise<void>;
  /** A serving certificate signed by the cluster CA (for webhooks at https://127.0.0.1:<port>). */
  issueServingCertificate(request?: ServingCertificateRequest): Promise<IssuedCertificate>;
  stop(): Promise<void>;
}

export interface ControlPlaneOptions {
  /** Extra users, authenticated by bearer token. Default: defaultUsers. */
  readonly users?: readonly ControlPlaneUser[];
  /** Folders whose CRDs are installed and awaited. Default: [manifests/crds]. */
  readonly crdDirs?: readonly string[];
  readonly binaries?: Binaries;
  /** Parent of the throwaway directory. Default: /dev/shm when writable, else the OS temp dir. */
  readonly baseDir?: string;
  /** Deadline for etcd + kube-apiserver to become ready. Default 90 s (2 shared cores). */
  readonly startTimeoutMs?: number;
  readonly extraApiserverArgs?: readonly string[];
  readonly log?: (line: string) => void;
  /** Run inside a real node's network namespace (dev/node) instead of on loopback. */
  readonly node?: NodeNetwork;
}

/**
 * Where a control plane for a real node runs: etcd and kube-apiserver inside the node's network
 * namespace (so the API server reaches webhook Services through kube-proxy, and pods reach it
 * through the kubernetes Service), with a relay that makes it reachable from the host's loopback.
 */
export interface NodeNetwork {
  /** `ip netns` name of the node's namespace. */
  readonly netns: string;
  /** The node's address inside it: the API server binds it and advertises it. */
  readonly address: string;
  /** The Service range; its first address is the kubernetes Service's. */
  readonly serviceRange: string;
  readonly serviceRangeFirstIp: string;
  /** A folder for the relay's Unix socket (it crosses the namespaces through the file system). */
  readonly runDir: string;
}

export const NODE_APISERVER_PORT = 6443;

export class ControlPlaneStartError extends Error {
  override readonly name = "ControlPlaneStartError";
}

class PortInUseError extends Error {}

export interface Managed {
  readonly name: string;
  readonly child: ChildProcess;
  readonly logPath: string;
  readonly exit: Promise<string>;
  /** Rejects when the process exits; for aborting waits. */
  readonly died: Promise<never>;
}

/** GET from inside a network namespace (the host cannot reach the node's loopback). */
async function curlIn(netns: string, url: string): Promise<string> {
  const { stdout } = await execFileAsync(
    "nsenter",
    [`--net=/run/netns/${netns}`, "--", "curl", "-sS", "-m", "2", url],
    { timeout: 5_000 },
  );
  return stdout;
}

function tail(file: string, lines = 40): string {
  try {
    return readFileSync(file, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "(no log)";
  }
}

/** `netns`: started inside that network namespace (nsenter execs the binary: same pid). */
export function launch(
  name: string,
  bin: string,
  args: readonly string[],
  logPath: string,
  netns?: string,
): Managed {
  const fd = openSync(logPath, "a");
  const [file, argv] =
    netns === undefined
      ? [bin, args]
      : ["nsenter", [`--net=/run/netns/${netns}`, "--", bin, ...args]];
  // Own process group: a terminal's Ctrl-C does not reach it, and stop() can kill the whole group.
  const child = spawn(file, argv, { detached: true, stdio: ["ignore", fd, fd] });
  closeSync(fd);
  child.unref();
  const exit = new Promise<string>((resolve) => {
    child.once("error", (error) => resolve(`could not be started: ${error.message}`));
    child.once("exit", (code, signal) =>
      resolve(signal ? `was killed by ${signal}` : `exited with code ${code}`),
    );
  });
  const died = exit.then((how): never => {
    const log = tail(logPath);
    if (/address already in use/.test(log)) throw new PortInUseError(`${name}: port in use`);
    throw new ControlPlaneStartError(
      `${name} ${how} during start-up. Last lines of its log (the directory is removed):\n${log}`,
    );
  });
  died.catch(() => undefined);
  return { name, child, logPath, exit, died };
}

/** A TCP port nothing listens on now at `host` (the OS picks it; a race remains until used). */
export async function freePort(host: string = LOOPBACK): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port allocated");
  return address.port;
}

async function writable(dir: string): Promise<boolean> {
  try {
    await access(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Owns the processes and the directory of one control plane. A detached reaper process holds the
 * read end of a pipe from this process: if this process dies without stop(), the pipe closes and
 * the reaper kills the process groups and removes the directory.
 */
export class Cleanup {
  private readonly processes: Managed[] = [];
  private readonly reaperInput: Writable | null;
  private stopping: Promise<void> | undefined;
  private readonly onExit = (): void => this.emergency();

  constructor(readonly dir: string) {
    const reaper = spawn("bash", [path.join(controlPlaneDir, "reaper.sh")], {
      detached: true,
      stdio: ["pipe", "ignore", "ignore"],
    });
    reaper.unref();
    reaper.on("error", () => undefined);
    const input = reaper.stdin;
    if (input) {
      input.on("error", () => undefined);
      (input as Writable & { unref?: () => void }).unref?.();
      input.write(`dir ${dir}\n`);
    }
    this.reaperInput = input;
    process.on("exit", this.onExit);
  }

  /** A script the reaper runs (by bash, with its arguments) after killing the groups. */
  reaperScript(commandLine: string): void {
    this.reaperInput?.write(`then ${commandLine}\n`);
  }

  track(managed: Managed): void {
    this.processes.push(managed);
    if (managed.child.pid !== undefined) this.reaperInput?.write(`pgid ${managed.child.pid}\n`);
  }

  stop(): Promise<void> {
    this.stopping ??= this.doStop();
    return this.stopping;
  }

  private async doStop(): Promise<void> {
    // API server first, so it does not log a storm of etcd errors.
    for (const managed of [...this.processes].reverse()) await terminate(managed);
    await rm(this.dir, { recursive: true, force: true });
    this.reaperInput?.end("disarm\n");
    process.off("exit", this.onExit);
  }

  /** Synchronous last resort when the owning process exits without stop(). */
  private emergency(): void {
    for (const managed of this.processes) signalGroup(managed, "SIGKILL");
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function signalGroup(managed: Managed, signal: NodeJS.Signals): void {
  const pid = managed.child.pid;
  if (pid === undefined || managed.child.exitCode !== null || managed.child.signalCode !== null)
    return;
  try {
    process.kill(-pid, signal);
  } catch {
    // already gone
  }
}

export async function terminate(managed: Managed, graceMs = 10_000): Promise<void> {
  // Children are unref'd while running; while stopping, keep the event loop alive until they exit.
  managed.child.ref();
  signalGroup(managed, "SIGTERM");
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), graceMs);
  });
  try {
    if ((await Promise.race([managed.exit, timeout])) === "timeout") {
      signalGroup(managed, "SIGKILL");
      await managed.exit;
    }
  } finally {
    clearTimeout(timer);
  }
}

async function retryOnPortCollision<T>(attempt: () => Promise<T>, tries = 3): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await attempt();
    } catch (error) {
      if (!(error instanceof PortInUseError) || i >= tries) throw error;
    }
  }
}

function token(): string {
  return randomBytes(24).toString("hex");
}

function validateUsers(users: readonly ControlPlaneUser[]): void {
  const seen = new Set<string>([ADMIN_USER]);
  for (const user of users) {
    const bad = [user.name, ...(user.groups ?? [])].find((s) => !/^[A-Za-z0-9:._@-]+$/.test(s));
    if (bad !== undefined)
      throw new Error(`user/group name not allowed in a token file: ${JSON.stringify(bad)}`);
    if (seen.has(user.name)) throw new Error(`duplicate or reserved user name: ${user.name}`);
    seen.add(user.name);
  }
}

function kubeconfig(server: string, caPem: string, user: string, userToken: string): string {
  const cluster = "sdewan-local";
  const context = `${user}@${cluster}`;
  return stringify({
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: cluster,
        cluster: { server, "certificate-authority-data": Buffer.from(caPem).toString("base64") },
      },
    ],
    users: [{ name: user, user: { token: userToken } }],
    contexts: [{ name: context, context: { cluster, user, namespace: "default" } }],
    "current-context": context,
  });
}

async function startEtcd(
  bin: string,
  dir: string,
  log: (l: string) => void,
  timeoutMs: number,
  netns?: string,
) {
  // In a node's own namespace nothing else listens: the standard ports.
  const clientPort = netns === undefined ? await freePort() : 2379;
  const peerPort = netns === undefined ? await freePort() : 2380;
  const url = `http://${LOOPBACK}:${clientPort}`;
  const peer = `http://${LOOPBACK}:${peerPort}`;
  const managed = launch(
    "etcd",
    bin,
    [
      "--name=sdewan-test",
      `--data-dir=${path.join(dir, "etcd")}`,
      `--listen-client-urls=${url}`,
      `--advertise-client-urls=${url}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=sdewan-test=${peer}`,
      "--initial-cluster-state=new",
      "--unsafe-no-fsync=true",
      "--log-level=warn",
    ],
    path.join(dir, "etcd.log"),
    netns,
  );
  log(`etcd starting on ${url}${netns === undefined ? "" : ` in network namespace ${netns}`}`);
  const probe = async (): Promise<boolean> =>
    netns === undefined
      ? (await plainGet(`${url}/health`)).body.includes('"health":"true"')
      : (await curlIn(netns, `${url}/health`)).includes('"health":"true"');
  const ready = pollUntil(
    async () => {
      try {
        return (await probe()) ? true : undefined;
      } catch {
        return undefined;
      }
    },
    () => `etcd ${url}/health (log: ${managed.logPath})`,
    { timeoutMs, abort: managed.died },
  );
  return { managed, url, ready };
}

interface Pki {
  readonly ca: CertificateAuthority;
  readonly serving: IssuedCertificate;
  readonly sa: { privatePath: string; publicPath: string };
  readonly kubeletClient: IssuedCertificate | undefined;
}

async function makePki(dir: string, node: NodeNetwork | undefined): Promise<Pki> {
  await mkdir(dir, { recursive: true });
  const ca = await createCertificateAuthority(dir, "sdewan-local-ca");
  const [serving, sa, kubeletClient] = await Promise.all([
    issueCertificate(ca, dir, {
      name: "apiserver",
      commonName: "kube-apiserver",
      usage: "server",
      // The kubernetes Service's ClusterIP too, as on a cluster whose Pods call the API server.
      ips:
        node === undefined
          ? [LOOPBACK, KUBERNETES_SERVICE_IP]
          : [LOOPBACK, node.address, node.serviceRangeFirstIp],
      dnsNames: [
        "localhost",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
      ],
    }),
    createSigningKeyPair(dir),
    // The API server's identity towards kubelets (kubectl logs, exec, port-forward).
    node === undefined
      ? undefined
      : issueCertificate(ca, dir, {
          name: "kubelet-client",
          commonName: "kube-apiserver-kubelet-client",
          organizations: ["system:masters"],
          usage: "client",
        }),
  ]);
  return { ca, serving, sa, kubeletClient };
}

interface ApiserverPlan {
  readonly bin: string;
  readonly dir: string;
  readonly pki: Pki;
  readonly etcdUrl: string;
  readonly tokenFile: string;
  readonly adminToken: string;
  readonly extraArgs: readonly string[];
  readonly timeoutMs: number;
  readonly node: NodeNetwork | undefined;
}

function apiserverArgs(plan: ApiserverPlan, port: number): string[] {
  const common = [
    `--etcd-servers=${plan.etcdUrl}`,
    `--secure-port=${port}`,
    `--cert-dir=${plan.dir}`,
    `--tls-cert-file=${plan.pki.serving.certPath}`,
    `--tls-private-key-file=${plan.pki.serving.keyPath}`,
    `--client-ca-file=${plan.pki.ca.certPath}`,
    `--token-auth-file=${plan.tokenFile}`,
    `--service-account-key-file=${plan.pki.sa.publicPath}`,
    `--service-account-signing-key-file=${plan.pki.sa.privatePath}`,
    "--allow-privileged=true",
    "--profiling=false",
  ];
  const node = plan.node;
  if (node !== undefined) {
    const kubeletClient = plan.pki.kubeletClient;
    if (kubeletClient === undefined)
      throw new Error("unreachable: node PKI without kubelet client");
    return [
      ...common,
      `--bind-address=${node.address}`,
      `--advertise-address=${node.address}`,
      "--authorization-mode=Node,RBAC",
      "--enable-admission-plugins=NodeRestriction",
      `--service-cluster-ip-range=${node.serviceRange}`,
      "--service-account-issuer=https://kubernetes.default.svc",
      `--kubelet-client-certificate=${kubeletClient.certPath}`,
      `--kubelet-client-key=${kubeletClient.keyPath}`,
      // The node's name does not resolve here; its InternalIP does.
      "--kubelet-preferred-address-types=InternalIP",
      ...plan.extraArgs,
    ];
  }
  const server = `https://${LOOPBACK}:${port}`;
  return [
    ...common,
    `--bind-address=${LOOPBACK}`,
    `--advertise-address=${LOOPBACK}`,
    "--authorization-mode=RBAC",
    // The real node's range (addresses.ts). Only data here: no proxy routes them, nothing connects.
    `--service-cluster-ip-range=${SERVICE_RANGE}`,
    `--service-account-issuer=${server}`,
    // No controller-manager creates the default ServiceAccount in each namespace.
    "--disable-admission-plugins=ServiceAccount",
    // The "kubernetes" Service's Endpoints would point at 127.0.0.1, which Endpoints validation
    // refuses (loopback); nothing here needs them.
    "--endpoint-reconciler-type=none",
    ...plan.extraArgs,
  ];
}

/**
 * The host's way in to an API server inside a node's namespace: a Unix socket crosses namespaces
 * through the file system, so one socat listens on it inside and one on host loopback forwards to it.
 */
async function startRelay(
  node: NodeNetwork,
  dir: string,
  cleanup: Cleanup,
): Promise<{ server: string; managed: Managed[] }> {
  const socket = path.join(node.runDir, "apiserver.sock");
  const port = await freePort();
  const inside = launch(
    "relay-inside",
    "socat",
    [`UNIX-LISTEN:${socket},fork,unlink-early`, `TCP:${node.address}:${NODE_APISERVER_PORT}`],
    path.join(dir, "relay.log"),
    node.netns,
  );
  const outside = launch(
    "relay-host",
    "socat",
    [`TCP-LISTEN:${port},bind=${LOOPBACK},reuseaddr,fork`, `UNIX-CONNECT:${socket}`],
    path.join(dir, "relay.log"),
  );
  cleanup.track(inside);
  cleanup.track(outside);
  return { server: `https://${LOOPBACK}:${port}`, managed: [inside, outside] };
}

async function startApiserver(plan: ApiserverPlan, log: (l: string) => void, cleanup: Cleanup) {
  const node = plan.node;
  const port = node === undefined ? await freePort() : NODE_APISERVER_PORT;
  const relay = node === undefined ? undefined : await startRelay(node, plan.dir, cleanup);
  const server = relay?.server ?? `https://${LOOPBACK}:${port}`;
  const managed = launch(
    "kube-apiserver",
    plan.bin,
    apiserverArgs(plan, port),
    path.join(plan.dir, "kube-apiserver.log"),
    node?.netns,
  );
  log(
    node === undefined
      ? `kube-apiserver starting on ${server}`
      : `kube-apiserver starting on https://${node.address}:${port} in ${node.netns}, relayed to ${server}`,
  );
  const endpoint: ApiEndpoint = { server, caPem: plan.pki.ca.certPem, token: plan.adminToken };
  let last = "no answer yet";
  const ready = pollUntil(
    async () => {
      try {
        const res = await apiRequest(endpoint, "/readyz", { timeoutMs: 5_000 });
        last = `HTTP ${res.status}`;
        return res.status === 200 ? true : undefined;
      } catch (error) {
        last = error instanceof Error ? error.message : String(error);
        return undefined;
      }
    },
    () => `${server}/readyz (last: ${last}; log: ${managed.logPath})`,
    { timeoutMs: plan.timeoutMs, intervalMs: 200, abort: managed.died },
  );
  return { managed, server, endpoint, ready };
}

export async function startControlPlane(options: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const started = Date.now();
  const log = options.log ?? ((): void => undefined);
  const users = options.users ?? defaultUsers;
  validateUsers(users);
  const binaries = options.binaries ?? (await resolveBinaries());
  const crds = (
    await Promise.all((options.crdDirs ?? [defaultCrdDir]).map((d) => readCrdDir(d)))
  ).flat();
  const timeoutMs = options.startTimeoutMs ?? 90_000;

  const base = options.baseDir ?? ((await writable("/dev/shm")) ? "/dev/shm" : os.tmpdir());
  const dir = await mkdtemp(path.join(base, "sdewan-cp-"));
  const cleanup = new Cleanup(dir);
  try {
    const pki = await makePki(path.join(dir, "pki"), options.node);
    const adminToken = token();
    const tokens = [
      { name: ADMIN_USER, groups: ["system:masters"], token: adminToken },
      ...users.map((u) => ({ name: u.name, groups: [...(u.groups ?? [])], token: token() })),
    ];
    const tokenFile = path.join(dir, "tokens.csv");
    const csv = tokens
      .map((t) => `${t.token},${t.name},${t.name},"${t.groups.join(",")}"`)
      .join("\n");
    await writeFile(tokenFile, `${csv}\n`, { mode: 0o600 });

    const etcd = await retryOnPortCollision(async () => {
      const e = await startEtcd(binaries.etcd, dir, log, timeoutMs, options.node?.netns);
      cleanup.track(e.managed);
      await e.ready;
      return e;
    });
    const plan: ApiserverPlan = {
      bin: binaries.kubeApiserver,
      dir,
      pki,
      etcdUrl: etcd.url,
      tokenFile,
      adminToken,
      extraArgs: options.extraApiserverArgs ?? [],
      timeoutMs,
      node: options.node,
    };
    const apiserver = await retryOnPortCollision(async () => {
      const a = await startApiserver(plan, log, cleanup);
      cleanup.track(a.managed);
      await a.ready;
      return a;
    });
    log(`kube-apiserver ready after ${Date.now() - started} ms`);

    const credentials: UserCredentials[] = [];
    for (const t of tokens) {
      const kubeconfigPath = path.join(
        dir,
        t.name === ADMIN_USER ? "kubeconfig" : `kubeconfig-${t.name}`,
      );
      await writeFile(
        kubeconfigPath,
        kubeconfig(apiserver.server, pki.ca.certPem, t.name, t.token),
        {
          mode: 0o600,
        },
      );
      credentials.push({ name: t.name, groups: t.groups, token: t.token, kubeconfigPath });
    }
    const [admin, ...rest] = credentials;
    if (admin === undefined) throw new Error("unreachable: no admin credentials");

    await applyCrds(apiserver.endpoint, crds, timeoutMs);
    if (crds.length > 0) log(`${crds.length} CRDs Established`);

    const info: ControlPlaneInfo = {
      server: apiserver.server,
      caPem: pki.ca.certPem,
      caCertPath: pki.ca.certPath,
      caKeyPath: pki.ca.keyPath,
      dir,
      kubeconfigPath: admin.kubeconfigPath,
      etcdUrl: etcd.url,
      admin,
      users: Object.fromEntries(rest.map((c) => [c.name, c])),
      crds: crds.map((c) => c.name),
      ownerPid: process.pid,
      binaries,
      startMs: Date.now() - started,
    };
    log(`control plane ready in ${info.startMs} ms (${dir})`);
    return handle(info, cleanup);
  } catch (error) {
    // Read the logs before the directory goes.
    const logs =
      error instanceof DeadlineError
        ? ["etcd.log", "kube-apiserver.log"]
            .map((f) => `--- last lines of ${f}:\n${tail(path.join(dir, f), 20)}`)
            .join("\n")
        : "";
    await cleanup.stop();
    if (error instanceof DeadlineError) {
      throw new ControlPlaneStartError(
        `${error.message}\n${logs}\nTo watch a start-up, run \`npm run cluster:up\`.`,
      );
    }
    throw error;
  }
}

export function userFromInfo(info: ControlPlaneInfo, name: string): UserCredentials {
  if (name === ADMIN_USER) return info.admin;
  const user = info.users[name];
  if (user === undefined) {
    const known = [ADMIN_USER, ...Object.keys(info.users)].join(", ");
    throw new Error(`no control-plane user ${JSON.stringify(name)} (declared: ${known})`);
  }
  return user;
}

/** Issues a serving certificate from the CA named in `info`; works in any process. */
export async function issueServingCertificate(
  info: ControlPlaneInfo,
  request: ServingCertificateRequest = {},
): Promise<IssuedCertificate> {
  const ca: CertificateAuthority = {
    certPath: info.caCertPath,
    keyPath: info.caKeyPath,
    certPem: info.caPem,
  };
  const dir = await mkdtemp(path.join(info.dir, "cert-"));
  return issueCertificate(ca, dir, {
    name: "serving",
    commonName: request.commonName ?? "sdewan-test-server",
    usage: "server",
    ips: request.ips ?? [LOOPBACK],
    dnsNames: request.dnsNames ?? ["localhost"],
  });
}

function handle(info: ControlPlaneInfo, cleanup: Cleanup): ControlPlane {
  const endpoint = (user = ADMIN_USER): ApiEndpoint => ({
    server: info.server,
    caPem: info.caPem,
    token: userFromInfo(info, user).token,
  });
  return {
    ...info,
    user: (name) => userFromInfo(info, name),
    endpoint,
    info: () => info,
    applyCrds: (crds) => applyCrds(endpoint(), crds),
    issueServingCertificate: (request) => issueServingCertificate(info, request),
    stop: () => cleanup.stop(),
  };
}
