// The e2e world: the whole controller as a user runs it, against the integration project's real
// API server. Two CNF simulators are the pods of CNF cnf-1 (dev/demo's DemoCluster makes it with
// dev/world: the sample Deployment, its ReplicaSet and Ready Pods), and three child processes on Node 24 through tsx: the
// functions' server, validate-admission over TLS (registered as the webhook for this namespace
// only) and the connector (watching this namespace only). Tests act only through the API server
// (and the simulators' restart switch, as a crashing CNF container would); they observe the API
// objects' status and what each simulator holds.
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { once } from "node:events";
import { connect, createServer, type AddressInfo, type Socket } from "node:net";
import os from "node:os";
import path from "node:path";
import { AdmissionregistrationV1Api, type KubeConfig } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { repoRoot } from "../../dev/control-plane/binaries.js";
import { ADMIN_USER, userFromInfo } from "../../dev/control-plane/control-plane.js";
import { httpsStatus, waitForHttp, type Child } from "../../dev/demo/children.js";
import type { SimRequestRecord } from "../../dev/cnf-sim/index.js";
import { DemoCluster } from "../../dev/demo/cluster.js";
import { buildWebhookConfiguration } from "../../shared/admission/index.js";
import { ruleResource, type KubeClient } from "../../shared/kube/index.js";
import { requireKind, type RuleKindName } from "../../shared/kinds/index.js";
import { kubeConfigVia } from "../integration/connector-harness.js";
import {
  adminKubeConfig,
  clusterInfo,
  webhookCertificate,
} from "../integration/support/cluster.js";
import { freePort } from "../../dev/control-plane/control-plane.js";

export const CNF = "cnf-1";
const RULE_KINDS: readonly RuleKindName[] = [
  "Mwan3Policy",
  "Mwan3Rule",
  "FirewallZone",
  "FirewallForwarding",
  "IpsecProposal",
];

/** A child process that can also be killed outright (dev/demo's Child only stops gracefully). */
export interface KillableChild extends Child {
  kill(signal: NodeJS.Signals): void;
}

