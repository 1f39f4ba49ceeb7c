import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse as parseYaml } from "yaml";
import {
  ConfigError,
  loadConfig,
  parseConfig,
  parseDuration,
  routeEnvName,
} from "../../../connector/config.js";
import { FUNCTION_CATALOG } from "../../../functions/catalog.js";
import { RULE_KIND_NAMES } from "../../../shared/kinds/index.js";
import { DEFAULT_PORT } from "../../../shared/runtime/select.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const minimal = {
  routes: [
    { name: "fn", url: "http://127.0.0.1:9/", resources: [{ apiVersion: "v1", kind: "Pod" }] },
  ],
};

describe("parseDuration", () => {
  it.each<[string | number, number | undefined]>([
    ["250ms", 250],
    ["30s", 30_000],
    ["5m", 300_000],
    ["1h30m", 5_400_000],
    ["1.5s", 1_500],
    [20, 20_000],
    ["", undefined],
    ["5", undefined],
    ["5 minutes", undefined],
    [-1, undefined],
  ])("%j -> %j ms", (input, ms) => {
    expect(parseDuration(input)).toBe(ms);
  });
});

describe("a LabelSelector object in a route", () => {
  const withSelector = (selector: unknown) =>
    parseConfig({
      ...minimal,
      routes: [{ ...minimal.routes[0], resources: [{ apiVersion: "v1", kind: "Pod", selector }] }],
    });

  it("becomes the labelSelector query string, every operator included", () => {
    const selector = {
      matchLabels: { app: "cnf" },
      matchExpressions: [
        { key: "sdewanPurpose", operator: "Exists" },
        { key: "legacy", operator: "DoesNotExist" },
        { key: "tier", operator: "In", values: ["a", "b"] },
        { key: "zone", operator: "NotIn", values: ["x"] },
      ],
    };
    expect(withSelector(selector).routes[0]?.resources[0]?.selector).toBe(
      "app=cnf,!legacy,sdewanPurpose,tier in (a,b),zone notin (x)",
    );
  });

  it("an In without values is refused at load, naming the field, not sent as 'tier in ()'", () => {
    const selector = { matchExpressions: [{ key: "tier", operator: "In", values: [] }] };
    expect(() => withSelector(selector)).toThrow(/selector\.matchExpressions\[0\]\.values/);
  });
});

describe("parseConfig", () => {
  it("fills defaults: Reference mode, no resync, bounded concurrency", () => {
    const config = parseConfig(minimal);
    expect(config.routes[0]).toEqual({
      name: "fn",
      url: "http://127.0.0.1:9/",
      mode: "Reference",
      resources: [{ apiVersion: "v1", kind: "Pod" }],
    });
    expect(config.delivery).toMatchObject({ concurrency: 16, timeout: 30_000, maxAttempts: 12 });
    expect(config.delivery.backoff).toEqual({ initial: 200, max: 30_000 });
    expect(config.watch).toMatchObject({ timeout: 300_000, inactivity: 180_000, pageSize: 500 });
    expect(config.http).toEqual({ host: "0.0.0.0", port: 8080 });
  });

  it("accepts a selector as a string or as a LabelSelector object", () => {
    const config = parseConfig({
      routes: [
        {
          name: "fn",
          url: "http://127.0.0.1:9/",
          resources: [
            { apiVersion: "v1", kind: "Pod", selector: "app=x" },
            { apiVersion: "apps/v1", kind: "Deployment", selector: { matchLabels: { app: "y" } } },
          ],
        },
      ],
    });
    expect(config.routes[0]?.resources.map((r) => r.selector)).toEqual(["app=x", "app=y"]);
  });

  it("lets the environment override the port, concurrency and a route's URL and resync", () => {
    const config = parseConfig(minimal, {
      CONNECTOR_HTTP_PORT: "0",
      CONNECTOR_CONCURRENCY: "3",
      [routeEnvName("fn", "URL")]: "http://127.0.0.1:7000/",
      CONNECTOR_ROUTE_FN_RESYNC: "90s",
    });
    expect(config.http.port).toBe(0);
    expect(config.delivery.concurrency).toBe(3);
    expect(config.routes[0]).toMatchObject({ url: "http://127.0.0.1:7000/", resync: 90_000 });
  });

  it("names route env vars after the route", () => {
    expect(routeEnvName("reconcile-rule", "URL")).toBe("CONNECTOR_ROUTE_RECONCILE_RULE_URL");
  });

  it.each<[string, unknown, RegExp]>([
    ["no routes", { routes: [] }, /routes/],
    ["an unknown key", { ...minimal, retries: 3 }, /retries/],
    [
      "a bad duration",
      { ...minimal, shutdownGrace: "soon" },
      /shutdownGrace: "soon" is not a duration/,
    ],
    ["a non-http URL", { routes: [{ ...minimal.routes[0], url: "ftp://x/" }] }, /routes\.0\.url/],
    ["a bad mode", { routes: [{ ...minimal.routes[0], mode: "Ref" }] }, /routes\.0\.mode/],
    [
      "a bad apiVersion",
      { routes: [{ ...minimal.routes[0], resources: [{ apiVersion: "apps", kind: "Pod" }] }] },
      /apiVersion/,
    ],
    [
      "a route with nothing to do",
      { routes: [{ name: "fn", url: "http://127.0.0.1:9/" }] },
      /resources to watch, a resync period/,
    ],
    ["duplicate route names", { routes: [minimal.routes[0], minimal.routes[0]] }, /unique/],
  ])("rejects %s with a message that points at it", (_title, raw, message) => {
    expect(() => parseConfig(raw)).toThrow(ConfigError);
    expect(() => parseConfig(raw)).toThrow(message);
  });
});

