// The connector's discovery, LIST pages and watches against a plain-HTTP stand-in for the API
// server on loopback: the requests they become, how a watch ends (closed, inactive, stopped, an
// error) and that every failure is shared/kube's KubeError, classified as shared/kube does.
import type http from "node:http";
import {
  KubeApi,
  type ResourceInfo,
  type WatchEnd,
  type WatchEvent,
} from "../../../connector/kube-api.js";
import { KubeError } from "../../../shared/kube/errors.js";
import { fakeApiServer, json, statusBody as status } from "../kube/fake-api-server.js";

type FakeApi = Awaited<ReturnType<typeof fakeApiServer>>;

const CONFIG_MAPS: ResourceInfo = {
  group: "",
  version: "v1",
  kind: "ConfigMap",
  plural: "configmaps",
  namespaced: true,
};

const failure = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => undefined,
    (error: unknown) => error,
  );

let api: FakeApi;
/** How the stand-in answers; each test sets it. */
let answer: (url: string, res: http.ServerResponse) => void;
beforeEach(async () => {
  answer = (_url, res) => json(res, 404, {});
  api = await fakeApiServer((seen, res) => answer(seen.url, res));
});
afterEach(() => api.close());

const urls = (): string[] => api.seen.map((s) => s.url);
const kubeApi = (requestTimeoutMs = 5_000) => new KubeApi(api.kubeConfig, { requestTimeoutMs });

/** A KubeApi whose server is gone: every connection is refused. */
async function refusedApi(): Promise<KubeApi> {
  const gone = await fakeApiServer(() => undefined);
  await gone.close();
  return new KubeApi(gone.kubeConfig, { requestTimeoutMs: 5_000 });
}

describe("discovery", () => {
  const resources = {
    kind: "APIResourceList",
    resources: [
      { name: "deployments", kind: "Deployment", namespaced: true },
      { name: "deployments/status", kind: "Deployment", namespaced: true },
      { name: "namespaces", kind: "Namespace", namespaced: false },
    ],
  };

  it("finds a kind's plural and scope in its group version, not among subresources", async () => {
    answer = (_url, res) => json(res, 200, resources);
    expect(await kubeApi().discover("apps/v1", "Deployment")).toEqual({
      group: "apps",
      version: "v1",
      kind: "Deployment",
      plural: "deployments",
      namespaced: true,
    });
    expect(await kubeApi().discover("v1", "Namespace")).toEqual({
      group: "",
      version: "v1",
      kind: "Namespace",
      plural: "namespaces",
      namespaced: false,
    });
    expect(urls()).toEqual(["/apis/apps/v1", "/api/v1"]);
  });

  it("a kind the group version does not serve (yet) is notFound", async () => {
    answer = (_url, res) => json(res, 200, resources);
    expect(await failure(kubeApi().discover("apps/v1", "StatefulSet"))).toMatchObject({
      name: "KubeError",
      code: "notFound",
      message: "discover apps/v1: the API serves no kind StatefulSet",
    });
  });

  it("a group version that does not exist is the API's 404", async () => {
    answer = (_url, res) =>
      json(res, 404, status(404, "NotFound", "the server could not find the requested resource"));
    expect(await failure(kubeApi().discover("example.com/v1", "Thing"))).toMatchObject({
      code: "notFound",
      status: 404,
    });
  });
});

describe("LIST pages", () => {
  it("asks for a page with the selector, limit and continue token, and reads its metadata", async () => {
    answer = (_url, res) =>
      json(res, 200, {
        metadata: { resourceVersion: "90", continue: "next" },
        items: [{ metadata: { name: "a", namespace: "ns1", uid: "u1", resourceVersion: "7" } }],
      });
    const page = await kubeApi().listPage(CONFIG_MAPS, "ns1", {
      labelSelector: "app=x",
      limit: 2,
      continue: "this",
    });
    expect(page).toEqual({
      items: [{ metadata: { name: "a", namespace: "ns1", uid: "u1", resourceVersion: "7" } }],
      resourceVersion: "90",
      continueToken: "next",
    });
    expect(urls()).toEqual([
      "/api/v1/namespaces/ns1/configmaps?labelSelector=app%3Dx&limit=2&continue=this",
    ]);
  });

  it("the last page (continue empty) and items: null", async () => {
    answer = (_url, res) =>
      json(res, 200, { metadata: { resourceVersion: "91", continue: "" }, items: null });
    expect(await kubeApi().listPage(CONFIG_MAPS, undefined, {})).toEqual({
      items: [],
      resourceVersion: "91",
      continueToken: undefined,
    });
    expect(urls()).toEqual(["/api/v1/configmaps"]);
  });

  it.each([
    [429, "TooManyRequests", "unavailable"],
    [500, "InternalError", "unavailable"],
    [503, "ServiceUnavailable", "unavailable"],
    [403, "Forbidden", "forbidden"],
    [410, "Expired", "conflict"],
  ])("HTTP %i %s is a KubeError %s with that status", async (code, reason, kind) => {
    answer = (_url, res) => json(res, code, status(code, reason, "no"));
    const error = await failure(kubeApi().listPage(CONFIG_MAPS, "ns1", {}));
    expect(error).toBeInstanceOf(KubeError);
    expect(error).toMatchObject({
      code: kind,
      status: code,
      reason,
      message: `list ConfigMap in ns1: ${code} ${reason}: no`,
    });
  });

  it("an answer that is not a list is unexpected", async () => {
    answer = (_url, res) => json(res, 200, { items: "none" });
    expect(await failure(kubeApi().listPage(CONFIG_MAPS, "ns1", {}))).toMatchObject({
      code: "unexpected",
    });
  });

  it("a server that never answers fails the page at the request timeout", async () => {
    answer = () => {
      // never answers
    };
    expect(await failure(kubeApi(200).listPage(CONFIG_MAPS, "ns1", {}))).toMatchObject({
      code: "unavailable",
      message: expect.stringContaining("list ConfigMap in ns1: no answer within 200 ms") as string,
    });
  });

  it("a refused connection is unavailable, without a status", async () => {
    const refused = await refusedApi();
    expect(await failure(refused.listPage(CONFIG_MAPS, "ns1", {}))).toMatchObject({
      code: "unavailable",
      status: undefined,
      message: expect.stringContaining("ECONNREFUSED") as string,
    });
  });
});

