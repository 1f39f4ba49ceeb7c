/**
 * One simulated ClusterLink peer gateway: a loopback port that speaks HTTPS with client
 * certificate verification (a client the fabric CA did not sign fails the handshake, as a real
 * gateway's does) and answers `GET /healthz` with 200 and the `ClusterLinkPeerLabels` header
 * (base64 JSON of the peer's labels). Its behaviour is switched at run time, in process or
 * through the control listener (control.ts):
 *
 *   healthy  200 with the labels header
 *   fail     an HTTP error status (default 503), after a completed handshake
 *   hang     the handshake completes, the request is never answered
 *   silent   the TCP connection is accepted and nothing is ever sent (no handshake)
 *   refuse   the connection is reset at once
 *
 * A TCP front accepts every connection and hands it to the TLS server unless the mode keeps
 * it, so one port shows all five behaviours and a test never races a port being re-bound.
 */
import { createServer as createHttpsServer, type Server as HttpsServer } from "node:https";
import {
  createServer as createTcpServer,
  type AddressInfo,
  type Server,
  type Socket,
} from "node:net";
import type { IncomingMessage, ServerResponse } from "node:http";
import * as z from "zod";

export const gatewayModeSchema = z.discriminatedUnion("mode", [
  z.object({ mode: z.literal("healthy") }),
  z.object({ mode: z.literal("fail"), status: z.number().int().min(400).max(599).default(503) }),
  z.object({ mode: z.literal("hang") }),
  z.object({ mode: z.literal("silent") }),
  z.object({ mode: z.literal("refuse") }),
]);

export type GatewayMode = z.output<typeof gatewayModeSchema>;
export type GatewayModeInput = z.input<typeof gatewayModeSchema>;

export interface GatewayCounters {
  /** TCP connections accepted, whatever the mode. */
  connections: number;
  /** Handshakes the gateway refused (no or wrong client certificate). */
  rejectedHandshakes: number;
  /** /healthz requests that reached the HTTP layer. */
  healthChecks: number;
  /** /healthz requests answered 200. */
  healthy: number;
  /** Most connections a silent gateway held open at one time: callers that wait in parallel. */
  maxSilentHeld: number;
}

/** The gateway's own identity and the CA its clients' certificates must chain to. */
export interface GatewayIdentity {
  readonly certPem: string;
  readonly keyPem: string;
  readonly caPem: string;
}

export interface PeerGatewayOptions {
  readonly identity: GatewayIdentity;
  /** Sent in the ClusterLinkPeerLabels header of a healthy answer. */
  readonly labels?: Readonly<Record<string, string>>;
  readonly host?: string;
  readonly port?: number;
  readonly mode?: GatewayModeInput;
}

export const LABELS_HEADER = "ClusterLinkPeerLabels";

export class PeerGateway {
  private mode: GatewayMode;
  private labels: Readonly<Record<string, string>>;
  private readonly held = new Set<Socket>();
  private readonly pending = new Set<ServerResponse>();
  readonly counters: GatewayCounters = {
    connections: 0,
    rejectedHandshakes: 0,
    healthChecks: 0,
    healthy: 0,
    maxSilentHeld: 0,
  };

  private constructor(
    private readonly front: Server,
    private readonly tls: HttpsServer,
    readonly host: string,
    readonly port: number,
    options: PeerGatewayOptions,
  ) {
    this.mode = gatewayModeSchema.parse(options.mode ?? { mode: "healthy" });
    this.labels = options.labels ?? {};
  }

  static async start(options: PeerGatewayOptions): Promise<PeerGateway> {
    const host = options.host ?? "127.0.0.1";
    const { identity } = options;
    const tls = createHttpsServer({
      key: identity.keyPem,
      cert: identity.certPem,
      ca: identity.caPem,
      requestCert: true,
      rejectUnauthorized: true,
    });
    const front = createTcpServer();
    await new Promise<void>((resolve, reject) => {
      front.once("error", reject);
      front.listen(options.port ?? 0, host, () => resolve());
    });
    const port = (front.address() as AddressInfo).port;
    const gateway = new PeerGateway(front, tls, host, port, options);
    tls.on("tlsClientError", () => {
      gateway.counters.rejectedHandshakes += 1;
    });
    tls.on("request", (req, res) => gateway.answer(req, res));
    front.on("connection", (socket) => gateway.accept(socket));
    return gateway;
  }

  /** `host:port`, as a Peer's gateway entry names it. */
  get gateway(): { host: string; port: number } {
    return { host: this.host, port: this.port };
  }

  setMode(input: GatewayModeInput): GatewayMode {
    this.mode = gatewayModeSchema.parse(input);
    if (this.mode.mode !== "silent") this.releaseHeld();
    if (this.mode.mode !== "hang") this.releasePending();
    return this.mode;
  }

  currentMode(): GatewayMode {
    return this.mode;
  }

  setLabels(labels: Readonly<Record<string, string>>): void {
    this.labels = labels;
  }

  private accept(socket: Socket): void {
    this.counters.connections += 1;
    socket.on("error", () => undefined);
    if (this.mode.mode === "refuse") {
      socket.resetAndDestroy();
      return;
    }
    if (this.mode.mode === "silent") {
      this.held.add(socket);
      this.counters.maxSilentHeld = Math.max(this.counters.maxSilentHeld, this.held.size);
      socket.once("close", () => this.held.delete(socket));
      return;
    }
    this.tls.emit("connection", socket);
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    if (req.url !== "/healthz") {
      res.writeHead(404).end();
      return;
    }
    this.counters.healthChecks += 1;
    const mode = this.mode;
    if (mode.mode === "hang") {
      this.pending.add(res);
      res.once("close", () => this.pending.delete(res));
      return;
    }
    if (mode.mode === "fail") {
      res.writeHead(mode.status).end();
      return;
    }
    this.counters.healthy += 1;
    const labels = Buffer.from(JSON.stringify(this.labels)).toString("base64");
    res.writeHead(200, { [LABELS_HEADER]: labels }).end();
  }

  /** Connections kept by a silent gateway are dropped when it stops being silent. */
  private releaseHeld(): void {
    for (const socket of this.held) socket.destroy();
    this.held.clear();
  }

  private releasePending(): void {
    for (const res of this.pending) res.destroy();
    this.pending.clear();
  }

  async close(): Promise<void> {
    this.releaseHeld();
    this.releasePending();
    this.tls.closeAllConnections();
    await new Promise<void>((resolve) => this.front.close(() => resolve()));
  }
}
