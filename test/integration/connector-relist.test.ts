// The connector keeps its promise when its watch does not: a 410 Gone, a watch that goes silent
// without an error, and a connector restart all end in a LIST that sends what was missed, and only that.
import { jest } from "@jest/globals";
import { CoreV1Api } from "@kubernetes/client-node";
import { adminKubeConfig, clusterInfo, newNamespace } from "./support/cluster.js";
import {
  kubeConfigVia,
  metricValue,
  startFreezableProxy,
  startSink,
  startTestConnector,
  waitUntil,
  type FreezableProxy,
  type Sink,
  type TestConnector,
} from "./connector-harness.js";

jest.setTimeout(30_000);

const core = () => adminKubeConfig().makeApiClient(CoreV1Api);
const configMap = (namespace: string, name: string) =>
  core().createNamespacedConfigMap({ namespace, body: { metadata: { name } } });

let sink: Sink;
let running: TestConnector | undefined;
let proxy: FreezableProxy | undefined;

beforeEach(async () => {
  sink = await startSink();
});

afterEach(async () => {
  await running?.stop();
  running = undefined;
  await proxy?.close();
  proxy = undefined;
  await sink.close();
});

const config = (namespace: string, watch: Record<string, unknown> = {}) => ({
  watch,
  routes: [
    {
      name: "fn",
      url: sink.url,
      resources: [{ apiVersion: "v1", kind: "ConfigMap", namespaces: [namespace] }],
    },
  ],
});

describe("connector: 410 Gone", () => {
  // Events have no watch cache in kube-apiserver: their watches are served by etcd, so compacting
  // etcd's history makes an old resourceVersion truly gone, as it is after a long disconnect.
  const event = (namespace: string, name: string) =>
    core().createNamespacedEvent({
      namespace,
      body: {
        metadata: { name },
        involvedObject: { kind: "ConfigMap", namespace, name: "x" },
        reason: "ConnectorTest",
        message: name,
        type: "Normal",
      },
    });

  async function compactEtcdHistory(namespace: string): Promise<void> {
    const { metadata } = await core().listNamespacedEvent({ namespace });
    const response = await fetch(`${clusterInfo().etcdUrl}/v3/kv/compaction`, {
      method: "POST",
      body: JSON.stringify({ revision: metadata?.resourceVersion, physical: true }),
    });
    expect(response.status).toBe(200);
  }

  it("re-lists when the watch's resourceVersion was compacted away, without re-sending what the sink already has", async () => {
    const ns = await newNamespace();
    running = await startTestConnector(
      {
        routes: [
          {
            name: "fn",
            url: sink.url,
            resources: [{ apiVersion: "v1", kind: "Event", namespaces: [ns] }],
          },
        ],
      },
      adminKubeConfig(),
    );
    const { connector } = running;
    await connector.whenReady();
    await event(ns, "seen");
    await sink.waitFor("add of seen", (r) => r.name === "seen");
    await compactEtcdHistory(ns);

    const [stream] = connector.streams;
    await waitUntil("the watch to be open", () => stream?.state === "watching");
    stream?.rewindResourceVersion("1");
    expect(stream?.restart("resume")).toBe(true);
    await waitUntil(
      "a restart for 410",
      async () =>
        (await metricValue(connector, "sdewan_connector_watch_restarts_total", {
          route: "fn",
          reason: "expired",
        })) >= 1,
    );
    expect(
      await metricValue(connector, "sdewan_connector_relists_total", { route: "fn" }),
    ).toBeGreaterThanOrEqual(1);

    await event(ns, "after");
    await sink.waitFor("add of after", (r) => r.name === "after");
    expect(sink.received.map((r) => `${r.type} ${r.name}`)).toEqual([
      "dev.knative.apiserver.ref.add seen",
      "dev.knative.apiserver.ref.add after",
    ]);
  });
});

describe("connector: a watch that goes silent", () => {
  it("declares it dead after the inactivity deadline and re-lists, sending the change the stream never carried", async () => {
    const ns = await newNamespace();
    proxy = await startFreezableProxy(clusterInfo().server);
    running = await startTestConnector(
      config(ns, { inactivity: "2s", timeout: "10m" }),
      kubeConfigVia(adminKubeConfig(), proxy.url),
    );
    const { connector } = running;
    await connector.whenReady();
    await waitUntil("the watch to be open", () => connector.streams[0]?.state === "watching");

    proxy.freezeExisting(); // the open watch now carries nothing, and reports no error
    const frozenAt = Date.now();
    await configMap(ns, "missed");
    const healed = await sink.waitFor("add of missed", (r) => r.name === "missed", 10_000);
    expect(Date.now() - frozenAt).toBeGreaterThanOrEqual(1_900); // not before the deadline
    expect(healed.type).toBe("dev.knative.apiserver.ref.add");
    expect(sink.of("missed")).toHaveLength(1);
    expect(
      await metricValue(connector, "sdewan_connector_watch_restarts_total", {
        route: "fn",
        reason: "inactive",
      }),
    ).toBeGreaterThanOrEqual(1);
  });
});

describe("connector: restarts", () => {
  it("a forced watch restart resumes from its resourceVersion: nothing is re-sent, nothing is lost", async () => {
    const ns = await newNamespace();
    await configMap(ns, "old");
    running = await startTestConnector(config(ns), adminKubeConfig());
    const { connector } = running;
    await connector.whenReady();
    await sink.waitFor("add of old", (r) => r.name === "old");
    await waitUntil("the watch to be open", () => connector.streams[0]?.state === "watching");
    expect(connector.streams[0]?.restart("resume")).toBe(true);
    await configMap(ns, "new");
    await sink.waitFor("add of new", (r) => r.name === "new");
    expect(sink.received.map((r) => r.name)).toEqual(["old", "new"]);
  });

  it("a new connector process announces every object again (the initial list heals a restart)", async () => {
    const ns = await newNamespace();
    running = await startTestConnector(config(ns), adminKubeConfig());
    await running.connector.whenReady();
    await configMap(ns, "a");
    await sink.waitFor("add of a", (r) => r.name === "a");
    await running.stop();
    await configMap(ns, "created-while-down");

    running = await startTestConnector(config(ns), adminKubeConfig());
    await running.connector.whenReady();
    const adds = await sink.waitForCount("adds after restart", (r) => r.type.endsWith(".add"), 3);
    expect(adds.map((r) => r.name).sort()).toEqual(["a", "a", "created-while-down"]);
  });
});