describe("watches", () => {
  const line = (type: string, name: string, rv: string) =>
    `${JSON.stringify({ type, object: { metadata: { name, resourceVersion: rv } } })}\n`;

  /** Opens a watch and collects what it reports. */
  function watch(inactivityMs = 5_000) {
    const events: WatchEvent[] = [];
    let opened = false;
    const handle = kubeApi().watch(
      CONFIG_MAPS,
      "ns1",
      { resourceVersion: "5", allowWatchBookmarks: true, timeoutSeconds: 60 },
      { onEvent: (event) => events.push(event), onOpen: () => (opened = true) },
      inactivityMs,
    );
    return { handle, events, opened: () => opened };
  }

  it("hands each line over in order and ends `closed` when the server ends the stream", async () => {
    answer = (_url, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(line("ADDED", "a", "6"));
      res.write(line("BOOKMARK", "", "7"));
      res.end(line("DELETED", "a", "8"));
    };
    const { handle, events, opened } = watch();
    expect(await handle.done).toEqual({ kind: "closed" });
    expect(opened()).toBe(true);
    expect(events.map((e) => [e.type, e.object.metadata?.resourceVersion])).toEqual([
      ["ADDED", "6"],
      ["BOOKMARK", "7"],
      ["DELETED", "8"],
    ]);
    expect(urls()).toEqual([
      "/api/v1/namespaces/ns1/configmaps?watch=true&resourceVersion=5&allowWatchBookmarks=true&timeoutSeconds=60",
    ]);
  });

  it("a stream silent for the inactivity deadline ends `inactive`", async () => {
    answer = (_url, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write(line("ADDED", "a", "6"));
    };
    const started = Date.now();
    const { handle, events } = watch(300);
    expect(await handle.done).toEqual({ kind: "inactive" });
    expect(events).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
  });

  it("stop() ends it `stopped`", async () => {
    answer = (_url, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.flushHeaders();
    };
    const { handle, opened } = watch();
    for (let i = 0; i < 100 && !opened(); i += 1) await new Promise((r) => setTimeout(r, 10));
    handle.stop();
    expect(await handle.done).toEqual({ kind: "stopped" });
  });

  it("410 Gone as the answer ends it with a KubeError that keeps status 410", async () => {
    answer = (_url, res) => json(res, 410, status(410, "Expired", "too old resource version"));
    const { handle, opened } = watch();
    const end: WatchEnd = await handle.done;
    expect(opened()).toBe(false);
    expect(end).toMatchObject({
      kind: "error",
      error: {
        name: "KubeError",
        code: "conflict",
        status: 410,
        message: "watch ConfigMap in ns1: 410 Expired: too old resource version",
      },
    });
  });

  it("a 503 ends it with an unavailable KubeError", async () => {
    answer = (_url, res) => json(res, 503, status(503, "ServiceUnavailable", "later"));
    expect(await watch().handle.done).toMatchObject({
      kind: "error",
      error: { code: "unavailable", status: 503 },
    });
  });

  it("a line that is not a watch event ends it as unexpected", async () => {
    answer = (_url, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("{not json\n");
    };
    expect(await watch().handle.done).toMatchObject({
      kind: "error",
      error: { code: "unexpected", message: "watch ConfigMap in ns1: unreadable watch line" },
    });
  });

  it("a refused connection ends it with an unavailable KubeError", async () => {
    const refused = await refusedApi();
    const handle = refused.watch(CONFIG_MAPS, "ns1", {}, { onEvent: () => undefined }, 5_000);
    expect(await handle.done).toMatchObject({
      kind: "error",
      error: { code: "unavailable", status: undefined },
    });
  });
});
