// shared/kube's own HTTP transport against a plain-HTTP stand-in for the API server on loopback:
// the request each client call becomes, one kept-alive connection for many calls, watches as
// streams on sockets of their own, a proxy-url cluster's agent, and how every failure (an answer,
// a refused connection, a silent server) becomes a KubeError.
import { once } from "node:events";
import http from "node:http";
import { EGRESS_GROUPS, NAMESPACES, PODS, ruleResource } from "../../../shared/kube/resources.js";
import { createKubeClient } from "../../../shared/kube/client.js";
import { KubeError, toKubeError } from "../../../shared/kube/errors.js";
import {
  collectionPath,
  listQueryString,
  objectPath,
  watchQueryString,
} from "../../../shared/kube/paths.js";
import {
  MAX_SOCKETS,
  createTransport,
  type KubeConfigSource,
} from "../../../shared/kube/transport.js";
import { fakeApiServer, json, statusBody } from "./fake-api-server.js";

const POLICIES = ruleResource({ kind: "Mwan3Policy", plural: "mwan3policies" });

describe("request paths", () => {
  it.each([
    [
      "a rule in its namespace",
      objectPath(POLICIES, { namespace: "ns1", name: "p1" }),
      "/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/ns1/mwan3policies/p1",
    ],
    [
      "a rule's status",
      objectPath(POLICIES, { namespace: "ns1", name: "p1" }, "status"),
      "/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/ns1/mwan3policies/p1/status",
    ],
    [
      "a Pod (core group)",
      objectPath(PODS, { namespace: "ns1", name: "cnf-0" }),
      "/api/v1/namespaces/ns1/pods/cnf-0",
    ],
    [
      "a Namespace (cluster-scoped core)",
      objectPath(NAMESPACES, { name: "ns1" }),
      "/api/v1/namespaces/ns1",
    ],
    [
      "an EgressGroup (cluster-scoped custom)",
      objectPath(EGRESS_GROUPS, { name: "web" }),
      "/apis/sdewan.akraino.org/v1alpha1/egressgroups/web",
    ],
    ["Pods of one namespace", collectionPath(PODS, "ns1"), "/api/v1/namespaces/ns1/pods"],
    ["Pods of every namespace", collectionPath(PODS, undefined), "/api/v1/pods"],
    [
      "a name that needs escaping",
      objectPath(NAMESPACES, { name: "a b/c" }),
      "/api/v1/namespaces/a%20b%2Fc",
    ],
  ])("%s: %s", (_title, path, expected) => {
    expect(path).toBe(expected);
  });

  it("a namespaced object without its namespace is refused, not read cluster-wide", () => {
    expect(() => objectPath(PODS, { name: "cnf-0" })).toThrow(
      expect.objectContaining({ code: "invalid" }) as Error,
    );
  });

  it.each([
    [{}, ""],
    [{ labelSelector: "" }, ""],
    [{ labelSelector: "sdewanPurpose=base" }, "?labelSelector=sdewanPurpose%3Dbase"],
    [
      { labelSelector: "tier in (a,b),!legacy", fieldSelector: "status.phase=Running" },
      "?labelSelector=tier+in+%28a%2Cb%29%2C%21legacy&fieldSelector=status.phase%3DRunning",
    ],
    [
      { labelSelector: "sdewanPurpose", resourceVersion: "0" },
      "?labelSelector=sdewanPurpose&resourceVersion=0",
    ],
    [{ limit: 500 }, "?limit=500"],
    [{ limit: 500, continue: "" }, "?limit=500"],
    [
      { labelSelector: "app=x", limit: 2, continue: "eyJ2Ijo=" },
      "?labelSelector=app%3Dx&limit=2&continue=eyJ2Ijo%3D",
    ],
  ])("list query %j -> %s", (query, expected) => {
    expect(listQueryString(query)).toBe(expected);
  });

  it.each([
    [{}, "?watch=true"],
    [
      { resourceVersion: "41", allowWatchBookmarks: true, timeoutSeconds: 300 },
      "?watch=true&resourceVersion=41&allowWatchBookmarks=true&timeoutSeconds=300",
    ],
    [
      { labelSelector: "tier in (a,b)", resourceVersion: "" },
      "?watch=true&labelSelector=tier+in+%28a%2Cb%29",
    ],
  ])("watch query %j -> %s", (query, expected) => {
    expect(watchQueryString(query)).toBe(expected);
  });
});

