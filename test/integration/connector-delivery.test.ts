// Delivery behaviour against a real API server and a sink on 127.0.0.1: redelivery after 503 with
// Retry-After, dead letter of a rejected event, resync on the period, and the CLI's graceful stop.
import { jest } from "@jest/globals";
import { spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { CoreV1Api } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { RESYNC_EVENT_TYPE } from "../../shared/events/types.js";
import { adminKubeConfig, clusterInfo, newNamespace } from "./support/cluster.js";
import {
  metricValue,
  startSink,
  startTestConnector,
  waitUntil,
  type LogLine,
  type Sink,
  type TestConnector,
} from "./connector-harness.js";

jest.setTimeout(30_000);

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const core = () => adminKubeConfig().makeApiClient(CoreV1Api);
const configMap = (namespace: string, name: string) =>
  core().createNamespacedConfigMap({ namespace, body: { metadata: { name } } });

let sink: Sink;
let running: TestConnector | undefined;

beforeEach(async () => {
  sink = await startSink();
});

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await sink.close();
});

const route = (namespace: string) => ({
  name: "fn",
  url: sink.url,
  resources: [{ apiVersion: "v1", kind: "ConfigMap", namespaces: [namespace] }],
});

describe("connector: retries", () => {
  it("redelivers the same event after a 503, no earlier than the sink's Retry-After", async () => {
    const ns = await newNamespace();
    sink.answer = ({ name, count }) =>
      name === "flaky" && count === 1
        ? { status: 503, headers: { "retry-after": "1" } }
        : { status: 202 };
    running = await startTestConnector({ routes: [route(ns)] }, adminKubeConfig());
    await running.connector.whenReady();
    await configMap(ns, "flaky");

    const [first, second] = await sink.waitForCount("two attempts", (r) => r.name === "flaky", 2);
    expect([first?.answered, second?.answered]).toEqual([503, 202]);
    expect(second?.id).toBe(first?.id);
    expect((second?.at ?? 0) - (first?.at ?? 0)).toBeGreaterThanOrEqual(950);
    const { connector } = running;
    await waitUntil(
      "the sent counter",
      async () =>
        (await metricValue(connector, "sdewan_connector_events_sent_total", { route: "fn" })) === 1,
    );
    expect(
      await metricValue(connector, "sdewan_connector_events_retried_total", {
        route: "fn",
        reason: "503",
      }),
    ).toBe(1);
  });

  it("dead-letters an event the function rejects (422): one attempt, a JSON log line and a metric", async () => {
    const ns = await newNamespace();
    sink.answer = ({ name }) => (name === "poison" ? { status: 422 } : { status: 202 });
    running = await startTestConnector({ routes: [route(ns)] }, adminKubeConfig());
    await running.connector.whenReady();
    await configMap(ns, "poison");
    await sink.waitFor("the attempt", (r) => r.name === "poison");
    const { connector, logs } = running;
    await waitUntil(
      "the dead-letter metric",
      async () =>
        (await metricValue(connector, "sdewan_connector_events_dead_lettered_total", {
          route: "fn",
          reason: "rejected",
        })) === 1,
    );
    const line = logs.find((l) => l.deadLetter === true);
    expect(line).toMatchObject({
      msg: "event dead-lettered",
      route: "fn",
      reason: "rejected",
      attempts: 1,
      lastStatus: 422,
      url: sink.url,
      object: { apiVersion: "v1", kind: "ConfigMap", namespace: ns, name: "poison" },
    });
    expect(sink.of("poison")).toHaveLength(1);
  });
});

describe("connector: resync", () => {
  it("emits the resync event with empty data on the route's period", async () => {
    running = await startTestConnector(
      { routes: [{ name: "tick", url: sink.url, resync: "300ms" }] },
      adminKubeConfig(),
    );
    const ticks = await sink.waitForCount("three resyncs", (r) => r.type === RESYNC_EVENT_TYPE, 3);
    expect(ticks.map((t) => t.body)).toEqual(["{}", "{}", "{}"]);
    expect(ticks.map((t) => t.event)).toEqual(
      ticks.map((): unknown => expect.objectContaining({ type: "resync", scope: {} })),
    );
    expect(new Set(ticks.map((t) => t.id)).size).toBe(3);
    const gaps = ticks.slice(1).map((t, i) => t.at - (ticks[i]?.at ?? 0));
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(250);
  });
});

describe("connector CLI: graceful shutdown", () => {
  it("on SIGTERM stops watching, waits for the in-flight delivery up to the grace period, and reports what it hands back", async () => {
    const ns = await newNamespace();
    await configMap(ns, "stuck");
    await configMap(ns, "queued");
    sink.answer = () => "hang";
    const dir = mkdtempSync(path.join(tmpdir(), "connector-cli-"));
    const configPath = path.join(dir, "config.yaml");
    writeFileSync(
      configPath,
      stringify({
        http: { host: "127.0.0.1", port: 0 },
        delivery: { concurrency: 1 },
        shutdownGrace: "1s",
        routes: [route(ns)],
      }),
    );
    const child = spawn(
      process.execPath,
      ["--import", "tsx", "connector/main.ts", "--config", configPath],
      {
        cwd: repoRoot,
        env: { ...process.env, KUBECONFIG: clusterInfo().kubeconfigPath, LOG_LEVEL: "info" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    const lines: LogLine[] = [];
    let stderr = "";
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on("data", (chunk: Buffer) => {
      for (const text of chunk.toString().split("\n").filter(Boolean))
        lines.push(JSON.parse(text) as LogLine);
    });
    const exited = once(child, "exit");
    try {
      await sink.waitFor("the first delivery", () => true, 15_000);
      const signalledAt = Date.now();
      child.kill("SIGTERM");
      const [code] = (await exited) as [number | null];
      const took = Date.now() - signalledAt;
      expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
      expect(took).toBeGreaterThanOrEqual(900);
      expect(took).toBeLessThan(5_000);
      const stopped = lines.find((l) => l.msg === "connector stopped");
      expect(stopped).toMatchObject({
        finished: 0,
        handedBack: 2,
        handedBackByRoute: { fn: { add: 2 } },
      });
      expect(sink.received).toHaveLength(1);
    } finally {
      child.kill("SIGKILL");
    }
  });
});
