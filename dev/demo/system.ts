/**
 * The whole system on one machine, as a user installs it: a local control plane, the project's
 * own least-privilege identities (manifests/rbac), CNF simulators as the pods of CNF cnf-1,
 * simulated ClusterLink peer gateways, every function in one server, validate-admission over
 * HTTPS registered as the webhook, and an event source: the connector with the shipped
 * configuration (or none, when the caller brings Knative's adapters). Then the objects a user
 * would write: the samples (all rule kinds, an Egress), a NetworkPolicy, and ClusterLink's Peers,
 * Export, Import and AccessPolicy. Shared by `npm run demo` and the whole-system tests.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { AdmissionregistrationV1Api, KubeConfig } from "@kubernetes/client-node";
import { parse, stringify } from "yaml";
import { repoRoot } from "../control-plane/binaries.js";
import { startControlPlane, type ControlPlane } from "../control-plane/control-plane.js";
import { withHeartbeat } from "../lib/progress.js";
import { httpsStatus, startChild, waitForHttp, type Child } from "./children.js";
import { DemoCluster } from "./cluster.js";
import { sampleFiles } from "../world/samples.js";
import { createDemoIdentities, type DemoIdentities } from "./identities.js";
import { ClusterLinkDemo, DEMO_PEERS } from "./clusterlink.js";
import { PeerGatewayFleet } from "../peer-gateway-sim/index.js";
import { buildWebhookConfiguration } from "../../shared/admission/index.js";
import { FUNCTION_CATALOG } from "../../functions/catalog.js";
import { freePort } from "../control-plane/control-plane.js";

/** Every function the function server serves (validate-admission has its HTTPS server). */
export const SERVED_FUNCTIONS: readonly string[] = FUNCTION_CATALOG.map((f) => f.name).filter(
  (name) => name !== "validate-admission",
);

export interface SystemOptions {
  readonly say: (line: string) => void;
  /** "connector" (the shipped configuration) or "none" (the caller sends the events). */
  readonly eventSource: "connector" | "none";
  /** Resync period per connector route, replacing the shipped one (e.g. "30s"). */
  readonly resync?: (route: string, shipped: string) => string;
  /** Extra kube-apiserver flags (e.g. an audit log). */
  readonly apiserverArgs?: (workDir: string) => Promise<readonly string[]>;
  readonly logLevel?: string;
}

/** The connector's shipped config, pointed at the local functions, with the given resyncs. */
async function connectorConfig(
  functionsUrl: string,
  port: number,
  resync: SystemOptions["resync"],
): Promise<string> {
  const config = parse(
    await readFile(path.join(repoRoot, "manifests/connector/config.yaml"), "utf8"),
  ) as { http: object; routes: { name: string; url: string; resync?: string }[] };
  config.http = { host: "127.0.0.1", port };
  for (const route of config.routes) {
    route.url = `${functionsUrl}/${route.name}`;
    // Only routes whose function takes resync events have a period (reconcile-rule does not).
    if (route.resync !== undefined && resync !== undefined) {
      route.resync = resync(route.name, route.resync);
    }
  }
  return stringify(config);
}

async function registerWebhook(cp: ControlPlane, url: string, caPem: string): Promise<void> {
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfigPath);
  const body = buildWebhookConfiguration({
    clientConfig: { url, caBundle: Buffer.from(caPem).toString("base64") },
  });
  await kc.makeApiClient(AdmissionregistrationV1Api).createValidatingWebhookConfiguration({ body });
}

/** The running parts; `stop` ends them in an order that loses nothing (see there). */
export class RunningSystem {
  controlPlane?: ControlPlane;
  workDir?: string;
  identities?: DemoIdentities;
  gateways?: PeerGatewayFleet;
  cluster?: DemoCluster;
  clusterLink?: ClusterLinkDemo;
  namespace = `sdewan-demo-${randomBytes(2).toString("hex")}`;
  functionsUrl = "";
  webhookUrl = "";
  webhookCaPem = "";
  connectorUrl: string | undefined;
  readonly children: Child[] = [];
  private connector: Child | undefined;