const policy = (name: string) => ({
  apiVersion: "batch.sdewan.akraino.org/v1alpha1",
  kind: "Mwan3Policy",
  metadata: { name, namespace: "ns1", resourceVersion: "7" },
});

describe("each client call is one plain JSON request", () => {
  let api: Awaited<ReturnType<typeof fakeApiServer>>;
  beforeEach(async () => {
    api = await fakeApiServer((seen, res) =>
      seen.method === "GET" && seen.url.startsWith("/api/v1/namespaces/ns1/pods?")
        ? json(res, 200, { items: [{ metadata: { name: "cnf-0", namespace: "ns1" } }] })
        : json(res, 200, policy("p1")),
    );
  });
  afterEach(() => api.close());

  it("a status patch is a merge patch of /status with the token, and its answer is parsed", async () => {
    const kube = createKubeClient(api.kubeConfig);
    const patched = await kube.patchStatus(
      POLICIES,
      { namespace: "ns1", name: "p1" },
      { inSync: true },
      { resourceVersion: "7" },
    );
    expect(patched.metadata.resourceVersion).toBe("7");
    expect(api.seen).toEqual([
      {
        method: "PATCH",
        url: "/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/ns1/mwan3policies/p1/status",
        contentType: "application/merge-patch+json",
        authorization: "Bearer token-1",
        body: JSON.stringify({ metadata: { resourceVersion: "7" }, status: { inSync: true } }),
      },
    ]);
  });

  it("a Pod list sends its label selector URL-encoded and fills in apiVersion and kind", async () => {
    const kube = createKubeClient(api.kubeConfig);
    const pods = await kube.list(PODS, {
      namespace: "ns1",
      labelSelector: { sdewanPurpose: "base" },
    });
    expect(pods.map((p) => [p.apiVersion, p.kind, p.metadata.name])).toEqual([
      ["v1", "Pod", "cnf-0"],
    ]);
    expect(api.seen.map((s) => s.url)).toEqual([
      "/api/v1/namespaces/ns1/pods?labelSelector=sdewanPurpose%3Dbase",
    ]);
  });

  it("create POSTs the object as JSON to its collection", async () => {
    await createKubeClient(api.kubeConfig).create(POLICIES, {
      metadata: { name: "p1", namespace: "ns1" },
    });
    expect(api.seen[0]).toMatchObject({
      method: "POST",
      url: "/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/ns1/mwan3policies",
      contentType: "application/json",
    });
    expect(JSON.parse(api.seen[0]?.body ?? "")).toEqual({
      apiVersion: "batch.sdewan.akraino.org/v1alpha1",
      kind: "Mwan3Policy",
      metadata: { name: "p1", namespace: "ns1" },
    });
  });

  it("fifty sequential calls share one kept-alive connection", async () => {
    const kube = createKubeClient(api.kubeConfig);
    for (let i = 0; i < 50; i += 1) await kube.get(POLICIES, { namespace: "ns1", name: "p1" });
    expect(api.seen).toHaveLength(50);
    expect(api.connections()).toBe(1);
  });
});

