// Test harness for the connector's integration tests: a CloudEvent sink on 127.0.0.1 whose answers
// the test scripts, a TCP proxy that can freeze the connections it already carries (a silent watch),
// and a connector started in-process with its JSON log captured.
import { once } from "node:events";
import http from "node:http";
import net from "node:net";
import type { AddressInfo } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";
import { pino } from "pino";
import { parseConfig } from "../../connector/config.js";
import { startConnector, type Connector } from "../../connector/connector.js";
import { parseIntake, type IntakeEvent } from "../../shared/events/index.js";

export interface Received {
  /** Milliseconds since the sink started. */
  readonly at: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** What the functions' own intake reads from this request. */
  readonly event: IntakeEvent;
  readonly type: string;
  readonly id: string;
  /** ce-name, or "" for resync events. */
  readonly name: string;
  readonly answered: number | "hung";
}

export type Answer = { status: number; headers?: Record<string, string> } | "hang";

export interface Sink {
  readonly url: string;
  readonly received: Received[];
  /** Decides the answer to each request; default 202 with an empty body. */
  answer: (request: { name: string; type: string; count: number }) => Answer;
  waitFor(what: string, predicate: (r: Received) => boolean, timeoutMs?: number): Promise<Received>;
  /** Waits until at least `count` requests match. */
  waitForCount(
    what: string,
    predicate: (r: Received) => boolean,
    count: number,
    timeoutMs?: number,
  ): Promise<Received[]>;
  of(name: string): Received[];
  close(): Promise<void>;
}

export async function startSink(): Promise<Sink> {
  const started = Date.now();
  const received: Received[] = [];
  const waiters = new Set<() => void>();
  const hung = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [
          k,
          Array.isArray(v) ? v.join(",") : (v ?? ""),
        ]),
      );
      const [event] = parseIntake({ headers, body });
      const type = headers["ce-type"] ?? "";
      const name = headers["ce-name"] ?? "";
      const count = received.filter((r) => r.name === name && r.type === type).length + 1;
      const answer = sink.answer({ name, type, count });
      received.push({
        at: Date.now() - started,
        headers,
        body,
        event: event as IntakeEvent,
        type,
        id: headers["ce-id"] ?? "",
        name,
        answered: answer === "hang" ? "hung" : answer.status,
      });
      if (answer === "hang") {
        hung.add(res);
      } else {
        res.writeHead(answer.status, answer.headers ?? {}).end();
      }
      for (const wake of waiters) wake();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;

  const waitForCount = (
    what: string,
    predicate: (r: Received) => boolean,
    count: number,
    timeoutMs = 10_000,
  ): Promise<Received[]> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const matching = received.filter(predicate);
        if (matching.length < count) return false;
        resolve(matching);
        return true;
      };
      if (check()) return;
      const timer = setTimeout(() => {
        waiters.delete(wake);
        const seen = received.map((r) => `${r.type} ${r.name} -> ${r.answered}`).join("\n  ");
        reject(
          new Error(`sink: no ${what} within ${timeoutMs} ms; received:\n  ${seen || "(nothing)"}`),
        );
      }, timeoutMs);
      const wake = (): void => {
        if (check()) {
          clearTimeout(timer);
          waiters.delete(wake);
        }
      };
      waiters.add(wake);
    });

  const sink: Sink = {
    url: `http://127.0.0.1:${port}/`,
    received,
    answer: () => ({ status: 202 }),
    waitForCount,
    waitFor: async (what, predicate, timeoutMs) =>
      (await waitForCount(what, predicate, 1, timeoutMs))[0] as Received,
    of: (name) => received.filter((r) => r.name === name),
    close: async () => {
      for (const res of hung) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return sink;
}

/** A loopback TCP proxy; `freezeExisting` stops moving bytes on current connections only. */
export interface FreezableProxy {
  readonly url: string;
  freezeExisting(): void;
  close(): Promise<void>;
}

export async function startFreezableProxy(target: string): Promise<FreezableProxy> {
  const { hostname, port, protocol } = new URL(target);
  const pairs = new Set<[net.Socket, net.Socket]>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), hostname);
    const pair: [net.Socket, net.Socket] = [client, upstream];
    pairs.add(pair);
    client.pipe(upstream);
    upstream.pipe(client);
    const drop = (): void => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address() as AddressInfo;
  return {
    url: `${protocol}//127.0.0.1:${address.port}`,
    freezeExisting: () => {
      // Both directions stop, the sockets stay open: to the client this is a silent, live stream.
      for (const [client, upstream] of pairs) {
        client.unpipe(upstream);
        upstream.unpipe(client);
        client.pause();
        upstream.pause();
      }
      pairs.clear();
    },
    close: async () => {
      server.close();
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      await new Promise<void>((resolve) => setImmediate(resolve));
    },
  };
}

/** The same credentials, but talking to `server` (e.g. through the proxy). */
export function kubeConfigVia(base: KubeConfig, server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: base.clusters.map((c) => ({ ...c, server })),
    users: base.users,
    contexts: base.contexts,
    currentContext: base.currentContext,
  });
  return kc;
}

export interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

export interface TestConnector {
  readonly connector: Connector;
  readonly logs: LogLine[];
  stop(): Promise<void>;
}

/** Starts a connector on 127.0.0.1:<free port> with fast test timings; `raw` is its YAML config as an object. */
export async function startTestConnector(
  raw: Record<string, unknown>,
  kubeConfig: KubeConfig,
): Promise<TestConnector> {
  const logs: LogLine[] = [];
  const logger = pino(
    { level: "debug" },
    { write: (line: string) => void logs.push(JSON.parse(line) as LogLine) },
  );
  const config = parseConfig({
    http: { host: "127.0.0.1", port: 0 },
    delivery: { backoff: { initial: "50ms", max: "400ms" }, timeout: "5s" },
    shutdownGrace: "2s",
    ...raw,
  });
  const connector = await startConnector(config, { kubeConfig, logger, processMetrics: false });
  return { connector, logs, stop: async () => void (await connector.stop()) };
}

/** Current value of a counter or gauge with exactly these labels (0 when never set). */
export async function metricValue(
  connector: Connector,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = await connector.metrics.registry.getSingleMetric(name)?.get();
  const match = metric?.values.find((v) =>
    Object.entries(labels).every(([k, value]) => String(v.labels[k]) === value),
  );
  return match?.value ?? 0;
}

export { waitUntil } from "./support/wait.js";
