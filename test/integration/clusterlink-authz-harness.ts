// clusterlink-authz as a remote dataplane meets it: served over HTTPS by the runtime with client
// certificates verified against the fabric CA of dev/peer-gateway-sim, running with exactly its
// manifests/rbac role, asked with a Peer's own certificate (or none). Peers live in a ClusterLink
// namespace of this world's own (CL_NAMESPACE), with the status clusterlink-peer-health writes.
import { readFile } from "node:fs/promises";
import { request as httpsRequest } from "node:https";
import path from "node:path";
import { PeerGatewayFleet } from "../../dev/peer-gateway-sim/index.js";
import { createClusterLinkAuthz } from "../../functions/clusterlink-authz/index.js";
import {
  clusterLinkResource,
  EVENTS,
  type KubeClient,
  type KubeObject,
} from "../../shared/kube/index.js";
import {
  createFunctionApp,
  createLogger,
  Runtime,
  startServer,
  type RunningServer,
} from "../../shared/runtime/index.js";
import { ClusterLinkWorld, PEERS } from "./clusterlink-harness.js";
import { identityFrom } from "./support/identity.js";

export const ACCESS_POLICIES = clusterLinkResource("AccessPolicy");
export const PRIVILEGED_POLICIES = clusterLinkResource("PrivilegedAccessPolicy");

export interface Reply {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

interface Identity {
  readonly cert: Buffer;
  readonly key: Buffer;
}

interface Recorded extends KubeObject {
  reason?: string;
  note?: string;
  type?: string;
  regarding?: { kind?: string; name?: string };
}

async function identityIn(dir: string): Promise<Identity> {
  const [cert, key] = await Promise.all([
    readFile(path.join(dir, "tls.crt")),
    readFile(path.join(dir, "tls.key")),
  ]);
  return { cert, key };
}

export class AuthzWorld extends ClusterLinkWorld {
  fleet!: PeerGatewayFleet;
  /** CL_NAMESPACE of the function served: this world's Peers. */
  peerNamespace = "";
  private server!: RunningServer;
  private fabricCa!: Buffer;
  private readonly identities = new Map<string, Identity>();
  /** The role's own client: what the function reads and writes with. */
  roleKube!: KubeClient;

  /** Starts the fleet's CA and the function over HTTPS; `env` adds to CL_NAMESPACE. */
  async start(env: Record<string, string> = {}): Promise<void> {
    await this.setUp();
    this.peerNamespace = await this.namespace("cl-authz-peers");
    this.fleet = await PeerGatewayFleet.start({ peers: [] });
    const serving = await this.fleet.issueIdentity("clusterlink-authz", {
      usage: "server",
      dnsNames: ["localhost"],
      ips: ["127.0.0.1"],
    });
    this.fabricCa = await readFile(path.join(serving, "ca.crt"));
    this.roleKube = (await identityFrom("clusterlink-authz.yaml")).kube;
    const fn = createClusterLinkAuthz({
      kube: () => this.roleKube,
      env: { CL_NAMESPACE: this.peerNamespace, ...env },
    });
    const runtime = new Runtime({ logger: createLogger({ level: "silent" }) });
    this.server = await startServer(createFunctionApp(fn, runtime), runtime, {
      port: 0,
      host: "127.0.0.1",
      tls: {
        certFile: path.join(serving, "tls.crt"),
        keyFile: path.join(serving, "tls.key"),
        clientCaFile: path.join(serving, "ca.crt"),
      },
    });
  }

  async stop(): Promise<void> {
    await this.server.close();
    await this.fleet.close();
  }

  /** A dataplane's identity from the fabric CA: CN and DNS name `name`. */
  async certificateOf(name: string): Promise<Identity> {
    const known = this.identities.get(name);
    if (known !== undefined) return known;
    const identity = await identityIn(await this.fleet.issueIdentity(name));
    this.identities.set(name, identity);
    return identity;
  }

  /** An identity from another CA: it does not verify against the fabric's. */
  stranger(): Promise<Identity> {
    return identityIn(this.fleet.strangerDir);
  }

  /** POSTs a decision request over HTTPS, with this client certificate (or none). */
  ask(identity: Identity | undefined, body: unknown): Promise<Reply> {
    return new Promise((resolve, reject) => {
      const req = httpsRequest(
        `${this.server.url}/`,
        {
          method: "POST",
          ca: this.fabricCa,
          agent: false,
          headers: { "content-type": "application/json" },
          ...(identity === undefined ? {} : { cert: identity.cert, key: identity.key }),
        },
        (res) => {
          let text = "";
          res.on("data", (chunk: Buffer) => (text += chunk.toString()));
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              body: JSON.parse(text) as Record<string, unknown>,
            }),
          );
        },
      );
      req.on("error", reject);
      req.end(JSON.stringify(body));
    });
  }

  /** A Peer in this world's ClusterLink namespace, with the labels its heartbeat reported. */
  async peer(name: string, labels?: Record<string, string>): Promise<void> {
    await this.kube.create(PEERS, {
      metadata: { name, namespace: this.peerNamespace },
      spec: { gateways: [{ host: "127.0.0.1", port: 1 }] },
    });
    if (labels !== undefined) await this.peerLabels(name, labels);
  }

  /** Writes `status.labels` of a Peer as clusterlink-peer-health does from a heartbeat. */
  async peerLabels(name: string, labels: Record<string, string>): Promise<void> {
    await this.kube.patchStatus(PEERS, { namespace: this.peerNamespace, name }, { labels });
  }

  /** An Export of a Service with one port, verified by clusterlink-export (ExportValid True). */
  async validExport(namespace: string, name: string): Promise<void> {
    await this.service(namespace, name, [5432]);
    await this.exportOf(namespace, name, { port: 5432 });
    await this.exportEvent(namespace, name);
  }

  async policy(
    namespace: string | undefined,
    name: string,
    spec: Record<string, unknown>,
  ): Promise<KubeObject> {
    const type = namespace === undefined ? PRIVILEGED_POLICIES : ACCESS_POLICIES;
    return this.kube.create(type, {
      metadata: { name, ...(namespace === undefined ? {} : { namespace }) },
      spec,
    });
  }

  /** Type, status, reason and message of a policy's PolicyValid, or undefined. */
  async policyValid(
    namespace: string | undefined,
    name: string,
  ): Promise<Record<string, unknown> | undefined> {
    const type = namespace === undefined ? PRIVILEGED_POLICIES : ACCESS_POLICIES;
    const object = await this.kube.get(type, { name, ...(namespace ? { namespace } : {}) });
    const status = object?.status as { conditions?: Record<string, unknown>[] } | undefined;
    const found = status?.conditions?.find((c) => c["type"] === "PolicyValid");
    if (found === undefined) return undefined;
    const { status: s, reason, message } = found;
    return { status: s, reason, message };
  }

  /** Events about one object, as `kubectl describe` would list them. */
  async eventsOf(namespace: string, kind: string, name: string): Promise<Recorded[]> {
    const all = (await this.kube.list(EVENTS, { namespace })) as Recorded[];
    return all.filter((e) => e.regarding?.kind === kind && e.regarding.name === name);
  }
}
