// A TCP gate between the API server and a webhook, to make the real webhook slow or down without
// touching it: "open" passes every connection through; "slow" delays everything the API server
// sends by slowMs, so each request (on a new or a reused connection) is answered after the API
// server stopped waiting; "down" stops listening (connection refused). Bytes pass untouched: TLS
// is still the webhook's own.
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";

export type GateMode = "open" | "down" | { readonly slowMs: number };

export class WebhookGate {
  private mode: GateMode = "open";
  /** Connections the API server opened through the gate so far (refused ones while down not counted). */
  connections = 0;
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly target: { readonly host: string; readonly port: number },
    private port: number,
  ) {}

  /** A gate on a free loopback port in front of `target` (an https:// or http:// URL). */
  static async open(target: string): Promise<WebhookGate> {
    const url = new URL(target);
    const gate = new WebhookGate({ host: url.hostname, port: Number(url.port) }, 0);
    await gate.listen();
    return gate;
  }

  /** The target URL with the gate's port: what the webhook configuration names. */
  url(target: string): string {
    const url = new URL(target);
    url.port = String(this.port);
    return url.toString();
  }

  /** Switches mode; connections passed through before are cut, so none outlives its mode. */
  async set(mode: GateMode): Promise<void> {
    this.mode = mode;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (mode === "down") await this.stopListening();
    else if (this.server === undefined) await this.listen();
  }

  async close(): Promise<void> {
    await this.set("down");
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  /** Pipes `client` to the webhook; with `delayMs`, every chunk the caller sends arrives that late. */
  private pass(client: Socket, delayMs = 0): void {
    const upstream = connect(this.target.port, this.target.host);
    this.track(upstream);
    if (delayMs === 0) client.pipe(upstream);
    else {
      // Each request (its TLS records) waits; chunks keep their order (equal delays fire in order).
      client.on("data", (chunk: Buffer) => {
        setTimeout(() => {
          if (!upstream.destroyed) upstream.write(chunk);
        }, delayMs);
      });
    }
    upstream.pipe(client);
    upstream.on("close", () => client.destroy());
    client.on("close", () => upstream.destroy());
  }

  private accept(client: Socket): void {
    this.connections += 1;
    this.track(client);
    const mode = this.mode;
    if (mode === "down") client.destroy();
    else this.pass(client, mode === "open" ? 0 : mode.slowMs);
  }

  private async listen(): Promise<void> {
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(this.port, "127.0.0.1", () => {
        server.off("error", reject);
        resolve();
      });
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
  }

  private async stopListening(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
