/**
 * Simulated gateways of several ClusterLink Peers, the certificates that connect them and a
 * control listener. One fabric CA signs one server certificate naming every Peer (the heartbeat
 * uses the Peer's name as TLS server name) and the client identity clusterlink-peer-health
 * presents; `identityDir` holds that identity as the mounted Secret would (ca.crt, tls.crt,
 * tls.key), and `strangerDir` an identity from another CA, which every gateway refuses.
 * `issueIdentity` makes more from the fabric CA: a Peer's own certificate (as clusterlink-authz
 * sees a remote dataplane), or a server certificate for another endpoint of the fabric.
 *
 * The pieces serve on their own too: `createFabric` writes the certificates once (the Secrets of
 * test/node/fixtures), and `ServedGateways` serves a given gateway identity on fixed ports (the
 * simulator as a Pod, which writes nothing).
 *
 * The control listener is plain HTTP on loopback, like the CNF simulator's /_sim/ paths:
 *   POST /_sim/gateways/<peer>/mode    {"mode": "healthy"|"fail"|"hang"|"silent"|"refuse", "status"?}
 *   POST /_sim/gateways/<peer>/labels  {"<key>": "<value>", ...}
 *   GET  /_sim/gateways                every gateway's address, mode and counters
 */
import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import * as z from "zod";
import {
  createCertificateAuthority,
  issueCertificate,
  type CertificateAuthority,
} from "../control-plane/certs.js";
import {
  gatewayModeSchema,
  PeerGateway,
  type GatewayIdentity,
  type GatewayModeInput,
} from "./server.js";

export interface SimulatedPeer {
  /** The Peer's name: the TLS server name its gateway answers to. */
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly mode?: GatewayModeInput;
}

export interface PeerGatewayFleetOptions {
  readonly peers: readonly SimulatedPeer[];
  /** Where certificates and the identity folders go (default: a new temporary folder). */
  readonly dir?: string;
  readonly host?: string;
  /** The control listener's port (default: any free one). */
  readonly controlPort?: number;
  /** The first Peer's port; the next Peers take the ports after it. Default: any free port each. */
  readonly firstPort?: number;
}

const labelsSchema = z.record(z.string(), z.string());

/** The certificates of a simulated fabric, each identity a folder as a mounted Secret holds it. */
export interface Fabric {
  readonly dir: string;
  readonly ca: CertificateAuthority;
  /** The gateways' own identity: tls.crt naming every Peer, tls.key, ca.crt to verify clients. */
  readonly gateway: GatewayIdentity;
  readonly gatewayDir: string;
  /** ca.crt, tls.crt, tls.key of the client clusterlink-peer-health presents. */
  readonly identityDir: string;
  /** The same files for a client of another CA: every gateway refuses its handshake. */
  readonly strangerDir: string;
}

/**
 * One fabric CA, a server certificate naming every Peer (the heartbeat uses the Peer's name as
 * TLS server name), the client identity and a stranger's, written under `dir`.
 */
export async function createFabric(dir: string, peerNames: readonly string[]): Promise<Fabric> {
  const pki = path.join(dir, "pki");
  const otherPki = path.join(dir, "other-pki");
  await Promise.all([mkdir(pki, { recursive: true }), mkdir(otherPki, { recursive: true })]);
  const [ca, otherCa] = await Promise.all([
    createCertificateAuthority(pki, "clusterlink fabric (simulated)"),
    createCertificateAuthority(otherPki, "another fabric"),
  ]);
  const [server, client, stranger] = await Promise.all([
    issueCertificate(ca, pki, {
      name: "gateway",
      commonName: "clusterlink gateway (simulated)",
      dnsNames: peerNames,
      usage: "server",
    }),
    issueCertificate(ca, pki, {
      name: "client",
      commonName: "clusterlink-peer-health",
      usage: "client",
    }),
    issueCertificate(otherCa, otherPki, {
      name: "stranger",
      commonName: "stranger",
      usage: "client",
    }),
  ]);
  const [gatewayDir, identityDir, strangerDir] = await Promise.all([
    writeIdentity(path.join(dir, "gateway"), ca.certPem, server),
    writeIdentity(path.join(dir, "identity"), ca.certPem, client),
    writeIdentity(path.join(dir, "stranger"), ca.certPem, stranger),
  ]);
  const gateway = { certPem: server.certPem, keyPem: server.keyPem, caPem: ca.certPem };
  return { dir, ca, gateway, gatewayDir, identityDir, strangerDir };
}

