/**
 * Between the connector and the function instances: spreads deliveries over the instances (the
 * other one when an instance is down), and, while faults are on, delays some (so deliveries for
 * different objects overtake each other), sends some to both instances at once (duplicates racing
 * each other), and replays old deliveries later (a stale add/update/delete arriving after newer
 * ones). Tallies every answer by function and status.
 */
import http, {
  type IncomingHttpHeaders,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { once } from "node:events";
import type { Random } from "./random.js";

export interface DeliveryFaultRates {
  readonly delay: number;
  readonly duplicate: number;
  /** Replays per second of a random past delivery. */
  readonly replaysPerSecond: number;
}

interface Recorded {
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

interface Answer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
const PASSED_HEADERS = /^(content-type|ce-.*|x-sdewan-.*)$/i;
const RETURNED_HEADERS = /^(retry-after|x-sdewan-.*|content-type)$/i;

export class DeliveryProxy {
  rates: DeliveryFaultRates = { delay: 0, duplicate: 0, replaysPerSecond: 0 };
  readonly counts = {
    delivered: 0,
    delayed: 0,
    duplicated: 0,
    replayed: 0,
    instanceDown: 0,
    unreachable: 0,
  };
  /** "reconcile-rule 202" -> count, over every answer (primary, duplicate and replay). */
  readonly answers = new Map<string, number>();
  private readonly history: Recorded[] = [];
  private inFlight = 0;
  private replayTimer: NodeJS.Timeout | undefined;
  private server: http.Server | undefined;
  port = 0;

  constructor(
    private readonly instances: () => readonly string[],
    private readonly random: Random,
  ) {}

  async start(): Promise<void> {
    this.server = http.createServer((req, res) => {
      this.inFlight += 1;
      this.handle(req, res)
        .catch(() => {
          if (!res.headersSent) res.writeHead(502).end();
        })
        .finally(() => (this.inFlight -= 1));
    });
    this.server.listen(0, "127.0.0.1");
    await once(this.server, "listening");
    const address = this.server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    this.port = address.port;
    this.replayTimer = setInterval(() => this.maybeReplay(), 100);
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  get busy(): number {
    return this.inFlight;
  }

  private tally(path: string, status: number | string): void {
    const key = `${path.slice(1)} ${status}`;
    this.answers.set(key, (this.answers.get(key) ?? 0) + 1);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) {
      if (PASSED_HEADERS.test(name) && typeof value === "string") headers[name] = value;
    }
    const recorded: Recorded = { path: req.url ?? "/", headers, body: Buffer.concat(chunks) };
    this.history.push(recorded);
    if (this.history.length > 300) this.history.shift();
    if (this.random.chance(this.rates.delay)) {
      this.counts.delayed += 1;
      await new Promise((resolve) => setTimeout(resolve, 50 + this.random.int(750)));
    }
    const targets = this.shuffledInstances();
    if (this.random.chance(this.rates.duplicate) && targets.length > 1) {
      this.counts.duplicated += 1;
      void this.send(targets[1] ?? "", recorded).then(
        (a) => this.tally(recorded.path, a.status),
        () => this.tally(recorded.path, "unreachable"),
      );
    }
    const answer = await this.sendToFirstUp(targets, recorded);
    this.counts.delivered += 1;
    this.tally(recorded.path, answer.status);
    const back: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (RETURNED_HEADERS.test(name) && typeof value === "string") back[name] = value;
    }
    res.writeHead(answer.status, back).end(answer.body);
  }

  private shuffledInstances(): string[] {
    const list = [...this.instances()];
    if (list.length > 1 && this.random.chance(0.5)) list.reverse();
    return list;
  }

  private async sendToFirstUp(targets: readonly string[], recorded: Recorded): Promise<Answer> {
    for (const target of targets) {
      try {
        return await this.send(target, recorded);
      } catch {
        this.counts.instanceDown += 1;
      }
    }
    this.counts.unreachable += 1;
    return { status: 502, headers: {}, body: Buffer.alloc(0) };
  }

  private send(base: string, recorded: Recorded): Promise<Answer> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        `${base}${recorded.path}`,
        { method: "POST", headers: recorded.headers, agent, timeout: 60_000 },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("error", reject);
          res.on("end", () =>
            resolve({
              status: res.statusCode ?? 0,
              headers: res.headers,
              body: Buffer.concat(chunks),
            }),
          );
        },
      );
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", reject);
      req.end(recorded.body);
    });
  }

  private maybeReplay(): void {
    if (!this.random.chance(this.rates.replaysPerSecond / 10)) return;
    const old = this.random.pick(this.history);
    const target = this.random.pick(this.instances());
    if (old === undefined || target === undefined) return;
    this.counts.replayed += 1;
    this.inFlight += 1;
    this.send(target, old)
      .then(
        (a) => this.tally(old.path, a.status),
        () => this.tally(old.path, "unreachable"),
      )
      .finally(() => (this.inFlight -= 1));
  }

  async close(): Promise<void> {
    clearInterval(this.replayTimer);
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) =>
      this.server ? this.server.close(() => resolve()) : resolve(),
    );
  }
}
