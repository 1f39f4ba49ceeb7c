// The connector against the run's real kube-apiserver: what it sends for objects that exist, appear,
// change and disappear, in Reference and Resource mode, for namespaced and cluster-scoped kinds,
// and what a label selector keeps out.
import { jest } from "@jest/globals";
import { CoreV1Api, PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { adminKubeConfig, clusterInfo, newNamespace } from "./support/cluster.js";
import {
  startSink,
  startTestConnector,
  type Sink,
  type TestConnector,
} from "./connector-harness.js";

jest.setTimeout(30_000);

const core = () => adminKubeConfig().makeApiClient(CoreV1Api);
const configMap = (
  namespace: string,
  name: string,
  labels: Record<string, string> = {},
  data = {},
) => core().createNamespacedConfigMap({ namespace, body: { metadata: { name, labels }, data } });

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

function configMapRoute(namespace: string, extra: Record<string, unknown> = {}) {
  return {
    routes: [
      {
        name: "fn",
        url: sink.url,
        resources: [{ apiVersion: "v1", kind: "ConfigMap", namespaces: [namespace] }],
        ...extra,
      },
    ],
  };
}

describe("connector: the initial list announces every existing object", () => {
  it("sends ref.add for objects created before it started, then reports ready", async () => {
    const ns = await newNamespace();
    await configMap(ns, "before-1");
    await configMap(ns, "before-2");
    running = await startTestConnector(configMapRoute(ns), adminKubeConfig());
    await running.connector.whenReady();

    const adds = await sink.waitForCount(
      "two ref.add",
      (r) => r.type === "dev.knative.apiserver.ref.add",
      2,
    );
    expect(adds.map((r) => r.name).sort()).toEqual(["before-1", "before-2"]);
    const first = sink.of("before-1")[0];
    expect(first?.headers).toMatchObject({
      "content-type": "application/json",
      "ce-specversion": "1.0",
      "ce-source": clusterInfo().server,
      "ce-subject": `/apis/v1/namespaces/${ns}/configmaps/before-1`,
      "ce-kind": "ConfigMap",
      "ce-apiversion": "v1",
      "ce-name": "before-1",
      "ce-namespace": ns,
    });
    expect(first?.headers["ce-id"]).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(first?.body ?? "")).toEqual({
      kind: "ConfigMap",
      namespace: ns,
      name: "before-1",
      apiVersion: "v1",
    });
    const readyz = await fetch(`${running.connector.url()}/readyz`);
    expect(readyz.status).toBe(200);
  });
});

describe("connector: changes after the list", () => {
  it("sends add, update and delete for one object, in that order, each with a fresh id", async () => {
    const ns = await newNamespace();
    running = await startTestConnector(configMapRoute(ns), adminKubeConfig());
    await running.connector.whenReady();

    await configMap(ns, "cm");
    await sink.waitFor("add of cm", (r) => r.name === "cm" && r.type.endsWith(".add"));
    await core().patchNamespacedConfigMap(
      { namespace: ns, name: "cm", body: { data: { k: "v" } } },
      setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
    );
    await sink.waitFor("update of cm", (r) => r.name === "cm" && r.type.endsWith(".update"));
    await core().deleteNamespacedConfigMap({ namespace: ns, name: "cm" });
    await sink.waitFor("delete of cm", (r) => r.name === "cm" && r.type.endsWith(".delete"));

    const seen = sink.of("cm");
    expect(seen.map((r) => r.type)).toEqual([
      "dev.knative.apiserver.ref.add",
      "dev.knative.apiserver.ref.update",
      "dev.knative.apiserver.ref.delete",
    ]);
    expect(new Set(seen.map((r) => r.id)).size).toBe(3);
    expect(seen.map((r) => r.event)).toEqual(
      ["add", "update", "delete"].map((action): unknown =>
        expect.objectContaining({
          type: "object",
          action,
          ref: { apiVersion: "v1", kind: "ConfigMap", namespace: ns, name: "cm" },
        }),
      ),
    );
  });

  it("Resource mode: the data is the object itself, and a delete carries its last state", async () => {
    const ns = await newNamespace();
    running = await startTestConnector(configMapRoute(ns, { mode: "Resource" }), adminKubeConfig());
    await configMap(ns, "listed", {}, { phase: "listed" });
    await running.connector.whenReady();
    const listed = await sink.waitFor("add of listed", (r) => r.name === "listed");
    expect(listed.type).toBe("dev.knative.apiserver.resource.add");
    expect(JSON.parse(listed.body)).toMatchObject({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "listed", namespace: ns },
      data: { phase: "listed" },
    });

    await core().deleteNamespacedConfigMap({ namespace: ns, name: "listed" });
    const deleted = await sink.waitFor(
      "delete of listed",
      (r) => r.name === "listed" && r.type.endsWith(".delete"),
    );
    expect(deleted.type).toBe("dev.knative.apiserver.resource.delete");
    expect(JSON.parse(deleted.body)).toMatchObject({
      kind: "ConfigMap",
      data: { phase: "listed" },
    });
  });

  it("cluster-scoped kinds: an empty namespace extension and Knative's subject with an empty segment", async () => {
    const marker = `connector-${Date.now().toString(36)}`;
    running = await startTestConnector(
      {
        routes: [
          {
            name: "ns-watch",
            url: sink.url,
            resources: [
              {
                apiVersion: "v1",
                kind: "Namespace",
                selector: { matchLabels: { "connector-test": marker } },
              },
            ],
          },
        ],
      },
      adminKubeConfig(),
    );
    await running.connector.whenReady();
    const name = `${marker}-ns`;
    await core().createNamespace({
      body: { metadata: { name, labels: { "connector-test": marker } } },
    });
    const added = await sink.waitFor("add of the namespace", (r) => r.name === name);
    expect(added.headers).toMatchObject({
      "ce-type": "dev.knative.apiserver.ref.add",
      "ce-subject": `/apis/v1/namespaces//namespaces/${name}`,
      "ce-namespace": "",
    });
    expect(JSON.parse(added.body)).toEqual({ kind: "Namespace", name, apiVersion: "v1" });
  });
});

describe("connector: label selectors", () => {
  it("sends only matching objects; an object that starts matching is an add, one that stops is a delete", async () => {
    const ns = await newNamespace();
    running = await startTestConnector(
      {
        routes: [
          {
            name: "fn",
            url: sink.url,
            resources: [
              { apiVersion: "v1", kind: "ConfigMap", namespaces: [ns], selector: "watch-me=yes" },
            ],
          },
        ],
      },
      adminKubeConfig(),
    );
    await running.connector.whenReady();
    await configMap(ns, "ignored", { "watch-me": "no" });
    await configMap(ns, "wanted", { "watch-me": "yes" });
    await sink.waitFor("add of wanted", (r) => r.name === "wanted");

    const relabel = (name: string, value: string) =>
      core().patchNamespacedConfigMap(
        { namespace: ns, name, body: { metadata: { labels: { "watch-me": value } } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    await relabel("ignored", "yes");
    const joined = await sink.waitFor("ignored joining the selector", (r) => r.name === "ignored");
    expect(joined.type).toBe("dev.knative.apiserver.ref.add");
    await relabel("wanted", "no");
    const left = await sink.waitFor(
      "wanted leaving the selector",
      (r) => r.name === "wanted" && r.type.endsWith(".delete"),
    );
    expect(left.type).toBe("dev.knative.apiserver.ref.delete");
    // Everything before "ignored" joined was about "wanted" only.
    expect(sink.received.slice(0, sink.received.indexOf(joined)).map((r) => r.name)).toEqual([
      "wanted",
    ]);
  });
});