/** A gateway identity from a folder as createFabric writes it (or a Secret mounts it). */
export async function readGatewayIdentity(dir: string): Promise<GatewayIdentity> {
  const read = (file: string) => readFile(path.join(dir, file), "utf8");
  const [certPem, keyPem, caPem] = await Promise.all([
    read("tls.crt"),
    read("tls.key"),
    read("ca.crt"),
  ]);
  return { certPem, keyPem, caPem };
}

export interface ServedGatewaysOptions {
  readonly peers: readonly SimulatedPeer[];
  readonly identity: GatewayIdentity;
  readonly host?: string;
  /** The first Peer's port; the next Peers take the ports after it. Default: any free port each. */
  readonly firstPort?: number;
  /** The control listener's port (default: any free one). */
  readonly controlPort?: number;
}

/** One gateway per Peer, all with one identity, and the control listener that changes them. */
export class ServedGateways {
  private constructor(
    private readonly gateways: ReadonlyMap<string, PeerGateway>,
    private readonly control: Server,
  ) {}

  static async start(options: ServedGatewaysOptions): Promise<ServedGateways> {
    const started = await Promise.all(
      options.peers.map(
        async (peer, i) =>
          [
            peer.name,
            await PeerGateway.start({
              identity: options.identity,
              labels: peer.labels ?? {},
              ...(options.host === undefined ? {} : { host: options.host }),
              ...(options.firstPort === undefined ? {} : { port: options.firstPort + i }),
              ...(peer.mode === undefined ? {} : { mode: peer.mode }),
            }),
          ] as const,
      ),
    );
    const gateways = new Map<string, PeerGateway>(started);
    const control = createServer((req, res) => {
      void handleControl(gateways, req, res);
    });
    await new Promise<void>((resolve, reject) => {
      control.once("error", reject);
      control.listen(options.controlPort ?? 0, options.host ?? "127.0.0.1", resolve);
    });
    return new ServedGateways(gateways, control);
  }

  /** The gateway of a Peer; throws for a Peer not simulated here. */
  gateway(peer: string): PeerGateway {
    const gateway = this.gateways.get(peer);
    if (gateway === undefined) throw new Error(`no simulated gateway for Peer ${peer}`);
    return gateway;
  }

  /** Base URL of the control listener. */
  get controlUrl(): string {
    const { address, port } = this.control.address() as AddressInfo;
    const host = address.includes(":") ? `[${address}]` : address;
    return `http://${host}:${port}/_sim`;
  }

  /** Every simulated Peer's gateway, in the order they were started with. */
  get peers(): { readonly peer: string; readonly host: string; readonly port: number }[] {
    return [...this.gateways].map(([peer, g]) => ({ peer, ...g.gateway }));
  }

  async close(): Promise<void> {
    this.control.closeAllConnections();
    await Promise.all([
      new Promise<void>((resolve) => this.control.close(() => resolve())),
      ...[...this.gateways.values()].map((g) => g.close()),
    ]);
  }
}

/** A fabric made for the run and its gateways served on loopback: what tests and the demo use. */
export class PeerGatewayFleet {
  private constructor(
    private readonly served: ServedGateways,
    private readonly fabric: Fabric,
  ) {}

  /** ca.crt, tls.crt, tls.key of the client clusterlink-peer-health presents. */
  get identityDir(): string {
    return this.fabric.identityDir;
  }

  /** The same files for a client of another CA: every gateway refuses its handshake. */
  get strangerDir(): string {
    return this.fabric.strangerDir;
  }

