/**
 * A faulty network in front of one CNF simulator: the Pod IP is this proxy, which forwards to the
 * simulator on its own address, except that it answers a share of requests with 5xx, holds some
 * past the client's timeout (the request still reaches the CNF: its effect may or may not be
 * there, as on a real timeout), resets some connections, and can refuse connections for a while.
 */
import { once } from "node:events";
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Random } from "./random.js";

export interface CnfFaultRates {
  /** Share of requests answered 500/503 without reaching the CNF. */
  readonly serverError: number;
  /** Share of requests forwarded, then answered only after `holdMs` (past the client's timeout). */
  readonly timeout: number;
  /** Share of requests whose connection is destroyed unanswered. */
  readonly reset: number;
}

/** One CNF request as the proxy saw it: when, what, and what it did with it. */
export interface JournalEntry {
  readonly at: string;
  readonly method: string;
  readonly path: string;
  readonly fate: "forwarded" | "held" | "5xx" | "reset";
  status?: number;
}

export interface CnfFaultCounts {
  serverErrors: number;
  timeouts: number;
  resets: number;
  refusals: number;
  forwarded: number;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });

export class CnfProxy {
  readonly counts: CnfFaultCounts = {
    serverErrors: 0,
    timeouts: 0,
    resets: 0,
    refusals: 0,
    forwarded: 0,
  };
  rates: CnfFaultRates = { serverError: 0, timeout: 0, reset: 0 };
  /** The last requests (bounded), for the soak's failure report. */
  readonly journal: JournalEntry[] = [];
  private server: http.Server;
  private readonly sockets = new Set<Socket>();
  private refusing = false;
  private reopenTimer: NodeJS.Timeout | undefined;

  private constructor(
    readonly host: string,
    readonly port: number,
    private readonly upstream: { host: string; port: number },
    private readonly random: Random,
    private readonly holdMs: number,
  ) {
    this.server = this.createServer();
  }

  static async start(options: {
    host: string;
    port: number;
    upstream: { host: string; port: number };
    random: Random;
    holdMs: number;
  }): Promise<CnfProxy> {
    const proxy = new CnfProxy(
      options.host,
      options.port,
      options.upstream,
      options.random,
      options.holdMs,
    );
    await proxy.listen();
    return proxy;
  }

  private createServer(): http.Server {
    const server = http.createServer((req, res) => this.handle(req, res));
    server.on("connection", (socket: Socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    return server;
  }

  private async listen(): Promise<void> {
    this.server.listen({ host: this.host, port: this.port, exclusive: true });
    await once(this.server, "listening");
  }

  /** Closes the listener (new connections are refused) for `ms`, then listens again. */
  async refuseFor(ms: number): Promise<void> {
    if (this.refusing) return;
    this.refusing = true;
    this.counts.refusals += 1;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    await closed;
    this.reopenTimer = setTimeout(() => {
      this.server = this.createServer();
      this.listen().then(
        () => (this.refusing = false),
        () => (this.refusing = false),
      );
    }, ms);
  }

  private note(req: IncomingMessage, fate: JournalEntry["fate"]): JournalEntry {
    const entry: JournalEntry = {
      at: new Date().toISOString(),
      method: req.method ?? "",
      path: req.url ?? "",
      fate,
    };
    this.journal.push(entry);
    if (this.journal.length > 20_000) this.journal.shift();
    return entry;
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const roll = this.random.next();
    const { serverError, timeout, reset } = this.rates;
    if (roll < serverError) {
      this.counts.serverErrors += 1;
      this.note(req, "5xx");
      req.resume();
      const status = this.random.next() < 0.5 ? 500 : 503;
      res
        .writeHead(status, { "content-type": "application/json" })
        .end('{"message":"injected fault"}');
      return;
    }
    if (roll < serverError + reset) {
      this.counts.resets += 1;
      this.note(req, "reset");
      req.socket.destroy();
      return;
    }
    const hold = roll < serverError + reset + timeout;
    if (hold) this.counts.timeouts += 1;
    else this.counts.forwarded += 1;
    this.forward(req, res, hold ? this.holdMs : 0, this.note(req, hold ? "held" : "forwarded"));
  }

  private forward(
    req: IncomingMessage,
    res: ServerResponse,
    holdMs: number,
    entry: JournalEntry,
  ): void {
    const upstream = http.request(
      {
        host: this.upstream.host,
        port: this.upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
        agent,
      },
      (reply) => {
        entry.status = reply.statusCode;
        const chunks: Buffer[] = [];
        reply.on("data", (chunk: Buffer) => chunks.push(chunk));
        reply.on("end", () => {
          const send = (): void => {
            if (res.destroyed) return;
            res.writeHead(reply.statusCode ?? 502, reply.headers).end(Buffer.concat(chunks));
          };
          if (holdMs > 0) setTimeout(send, holdMs).unref();
          else send();
        });
        reply.on("error", () => res.destroy());
      },
    );
    upstream.on("error", () => {
      if (!res.headersSent) res.writeHead(502).end();
    });
    req.pipe(upstream);
  }

  async close(): Promise<void> {
    clearTimeout(this.reopenTimer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