describe("failures become KubeErrors with the code callers branch on", () => {
  it.each([
    [404, "NotFound", 'mwan3policies "p1" not found', "notFound"],
    [409, "Conflict", "the object has been modified", "conflict"],
    [422, "Invalid", "spec.members: Required value", "invalid"],
    [403, "Forbidden", 'User "alice" cannot patch resource "mwan3policies"', "forbidden"],
    [500, "InternalError", "etcdserver: request timed out", "unavailable"],
  ])(
    "HTTP %i %s -> %s... as %s, the message without a response dump",
    async (code, reason, message, kind) => {
      const api = await fakeApiServer((_seen, res) =>
        json(res, code, statusBody(code, reason, message)),
      );
      try {
        const patch = createKubeClient(api.kubeConfig).mergePatch(
          POLICIES,
          { namespace: "ns1", name: "p1" },
          { spec: {} },
        );
        const error = await patch.then(
          () => undefined,
          (e: unknown) => e,
        );
        expect(error).toBeInstanceOf(KubeError);
        expect(error).toMatchObject({
          code: kind,
          status: code,
          reason,
          message: `patch Mwan3Policy ns1/p1: ${code} ${reason}: ${message}`,
          cause: undefined,
        });
      } finally {
        await api.close();
      }
    },
  );

  it("a get of a missing object is undefined, a delete of one is false", async () => {
    const api = await fakeApiServer((_seen, res) =>
      json(res, 404, statusBody(404, "NotFound", "gone")),
    );
    try {
      const kube = createKubeClient(api.kubeConfig);
      expect(await kube.get(POLICIES, { namespace: "ns1", name: "p1" })).toBeUndefined();
      expect(await kube.delete(POLICIES, { namespace: "ns1", name: "p1" })).toBe(false);
    } finally {
      await api.close();
    }
  });

  it("a refused connection is unavailable and names the address", async () => {
    const api = await fakeApiServer((_seen, res) => json(res, 200, {}));
    const kubeConfig = api.kubeConfig;
    await api.close();
    const server = kubeConfig.getCurrentCluster()?.server ?? "";
    const error = await createKubeClient(kubeConfig)
      .get(POLICIES, { namespace: "ns1", name: "p1" })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    expect(error).toMatchObject({ code: "unavailable", status: undefined });
    expect((error as Error).message).toBe(
      `get Mwan3Policy ns1/p1: connect ECONNREFUSED ${server.replace("http://", "")}`,
    );
  });

  it("a server that never answers fails the request at the timeout", async () => {
    const api = await fakeApiServer(() => {
      // never answers
    });
    try {
      const kube = createKubeClient(api.kubeConfig, { requestTimeoutMs: 200 });
      const started = Date.now();
      const error = await kube.get(POLICIES, { namespace: "ns1", name: "p1" }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        code: "unavailable",
        message: expect.stringContaining(
          "get Mwan3Policy ns1/p1: no answer within 200 ms",
        ) as string,
      });
      expect(Date.now() - started).toBeLessThan(5_000);
    } finally {
      await api.close();
    }
  });
});