  constructor(private readonly say: (line: string) => void) {}

  /** The shop namespace, where the sample Egress and the NetworkPolicy select web Pods. */
  get shopNamespace(): string {
    return `${this.namespace}-shop`;
  }

  async start(options: SystemOptions): Promise<void> {
    const { say } = this;
    const work = await mkdtemp(path.join(os.tmpdir(), "sdewan-demo-"));
    this.workDir = work;
    const t0 = Date.now();
    const extraApiserverArgs = (await options.apiserverArgs?.(work)) ?? [];
    this.controlPlane = await withHeartbeat(
      "control plane start (etcd, kube-apiserver, CRDs)",
      startControlPlane({ extraApiserverArgs }),
      { say },
    );
    const cp = this.controlPlane;
    say(`control plane up in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${cp.server}`);
    const { identities, objects } = await createDemoIdentities(cp.kubeconfigPath, work);
    this.identities = identities;
    say(
      `applied manifests/rbac (${objects} objects): the functions, the webhook and the connector ` +
        "run as its ServiceAccounts, not as admin",
    );

    // ClusterLink peer gateways (dev/peer-gateway-sim): east answers, west never does.
    this.gateways = await PeerGatewayFleet.start({
      peers: DEMO_PEERS,
      dir: path.join(work, "peer-gateways"),
    });
    say(
      `peer gateway simulators: ${this.gateways.controlUrl}/gateways (east healthy, west silent)`,
    );

    const logLevel = options.logLevel ?? "info";
    const functionsPort = await freePort("127.0.0.1");
    this.functionsUrl = `http://127.0.0.1:${functionsPort}`;
    const functions = startChild(
      "functions",
      "functions/server.ts",
      [],
      {
        KUBECONFIG: identities.functions,
        PORT: String(functionsPort),
        HOST: "127.0.0.1",
        FUNCTIONS: SERVED_FUNCTIONS.join(","),
        CL_PEER_TLS_DIR: this.gateways.identityDir,
        // Plain HTTP here: the demo asks clusterlink-authz on Peer east's behalf (docs/clusterlink.md).
        CL_AUTHZ_UNVERIFIED: "on-behalf-of-peer",
        LOG_LEVEL: logLevel,
      },
      path.join(work, "functions.log"),
    );
    this.children.push(functions);
    await withHeartbeat(
      "functions start",
      waitForHttp(`${this.functionsUrl}/_/ready`, functions, 60_000),
      { say },
    );
    say(`functions ready at ${this.functionsUrl} (log ${functions.logPath})`);

    // validate-admission over TLS (a certificate from the cluster CA), registered as the webhook.
    const serving = await cp.issueServingCertificate();
    const webhookPort = await freePort("127.0.0.1");
    const webhook = startChild(
      "validate-admission",
      "functions/validate-admission/main.ts",
      [],
      {
        KUBECONFIG: identities.webhook,
        PORT: String(webhookPort),
        TLS_CERT_FILE: serving.certPath,
        TLS_KEY_FILE: serving.keyPath,
        LOG_LEVEL: logLevel,
      },
      path.join(work, "validate-admission.log"),
    );
    this.children.push(webhook);
    this.webhookUrl = `https://127.0.0.1:${webhookPort}`;
    this.webhookCaPem = serving.caPem;
    await withHeartbeat(
      "validate-admission start",
      waitForHttp(`${this.webhookUrl}/_/ready`, webhook, 60_000, (url) =>
        httpsStatus(url, serving.caPem),
      ),
      { say },
    );
    await registerWebhook(cp, `${this.webhookUrl}/`, serving.caPem);
    say(`validate-admission serving HTTPS at ${this.webhookUrl}, registered with the API server`);

    this.cluster = new DemoCluster(cp.kubeconfigPath);
    await this.cluster.createNamespace(this.namespace);
    const cnf = await this.cluster.createCnf(this.namespace);
    await this.cluster.createShop(this.namespace);
    say(`namespace ${this.namespace}: CNF cnf-1 with 2 ready pods, 2 web pods for the Egress`);
    // Each pod's Pod IP is its own loopback address, where a simulator serves the CNF port.
    say(`CNF simulators: ${cnf.pods.map((p) => p.sim.url).join(", ")}`);

    if (options.eventSource === "connector") await this.startConnector(options);
  }