  /**
   * A new identity from the fabric CA, as a mounted Secret would hold it (ca.crt, tls.crt,
   * tls.key): subject CN `name`, the DNS names and IPs given (default: `name` alone).
   */
  async issueIdentity(
    name: string,
    options: {
      usage?: "client" | "server";
      dnsNames?: readonly string[];
      ips?: readonly string[];
    } = {},
  ): Promise<string> {
    const pki = path.join(this.fabric.dir, "pki");
    const cert = await issueCertificate(this.fabric.ca, pki, {
      name: `issued-${name}`,
      commonName: name,
      dnsNames: options.dnsNames ?? [name],
      ips: options.ips ?? [],
      usage: options.usage ?? "client",
    });
    return writeIdentity(path.join(this.fabric.dir, "issued", name), this.fabric.ca.certPem, cert);
  }

  static async start(options: PeerGatewayFleetOptions): Promise<PeerGatewayFleet> {
    const dir = options.dir ?? (await mkdtemp(path.join(os.tmpdir(), "peer-gateway-sim-")));
    const fabric = await createFabric(
      dir,
      options.peers.map((p) => p.name),
    );
    const served = await ServedGateways.start({
      peers: options.peers,
      identity: fabric.gateway,
      ...(options.host === undefined ? {} : { host: options.host }),
      ...(options.controlPort === undefined ? {} : { controlPort: options.controlPort }),
      ...(options.firstPort === undefined ? {} : { firstPort: options.firstPort }),
    });
    return new PeerGatewayFleet(served, fabric);
  }

  /** The gateway of a Peer; throws for a Peer the fleet does not simulate. */
  gateway(peer: string): PeerGateway {
    return this.served.gateway(peer);
  }

  /** `spec.gateways` of the Peer as clusterlink.net/v1alpha1 spells it. */
  peerSpec(peer: string): { gateways: { host: string; port: number }[] } {
    return { gateways: [this.gateway(peer).gateway] };
  }

  /** Base URL of the control listener. */
  get controlUrl(): string {
    return this.served.controlUrl;
  }

  /** Every simulated Peer's gateway, in the order the fleet was started with. */
  get peers(): { readonly peer: string; readonly host: string; readonly port: number }[] {
    return this.served.peers;
  }

  close(): Promise<void> {
    return this.served.close();
  }
}

async function writeIdentity(
  dir: string,
  caPem: string,
  cert: { certPem: string; keyPem: string },
): Promise<string> {
  await mkdir(dir, { recursive: true });
  await Promise.all([
    writeFile(path.join(dir, "ca.crt"), caPem),
    writeFile(path.join(dir, "tls.crt"), cert.certPem),
    writeFile(path.join(dir, "tls.key"), cert.keyPem, { mode: 0o600 }),
  ]);
  return dir;
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString();
  return text === "" ? {} : (JSON.parse(text) as unknown);
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
}

async function handleControl(
  gateways: ReadonlyMap<string, PeerGateway>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const url = new URL(req.url ?? "/", "http://sim");
  if (req.method === "GET" && url.pathname === "/_sim/gateways") {
    const all = [...gateways].map(([peer, g]) => ({
      peer,
      ...g.gateway,
      ...g.currentMode(),
      counters: g.counters,
    }));
    reply(res, 200, all);
    return;
  }
  const match = /^\/_sim\/gateways\/([^/]+)\/(mode|labels)$/.exec(url.pathname);
  const gateway = match === null ? undefined : gateways.get(decodeURIComponent(match[1] ?? ""));
  if (req.method !== "POST" || match === null) {
    reply(res, 404, { error: `no control path ${req.method ?? ""} ${url.pathname}` });
    return;
  }
  if (gateway === undefined) {
    reply(res, 404, { error: `no simulated gateway for Peer ${match[1] ?? ""}` });
    return;
  }
  let body: unknown;
  try {
    body = await readJson(req);
  } catch {
    reply(res, 400, { error: "the body is not JSON" });
    return;
  }
  if (match[2] === "mode") {
    const parsed = gatewayModeSchema.safeParse(body);
    if (!parsed.success) {
      reply(res, 400, { error: `mode: ${parsed.error.issues[0]?.message ?? "invalid"}` });
      return;
    }
    reply(res, 200, gateway.setMode(parsed.data));
    return;
  }
  const labels = labelsSchema.safeParse(body);
  if (!labels.success) {
    reply(res, 400, { error: "labels: a JSON object of strings" });
    return;
  }
  gateway.setLabels(labels.data);
  reply(res, 200, labels.data);
}