describe("a watch is a streamed GET on sockets of its own", () => {
  const CONFIG_MAPS = { group: "", version: "v1", plural: "configmaps", namespaced: true };
  /** Open watch answers, ended by the test. */
  let streams: http.ServerResponse[];
  let api: Awaited<ReturnType<typeof fakeApiServer>>;
  beforeEach(async () => {
    streams = [];
    api = await fakeApiServer((seen, res) => {
      if (!seen.url.includes("watch=true")) return json(res, 200, policy("p1"));
      if (seen.url.includes("resourceVersion=1&")) {
        return json(res, 410, statusBody(410, "Expired", "too old resource version: 1 (40)"));
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.flushHeaders();
      streams.push(res);
    });
  });
  afterEach(() => api.close());

  const line = (type: string, name: string) =>
    `${JSON.stringify({ type, object: { metadata: { name, resourceVersion: "42" } } })}\n`;

  it("sends watch=true with the query and the token, and hands the body over as it arrives", async () => {
    const abort = new AbortController();
    const body = await createTransport(api.kubeConfig).watch(
      CONFIG_MAPS,
      "ns1",
      { resourceVersion: "41", allowWatchBookmarks: true, timeoutSeconds: 60 },
      { signal: abort.signal },
    );
    expect(api.seen).toEqual([
      expect.objectContaining({
        method: "GET",
        url: "/api/v1/namespaces/ns1/configmaps?watch=true&resourceVersion=41&allowWatchBookmarks=true&timeoutSeconds=60",
        authorization: "Bearer token-1",
      }),
    ]);
    const text: string[] = [];
    body.on("data", (chunk: Buffer) => text.push(chunk.toString("utf8")));
    streams[0]?.write(line("ADDED", "a"));
    await waitFor(() => text.join("").includes('"a"'));
    streams[0]?.end(line("DELETED", "a"));
    await once(body, "end");
    expect(text.join("")).toBe(line("ADDED", "a") + line("DELETED", "a"));
  });

  it(`${MAX_SOCKETS + 8} open watches leave every socket of the request pool free`, async () => {
    const abort = new AbortController();
    const transport = createTransport(api.kubeConfig);
    const watches = Array.from({ length: MAX_SOCKETS + 8 }, () =>
      transport.watch(CONFIG_MAPS, undefined, {}, { signal: abort.signal }),
    );
    await Promise.all(watches);
    expect(streams).toHaveLength(MAX_SOCKETS + 8);
    const kube = createKubeClient(api.kubeConfig, { requestTimeoutMs: 2_000 });
    const policies = Array.from({ length: 4 }, () =>
      kube.get(POLICIES, { namespace: "ns1", name: "p1" }),
    );
    expect((await Promise.all(policies)).map((p) => p?.metadata.name)).toEqual([
      "p1",
      "p1",
      "p1",
      "p1",
    ]);
    abort.abort();
  });

  it("an answer that is not 2xx is read and thrown; a 410 keeps its status as a KubeError", async () => {
    const error = await createTransport(api.kubeConfig)
      .watch(
        CONFIG_MAPS,
        "ns1",
        { resourceVersion: "1", timeoutSeconds: 5 },
        {
          signal: new AbortController().signal,
        },
      )
      .then(
        () => undefined,
        (e: unknown) => toKubeError("watch ConfigMap in ns1", e),
      );
    expect(error).toMatchObject({
      code: "conflict",
      status: 410,
      reason: "Expired",
      message: "watch ConfigMap in ns1: 410 Expired: too old resource version: 1 (40)",
    });
  });

  it("aborting the signal ends the stream and closes its socket", async () => {
    const abort = new AbortController();
    const body = await createTransport(api.kubeConfig).watch(
      CONFIG_MAPS,
      "ns1",
      {},
      {
        signal: abort.signal,
      },
    );
    const closed = once(streams[0] as http.ServerResponse, "close");
    const failed = once(body, "error").then(([error]) => error as Error);
    abort.abort();
    // Once the answer has begun, node reports the cut stream as "aborted" (ECONNRESET).
    expect(await failed).toMatchObject({ message: "aborted", code: "ECONNRESET" });
    await closed;
  });
});

describe("a cluster behind a proxy-url", () => {
  it("sends every request through the agent its kubeconfig source supplies", async () => {
    const api = await fakeApiServer((_seen, res) => json(res, 200, policy("p1")));
    try {
      let connections = 0;
      // Stands in for client-node's proxy agent: it connects, so it counts.
      const agent = new (class extends http.Agent {
        override createConnection(...args: Parameters<http.Agent["createConnection"]>) {
          connections += 1;
          return super.createConnection(...args);
        }
      })();
      const server = api.kubeConfig.getCurrentCluster()?.server ?? "";
      const kubeConfig: KubeConfigSource = {
        getCurrentCluster: () => ({ server, proxyUrl: "http://127.0.0.1:3128" }),
        applyToHTTPSOptions: (options) => {
          options.agent = agent;
          return Promise.resolve();
        },
      };
      const policy1 = await createKubeClient(kubeConfig).get(POLICIES, {
        namespace: "ns1",
        name: "p1",
      });
      expect(policy1?.metadata.name).toBe("p1");
      expect(connections).toBe(1);
      agent.destroy();
    } finally {
      await api.close();
    }
  });

  it("is refused when the source supplies no agent, rather than bypassing the proxy", async () => {
    const kubeConfig: KubeConfigSource = {
      getCurrentCluster: () => ({
        server: "http://127.0.0.1:1",
        proxyUrl: "http://127.0.0.1:3128",
      }),
      applyToHTTPSOptions: () => Promise.resolve(),
    };
    await expect(
      createKubeClient(kubeConfig).get(POLICIES, { namespace: "ns1", name: "p1" }),
    ).rejects.toMatchObject({
      code: "unavailable",
      message: expect.stringContaining("supplies no proxy agent") as string,
    });
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  expect(condition()).toBe(true);
}