  private async startConnector(options: SystemOptions): Promise<void> {
    const work = this.workDir ?? "";
    const port = await freePort("127.0.0.1");
    const configPath = path.join(work, "connector.yaml");
    await writeFile(configPath, await connectorConfig(this.functionsUrl, port, options.resync));
    const connector = startChild(
      "connector",
      "connector/main.ts",
      ["--config", configPath],
      { KUBECONFIG: this.identities?.connector ?? "", LOG_LEVEL: options.logLevel ?? "info" },
      path.join(work, "connector.log"),
    );
    this.children.push(connector);
    this.connector = connector;
    this.connectorUrl = `http://127.0.0.1:${port}`;
    await withHeartbeat(
      "connector start",
      waitForHttp(`${this.connectorUrl}/readyz`, connector, 60_000),
      { say: this.say },
    );
    this.say(`connector ready (log ${connector.logPath})`);
  }

  /** Every sample but the CNF Deployment (all rule kinds and the Egress); returns how many. */
  async applySamples(): Promise<number> {
    const samples = sampleFiles().filter((f) => f !== "cnf-deployment.yaml");
    return this.demoCluster().applySamples(this.namespace, samples);
  }

  /** A NetworkPolicy in the shop namespace: web Pods take port 80 from the shop's own Pods. */
  async applyNetworkPolicy(): Promise<void> {
    await this.demoCluster().createNetworkPolicy(this.shopNamespace, "web-from-shop", {
      podSelector: { matchLabels: { app: "web" } },
      policyTypes: ["Ingress"],
      ingress: [{ from: [{ podSelector: {} }], ports: [{ protocol: "TCP", port: 80 }] }],
    });
  }

  async applyClusterLink(): Promise<ClusterLinkDemo> {
    if (this.controlPlane === undefined || this.gateways === undefined) {
      throw new Error("the system is not started");
    }
    this.clusterLink = new ClusterLinkDemo(this.controlPlane.kubeconfigPath);
    await this.clusterLink.apply(this.gateways);
    return this.clusterLink;
  }

  demoCluster(): DemoCluster {
    if (this.cluster === undefined) throw new Error("the system is not started");
    return this.cluster;
  }

  /**
   * The connector first (no new events), then the control plane (its keep-alive connections to
   * the webhook go with it), then the servers and the simulators. Logs are kept when a child did
   * not exit cleanly, or when `keepLogs`.
   */
  async stop(keepLogs = false): Promise<void> {
    const from = Date.now();
    const endings: string[] = [];
    const stop = async (child: Child | undefined) => {
      if (child === undefined) return;
      const how = await child.stop();
      endings.push(how);
      this.say(`stopped ${child.name}: ${how}`);
    };
    await stop(this.connector);
    await this.controlPlane?.stop();
    await Promise.all(this.children.filter((c) => c !== this.connector).map(stop));
    await this.cluster?.close();
    await this.gateways?.close();
    const clean = endings.every((how) => how === "exit 0") && !keepLogs;
    if (this.workDir && clean) await rm(this.workDir, { recursive: true, force: true });
    if (this.workDir && !clean) this.say(`logs kept in ${this.workDir}`);
    this.say(`stopped everything in ${((Date.now() - from) / 1000).toFixed(1)} s`);
  }
}