describe("the example config in manifests/connector", () => {
  it("is valid and routes every rule kind of the registry, CNF workloads and Egress inputs", () => {
    const config = loadConfig(path.join(repoRoot, "manifests/connector/config.yaml"));
    const byRoute = Object.fromEntries(
      config.routes.map((r) => [r.name, r.resources.map((x) => x.kind)]),
    );
    expect(byRoute["reconcile-rule"]).toEqual([...RULE_KIND_NAMES]);
    expect(byRoute["on-deployment-ready"]).toEqual(["Deployment", "Pod"]);
    expect(byRoute["egress-group-sync"]).toEqual(["Egress", "Pod", "Namespace"]);
    expect(byRoute["clusterlink-export"]).toEqual(["Export", "Service"]);
    expect(byRoute["clusterlink-import"]).toEqual(["Import", "Service", "EndpointSlice", "Peer"]);
    expect(byRoute["clusterlink-peer-health"]).toEqual(["Peer"]);
    // Resync goes to the functions that take it; reconcile-rule answers a resync with 400.
    const resyncing = config.routes.filter((r) => r.resync !== undefined).map((r) => r.name);
    expect(resyncing).toEqual([
      "on-deployment-ready",
      "egress-group-sync",
      "network-policy-sync",
      "clusterlink-export",
      "clusterlink-import",
      "clusterlink-peer-health",
    ]);
  });

  it("names only kinds and versions the committed CRDs serve", () => {
    const served = new Set<string>();
    const dir = path.join(repoRoot, "manifests/crds");
    for (const file of readdirSync(dir).filter((f) => f.endsWith(".yaml"))) {
      const crd = parseYaml(readFileSync(path.join(dir, file), "utf8")) as {
        spec: { group: string; names: { kind: string }; versions: Array<{ name: string }> };
      };
      for (const v of crd.spec.versions)
        served.add(`${crd.spec.group}/${v.name} ${crd.spec.names.kind}`);
    }
    const config = loadConfig(path.join(repoRoot, "manifests/connector/config.yaml"));
    const custom = config.routes
      .flatMap((r) => r.resources)
      .filter((r) => r.apiVersion.includes(".") && !r.apiVersion.endsWith(".k8s.io/v1"))
      .map((r) => `${r.apiVersion} ${r.kind}`);
    expect(custom.filter((r) => !served.has(r))).toEqual([]);
    // Every rule kind, the Antrea Egress, ClusterLink's Export, Import and Peer (twice: the
    // import function reads Peers too; built-in kinds such as NetworkPolicy and EndpointSlice,
    // *.k8s.io, need no CRD).
    expect(custom).toHaveLength(RULE_KIND_NAMES.length + 5);
  });
});

describe("the local config (manifests/connector/local.yaml): the connector beside `npm start`", () => {
  const cluster = loadConfig(path.join(repoRoot, "manifests/connector/config.yaml"));
  const local = loadConfig(path.join(repoRoot, "manifests/connector/local.yaml"));

  it("routes what the cluster config routes, each to its function on npm start's default port", () => {
    expect(local.routes.map((r) => ({ ...r, url: "" }))).toEqual(
      cluster.routes.map((r) => ({ ...r, url: "" })),
    );
    const served = new Set(FUNCTION_CATALOG.map((f) => f.name));
    for (const route of local.routes) {
      expect(route.url).toBe(`http://127.0.0.1:${DEFAULT_PORT}/${route.name}`);
      expect([route.name, served.has(route.name)]).toEqual([route.name, true]);
    }
  });

  it("listens on loopback, on a port that is not npm start's: no override needed to run both", () => {
    expect(local.http.host).toBe("127.0.0.1");
    expect(local.http.port).not.toBe(DEFAULT_PORT);
    expect(cluster.http.port).toBe(DEFAULT_PORT); // the clash a local run had without it
  });
});