function startChild(
  name: string,
  script: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  logPath: string,
): KillableChild {
  const log = createWriteStream(logPath, { flags: "a" });
  // process.execPath is the test's Node 24 (npm test runs jest with the repo's node). tsx as a
  // loader, not its CLI: the CLI runs the script in a grandchild that a SIGKILL would not reach.
  const child = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: repoRoot,
    env: { ...process.env, LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ?? `exit ${code ?? "?"}`));
    child.once("error", (error) => resolve(`failed to start: ${error.message}`));
  });
  void exited.then(() => log.end());
  const running = () => child.exitCode === null && child.signalCode === null;
  return {
    name,
    logPath,
    exited,
    kill: (signal) => {
      if (running()) child.kill(signal);
    },
    async stop(timeoutMs = 10_000) {
      if (running()) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * The connector's periodic resync carries no scope (every namespace). This control plane is shared
 * with the integration tests, so a relay narrows it to this namespace before it reaches
 * on-deployment-ready; everything else about the request is passed on, and the answer comes back.
 */
async function startResyncRelay(target: string, namespace: string) {
  let forwarded = 0;
  let enabled = false;
  const server = http.createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      // Off by default, so the other scenarios prove their own healing path, not the resync's.
      if (!enabled) {
        res.writeHead(202).end();
        return;
      }
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(req.headers)) {
        if (key.startsWith("ce-") || key === "content-type") headers[key] = String(value);
      }
      fetch(target, {
        method: "POST",
        headers,
        body: JSON.stringify({ namespace }),
        signal: AbortSignal.timeout(20_000),
      })
        .then(async (reply) => {
          forwarded += 1;
          res.writeHead(reply.status).end(await reply.text());
        })
        .catch(() => res.writeHead(502).end());
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/`,
    forwarded: () => forwarded,
    enable: (on: boolean) => {
      enabled = on;
    },
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** A loopback TCP proxy; `freezeExisting` stops moving bytes on the connections open now. */
export interface FreezableProxy {
  readonly url: string;
  freezeExisting(): void;
  close(): Promise<void>;
}

async function startFreezableProxy(target: string): Promise<FreezableProxy> {
  const { hostname, port, protocol } = new URL(target);
  const sockets = new Set<Socket>();
  const live = new Set<[Socket, Socket]>();
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    const pair: [Socket, Socket] = [client, upstream];
    for (const socket of pair) sockets.add(socket);
    live.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = (): void => {
      live.delete(pair);
      for (const socket of pair) {
        sockets.delete(socket);
        socket.destroy();
      }
    };
    for (const socket of pair) socket.on("error", drop).on("close", drop);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port: proxyPort } = server.address() as AddressInfo;
  return {
    url: `${protocol}//127.0.0.1:${proxyPort}`,
    freezeExisting: () => {
      // Both directions stop and the sockets stay open: to the client, a live and silent stream.
      for (const [client, upstream] of live) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      live.clear();
    },
    close: async () => {
      // Frozen sockets too: a paused socket never sees its peer go, and would keep jest alive.
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface ConnectorOptions {
  /** Talk to the API server through this proxy (to freeze the watches). */
  readonly via?: FreezableProxy;
  /** watch.inactivity, e.g. "3s"; default the connector's. */
  readonly inactivity?: string;
}

export interface RuleView {
  readonly generation: number;
  readonly inSync: boolean | undefined;
  readonly appliedGeneration: number | undefined;
  readonly deleting: boolean;
}

export class E2eWorld {
  readonly kube: KubeClient;
  private readonly cluster: DemoCluster;
  private readonly children: KillableChild[] = [];
  private connectorChild: KillableChild | undefined;
  private functionsChild: KillableChild | undefined;
  private relay: Awaited<ReturnType<typeof startResyncRelay>> | undefined;
  private webhookName: string | undefined;
  private readonly proxies: FreezableProxy[] = [];

  /** Extra environment of the functions' server (e.g. the shipped manifests' settings). */
  private functionsEnv: Record<string, string> = {};

  private constructor(
    readonly namespace: string,
    private readonly workDir: string,
    private readonly kubeconfigPath: string,
    private readonly ports: { readonly functions: number; readonly connector: number },
  ) {
    this.cluster = new DemoCluster(kubeconfigPath);
    this.kube = this.cluster.kube;
  }

  /** The admin kubeconfig the children use. */
  get kubeconfig(): string {
    return this.kubeconfigPath;
  }

  get functionsUrl(): string {
    return `http://127.0.0.1:${this.ports.functions}`;
  }

  /**
   * Starts everything (without the connector when `connector: false`: another event source
   * drives the functions); on failure stops what it started and rethrows.
   */
  static async start(
    namespace: string,
    options: { connector?: boolean; functionsEnv?: Record<string, string> } = {},
  ): Promise<E2eWorld> {
    const workDir = await mkdtemp(path.join(os.tmpdir(), "sdewan-e2e-"));
    const kubeconfigPath = userFromInfo(clusterInfo(), ADMIN_USER).kubeconfigPath;
    const world = new E2eWorld(namespace, workDir, kubeconfigPath, {
      functions: await freePort("127.0.0.1"),
      connector: await freePort("127.0.0.1"),
    });
    try {
      world.functionsEnv = options.functionsEnv ?? {};
      await world.startFunctions();
      await world.startWebhook();
      await world.cluster.createCnf(namespace);
      world.relay = await startResyncRelay(`${world.functionsUrl}/on-deployment-ready`, namespace);
      if (options.connector !== false) await world.startConnector();
    } catch (error) {
      await world.stop();
      throw error;
    }
    return world;
  }

  private spawn(name: string, script: string, args: string[], env: Record<string, string>) {
    const child = startChild(name, script, args, env, path.join(this.workDir, `${name}.log`));
    this.children.push(child);
    return child;
  }

  /** reconcile-rule and on-deployment-ready at POST /<name>; resolves when ready. */
  async startFunctions(): Promise<void> {
    const child = this.spawn("functions", "functions/server.ts", [], {
      KUBECONFIG: this.kubeconfigPath,
      HOST: "127.0.0.1",
      PORT: String(this.ports.functions),
      FUNCTIONS: "reconcile-rule,on-deployment-ready",
      ...this.functionsEnv,
    });
    this.functionsChild = child;
    await waitForHttp(`${this.functionsUrl}/_/ready`, child, 60_000);
  }

  /** SIGKILL: no graceful close, in-flight requests die with their connections. */
  async killFunctions(): Promise<string> {
    const child = this.functionsChild;
    if (child === undefined) throw new Error("functions are not running");
    child.kill("SIGKILL");
    return child.exited;
  }

  private async startWebhook(): Promise<void> {
    const serving = await webhookCertificate();
    const port = await freePort("127.0.0.1");
    const child = this.spawn("validate-admission", "functions/validate-admission/main.ts", [], {
      KUBECONFIG: this.kubeconfigPath,
      PORT: String(port),
      TLS_CERT_FILE: serving.certPath,
      TLS_KEY_FILE: serving.keyPath,
    });
    const url = `https://127.0.0.1:${port}`;
    await waitForHttp(`${url}/_/ready`, child, 60_000, (u) => httpsStatus(u, serving.caPem));
    // For this namespace only: the API server is shared with the integration tests.
    const body = buildWebhookConfiguration({
      name: `sdewan-e2e-${this.namespace}`,
      clientConfig: { url: `${url}/`, caBundle: Buffer.from(serving.caPem).toString("base64") },
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": this.namespace } },
    });
    await this.admission().createValidatingWebhookConfiguration({ body });
    this.webhookName = body.metadata?.name;
  }

  private admission() {
    return adminKubeConfig().makeApiClient(AdmissionregistrationV1Api);
  }

  /** The connector's config: this namespace's rules, CNF Deployments and Pods; a scoped resync. */
  private async connectorConfig(inactivity: string | undefined): Promise<string> {
    const namespaces = [this.namespace];
    const group = "batch.sdewan.akraino.org/v1alpha1";
    const config = {
      http: { host: "127.0.0.1", port: this.ports.connector },
      delivery: { backoff: { initial: "100ms", max: "1s" }, timeout: "20s", maxAge: "5m" },
      watch: inactivity === undefined ? {} : { inactivity },
      shutdownGrace: "5s",
      routes: [
        {
          name: "reconcile-rule",
          url: `${this.functionsUrl}/reconcile-rule`,
          resources: RULE_KINDS.map((kind) => ({ apiVersion: group, kind, namespaces })),
        },
        {
          name: "on-deployment-ready",
          url: `${this.functionsUrl}/on-deployment-ready`,
          resources: [
            { apiVersion: "apps/v1", kind: "Deployment", selector: "sdewanPurpose", namespaces },
            { apiVersion: "v1", kind: "Pod", selector: "sdewanPurpose", namespaces },
          ],
        },
        { name: "namespace-resync", url: this.relay?.url ?? "", resync: "5s" },
      ],
    };
    const file = path.join(this.workDir, "connector.yaml");
    await writeFile(file, stringify(config));
    return file;
  }

  async startConnector(options: ConnectorOptions = {}): Promise<void> {
    const configPath = await this.connectorConfig(options.inactivity);
    let kubeconfig = this.kubeconfigPath;
    if (options.via !== undefined) {
      kubeconfig = path.join(this.workDir, "kubeconfig-via-proxy.yaml");
      const via: KubeConfig = kubeConfigVia(adminKubeConfig(), options.via.url);
      await writeFile(kubeconfig, via.exportConfig(), { mode: 0o600 });
    }
    const child = this.spawn("connector", "connector/main.ts", ["--config", configPath], {
      KUBECONFIG: kubeconfig,
    });
    this.connectorChild = child;
    await waitForHttp(`http://127.0.0.1:${this.ports.connector}/readyz`, child, 60_000);
  }

  async stopConnector(): Promise<string> {
    const how = (await this.connectorChild?.stop()) ?? "not running";
    this.connectorChild = undefined;
    return how;
  }

  /** A loopback proxy to the API server that the test can freeze; closed with the world. */
  async freezableProxy(): Promise<FreezableProxy> {
    const proxy = await startFreezableProxy(clusterInfo().server);
    this.proxies.push(proxy);
    return proxy;
  }

  /** A counter of the connector's /metrics (summed over label sets matching `labels`). */
  async connectorMetric(name: string, labels: Record<string, string> = {}): Promise<number> {
    const text = await (await fetch(`http://127.0.0.1:${this.ports.connector}/metrics`)).text();
    let total = 0;
    for (const line of text.split("\n")) {
      const match = /^(\w+)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (match?.[1] !== name) continue;
      const have = match[2] ?? "";
      if (Object.entries(labels).every(([k, v]) => have.includes(`${k}="${v}"`))) {
        total += Number(match[3]);
      }
    }
    return total;
  }

  /** Lets the connector's periodic resync through to on-deployment-ready (off at start). */
  enableResync(on: boolean): void {
    this.relay?.enable(on);
  }

  resyncsForwarded(): number {
    return this.relay?.forwarded() ?? 0;
  }

  /** A container restart of pod `index`'s CNF as the kubelet reports it (DemoCluster). */
  restartCnfPod(index: number): Promise<void> {
    return this.cluster.restartCnfPod(index);
  }

  /** Pod `index`'s CNF container dies (empty, not Ready) and stays down until cnfPodReady. */
  async crashCnfPod(index: number): Promise<void> {
    const pod = this.cluster.pods[index];
    if (pod === undefined) throw new Error(`no CNF pod ${index}`);
    await this.cluster.fleet.crashPod(pod);
  }

  /** Pod `index` Ready again, as the kubelet reports a restarted container. */
  async cnfPodReady(index: number): Promise<void> {
    const pod = this.cluster.pods[index];
    if (pod === undefined) throw new Error(`no CNF pod ${index}`);
    await this.cluster.fleet.setPodReady(pod, true);
  }

  /** `kubectl apply` of sample files from manifests/samples into this namespace. */
  applySamples(files: readonly string[]): Promise<number> {
    return this.cluster.applySamples(this.namespace, files);
  }

  async createRule(kind: RuleKindName, name: string, spec: object, labels = {}): Promise<void> {
    await this.kube.create(ruleResource(requireKind(kind)), {
      metadata: { name, namespace: this.namespace, labels: { sdewanPurpose: CNF, ...labels } },
      spec,
    });
  }

  async patchRule(kind: RuleKindName, name: string, spec: object): Promise<void> {
    await this.kube.mergePatch(
      ruleResource(requireKind(kind)),
      { namespace: this.namespace, name },
      { spec },
    );
  }

  async deleteRule(kind: RuleKindName, name: string): Promise<void> {
    await this.kube.delete(ruleResource(requireKind(kind)), { namespace: this.namespace, name });
  }

  async rule(kind: RuleKindName, name: string): Promise<RuleView | undefined> {
    const object = await this.kube.get(ruleResource(requireKind(kind)), {
      namespace: this.namespace,
      name,
    });
    if (object === undefined) return undefined;
    const { status } = object as { status?: { inSync?: boolean; appliedGeneration?: number } };
    return {
      generation: object.metadata.generation ?? 0,
      inSync: status?.inSync,
      appliedGeneration: status?.appliedGeneration,
      deleting: object.metadata.deletionTimestamp !== undefined,
    };
  }

  /** The request log of simulator `index` (CNF requests, restarts included, in arrival order). */
  cnfRequests(index: number): SimRequestRecord[] {
    return this.cluster.pods[index]?.sim.requests() ?? [];
  }

  /** What simulator `index` holds for rule `kind/name` (CNF shape), or undefined. */
  held(index: number, kind: RuleKindName, name: string): Record<string, unknown> | undefined {
    const entry = requireKind(kind);
    const { module, collection } = entry.cnf;
    const objects =
      this.cluster.pods[index]?.sim.state().collections[`${module}/${collection}`] ?? [];
    return objects.find((o) => o["name"] === entry.cnfObjectName(name));
  }

  /**
   * Why `kind/name` is not yet converged, or undefined when it is: the API object's status says
   * inSync for its current generation, and both pods hold it (satisfying `expect` when given).
   */
  async pending(
    kind: RuleKindName,
    name: string,
    expect?: (held: Record<string, unknown>) => boolean,
  ): Promise<string | undefined> {
    const view = await this.rule(kind, name);
    if (view === undefined) return `${kind}/${name} does not exist`;
    if (view.inSync !== true || view.appliedGeneration !== view.generation) {
      return `${kind}/${name} status: inSync=${view.inSync} applied=${view.appliedGeneration}/${view.generation}`;
    }
    for (const index of this.cluster.pods.keys()) {
      const held = this.held(index, kind, name);
      if (held === undefined) return `${kind}/${name} missing on pod ${index}`;
      if (expect !== undefined && !expect(held)) {
        return `${kind}/${name} on pod ${index} is ${JSON.stringify(held)}`;
      }
    }
    return undefined;
  }

  /** Why `kind/name` is not yet gone (API object and every pod's copy), or undefined. */
  async pendingDeletion(kind: RuleKindName, name: string): Promise<string | undefined> {
    if ((await this.rule(kind, name)) !== undefined) return `${kind}/${name} still in the API`;
    for (const index of this.cluster.pods.keys()) {
      if (this.held(index, kind, name) !== undefined)
        return `${kind}/${name} still on pod ${index}`;
    }
    return undefined;
  }

  /** Stops everything it started; keeps the logs (and says where) when `keepLogs`. */
  async stop(keepLogs = false): Promise<void> {
    if (this.webhookName !== undefined) {
      await this.admission()
        .deleteValidatingWebhookConfiguration({ name: this.webhookName })
        .catch(() => undefined);
    }
    // The connector first (no new deliveries), then the servers.
    await this.stopConnector();
    await Promise.all(this.children.map((child) => child.stop()));
    await this.relay?.close();
    await Promise.all(this.proxies.map((proxy) => proxy.close()));
    await this.cluster.close();
    if (keepLogs) process.stderr.write(`e2e logs kept in ${this.workDir}\n`);
    else await rm(this.workDir, { recursive: true, force: true });
  }

  async logOf(name: string): Promise<string> {
    return readFile(path.join(this.workDir, `${name}.log`), "utf8").catch(() => "");
  }
}

/**
 * `it` for a scenario file: `onFailure` runs when the scenario throws (the files use it to keep
 * the children's logs), then the failure stands.
 */
export function scenarioIt(onFailure: () => void, defaultTimeoutMs = 60_000) {
  return (title: string, body: () => Promise<void>, timeoutMs = defaultTimeoutMs): void =>
    it(
      title,
      async () => {
        try {
          await body();
        } catch (error) {
          onFailure();
          throw error;
        }
      },
      timeoutMs,
    );
}

/**
 * Polls `check` (undefined = done, a string = what is still pending) until done or the deadline;
 * resolves with the milliseconds it took.
 */
export async function waitFor(
  what: string,
  check: () => Promise<string | undefined>,
  timeoutMs = 30_000,
  pollMs = 100,
): Promise<number> {
  const started = Date.now();
  for (;;) {
    const pending = await check();
    if (pending === undefined) return Date.now() - started;
    if (Date.now() - started > timeoutMs) {
      throw new Error(`${what}: not done after ${timeoutMs} ms: ${pending}`);
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
}

/** The first pending reason of several checks, in order. */
export async function firstPending(
  checks: readonly (() => Promise<string | undefined>)[],
): Promise<string | undefined> {
  for (const check of checks) {
    const pending = await check();
    if (pending !== undefined) return pending;
  }
  return undefined;
}
