// The node agent's pure parts and its loop (issue 31): what each Pod of the node gets, the
// ruleset's shape, which watched changes concern the node, and when syncs run. Real packets:
// test/integration/netpol-datapath.test.ts and netpol-agent.test.ts.
import { jest } from "@jest/globals";
import {
  NodeAgentLoop,
  compileObjects,
  namespacesAwaitingTables,
  parseNetpolPod,
  parseNetworkPolicy,
  planAgentHint,
  planNodeEnforcement,
  planNodeScript,
  type NetpolPod,
  type NodeScope,
  type NodeSyncResult,
  type ObservedEndpoint,
  type ObservedPolicy,
} from "../../../shared/netpol/index.js";
import type { RefPod, RefPolicy } from "../../../dev/netpol-oracle/reference.js";
import type { EndpointSpec } from "../../../shared/kinds/netpol.js";
import { namespace, pod, policy } from "./fixtures.js";

const netpolPod = (raw: RefPod, uid = ""): NetpolPod => {
  const parsed = parseNetpolPod({ ...raw, metadata: { ...raw.metadata, uid } });
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.value;
};
const readable = (raw: RefPolicy): ObservedPolicy => {
  const parsed = parseNetworkPolicy(raw);
  if (!parsed.ok) throw new Error(parsed.message);
  return { readable: true, policy: parsed.value };
};

const web = pod("shop", "web", "100.64.0.10", { app: "web" });
const client = pod("shop", "client", "100.64.0.11", { app: "client" });
const denyIngress = policy("shop", "deny-ingress", {
  podSelector: { matchLabels: { app: "web" } },
});
const denyEgress = policy("shop", "deny-egress", {
  podSelector: { matchLabels: { app: "web" } },
  policyTypes: ["Egress"],
});

/** The table network-policy-sync would store for `raw` under `policies`. */
function tableOf(raw: RefPod, policies: RefPolicy[]): EndpointSpec {
  const compiled = compileObjects({ namespaces: [namespace("shop")], pods: [raw], policies });
  const endpoint = compiled.endpoints[0];
  if (endpoint === undefined) throw new Error("no policy selects the pod");
  return endpoint.spec;
}
const stored = (spec: EndpointSpec, ownerUid = ""): ObservedEndpoint => ({
  readable: true,
  ownerUid,
  spec,
});

describe("planNodeEnforcement: what each Pod of the node gets", () => {
  it("a Pod with its table is enforced from it; the direction no policy isolates stays open", () => {
    const { pods } = planNodeEnforcement({
      pods: [netpolPod(web)],
      endpoints: new Map([["shop/web", stored(tableOf(web, [denyIngress]))]]),
      policies: new Map(),
    });
    expect(pods[0]).toMatchObject({
      state: "tables",
      ingress: { kind: "table" },
      egress: { kind: "open" },
    });
  });

  it("no table and no policy selects it: open both ways", () => {
    const { pods } = planNodeEnforcement({
      pods: [netpolPod(client)],
      endpoints: new Map(),
      policies: new Map([["shop", [readable(denyIngress)]]]),
    });
    expect(pods[0]).toMatchObject({
      state: "unselected",
      ingress: { kind: "open" },
      egress: { kind: "open" },
    });
  });

  it("no table yet while an egress-only policy selects it: egress dropped, ingress open", () => {
    const { pods } = planNodeEnforcement({
      pods: [netpolPod(web)],
      endpoints: new Map(),
      policies: new Map([["shop", [readable(denyEgress)]]]),
    });
    expect(pods[0]).toMatchObject({
      state: "awaiting-tables",
      ingress: { kind: "open" },
      egress: { kind: "drop" },
      reason: "selected by deny-egress; its tables are not stored yet: dropped until they are",
    });
  });

  it("a table an earlier Pod of the same name left (another uid) is not this Pod's: it waits, dropped", () => {
    const { pods } = planNodeEnforcement({
      pods: [netpolPod(web, "uid-new")],
      endpoints: new Map([["shop/web", stored(tableOf(web, [denyIngress]), "uid-old")]]),
      policies: new Map([["shop", [readable(denyIngress)]]]),
    });
    expect(pods[0]).toMatchObject({ state: "awaiting-tables", ingress: { kind: "drop" } });
    expect(
      namespacesAwaitingTables(
        [netpolPod(web, "uid-new")],
        new Map([["shop/web", stored(tableOf(web, [denyIngress]), "uid-old")]]),
      ),
    ).toEqual(["shop"]);
  });

  it("a table or a policy that cannot be read drops the Pod both ways, saying which", () => {
    const table = planNodeEnforcement({
      pods: [netpolPod(web)],
      endpoints: new Map([["shop/web", { readable: false, message: "bits: invalid" }]]),
      policies: new Map(),
    });
    const policies = planNodeEnforcement({
      pods: [netpolPod(client)],
      endpoints: new Map(),
      policies: new Map([["shop", [{ readable: false, name: "odd", message: "spec: invalid" }]]]),
    });
    for (const { pods } of [table, policies]) {
      expect(pods[0]).toMatchObject({
        state: "unreadable",
        ingress: { kind: "drop" },
        egress: { kind: "drop" },
      });
    }
    expect(policies.pods[0]?.reason).toContain("NetworkPolicy odd cannot be read");
  });

  it("two Pods claiming one address are both dropped; terminated, host-network and address-less Pods are not known", () => {
    const twin = pod("shop", "twin", "100.64.0.10");
    const done = pod("shop", "done", "100.64.0.12", {}, { phase: "Succeeded" });
    const host = pod("shop", "host", "100.64.0.1", {}, { hostNetwork: true });
    const pending = { ...pod("shop", "pending", ""), status: { phase: "Pending" } };
    const enforcement = planNodeEnforcement({
      pods: [web, twin, done, host, pending].map((p) => netpolPod(p)),
      endpoints: new Map(),
      policies: new Map(),
    });
    expect(enforcement.pods.map((p) => [p.name, p.state])).toEqual([
      ["twin", "address-clash"],
      ["web", "address-clash"],
    ]);
    expect(enforcement.knownIPs).toEqual(["100.64.0.10"]);
  });
});

describe("the ruleset: one table, replaced in one transaction", () => {
  const options = { table: "sdewan_netpol", podInterfaces: ["sdewanbr0"] };
  const script = (pods: RefPod[], policies: RefPolicy[]) => {
    const compiled = compileObjects({ namespaces: [namespace("shop")], pods, policies });
    return planNodeScript(
      planNodeEnforcement({
        pods: pods.map((p) => netpolPod(p)),
        endpoints: new Map(
          compiled.endpoints.map((e) => [`${e.namespace}/${e.name}`, stored(e.spec)]),
        ),
        policies: new Map(),
      }),
      new Map(compiled.peerSets.map((p) => [`${p.namespace}/${p.name}`, p.spec])),
      options,
    );
  };

  it("creates the table if missing, deletes it and declares it anew, so nft commits all or nothing", () => {
    const lines = script([web], []).script.split("\n");
    expect(lines.slice(0, 3)).toEqual([
      "table inet sdewan_netpol",
      "delete table inet sdewan_netpol",
      "table inet sdewan_netpol {",
    ]);
  });

  it("Pods selected by the same policies share one chain, each address mapped to it", () => {
    const other = pod("shop", "web-2", "100.64.0.12", { app: "web" });
    const { plan, stats } = script([web, other, client], [denyIngress]);
    expect(plan.chains.size).toBe(1);
    const [chain] = [...plan.chains.keys()];
    expect(Object.fromEntries(plan.verdicts.ingress)).toEqual({
      "100.64.0.10": { chain },
      "100.64.0.12": { chain },
    });
    expect(plan.verdicts.egress.size).toBe(0);
    expect(stats).toMatchObject({ pods: 3, chains: 1 });
  });

  it("overlapping CIDRs and port ranges are merged: nft refuses overlapping elements of a set", () => {
    const allow = policy("shop", "allow", {
      podSelector: { matchLabels: { app: "web" } },
      ingress: [
        {
          from: [{ ipBlock: { cidr: "100.64.0.0/16" } }, { ipBlock: { cidr: "100.64.1.0/24" } }],
          ports: [
            { port: 80, endPort: 90 },
            { port: 85, endPort: 100 },
          ],
        },
      ],
    });
    const rules = script([web], [allow])
      .script.split("\n")
      .filter((l) => l.includes("allow_"));
    expect(rules.map((l) => l.trim())).toEqual([
      'ip saddr { 100.64.0.0/16 } meta l4proto . th dport { tcp . 80-100 } accept comment "shop:allow_ingress_0"',
    ]);
  });

  it("a group whose peer set is not stored is an empty set: its peers match nothing", () => {
    const fromClients = policy("shop", "from-clients", {
      podSelector: { matchLabels: { app: "web" } },
      ingress: [{ from: [{ podSelector: { matchLabels: { app: "client" } } }] }],
    });
    const compiled = compileObjects({
      namespaces: [namespace("shop")],
      pods: [web, client],
      policies: [fromClients],
    });
    const endpoints = new Map(
      compiled.endpoints.map((e) => [`${e.namespace}/${e.name}`, stored(e.spec)]),
    );
    const enforcement = planNodeEnforcement({
      pods: [netpolPod(web), netpolPod(client)],
      endpoints,
      policies: new Map(),
    });
    const { plan } = planNodeScript(enforcement, new Map(), options);
    expect([...plan.groups.values()]).toEqual([[]]);
  });
});

describe("planAgentHint: which watched changes concern the node", () => {
  const scope: NodeScope = {
    pods: new Set(["shop/web"]),
    peerSets: new Set(["shop/from-clients"]),
    namespaces: new Set(["shop"]),
  };
  it.each([
    ["Pod", "shop", "web", true],
    ["NetworkPolicyEndpoint", "shop", "web", true],
    ["NetworkPolicyEndpoint", "shop", "elsewhere", false],
    ["NetworkPolicyPeerSet", "shop", "from-clients", true],
    ["NetworkPolicyPeerSet", "shop", "unrelated", false],
    ["NetworkPolicy", "shop", "any", true],
    ["NetworkPolicy", "bank", "any", false],
  ] as const)("%s %s/%s: sync %s", (kind, ns, name, sync) => {
    expect(planAgentHint({ kind, namespace: ns, name }, scope).sync).toBe(sync);
  });

  it("before any sync completed, everything syncs", () => {
    expect(planAgentHint({ kind: "NetworkPolicy", namespace: "bank", name: "x" }, null).sync).toBe(
      true,
    );
  });
});

describe("NodeAgentLoop: when the agent syncs", () => {
  const log = { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} };
  const result = (applied: boolean): NodeSyncResult => ({
    applied,
    loaded: applied ? "table" : "none",
    loadedBytes: 0,
    plan: {
      knownIPs: [],
      groups: new Map(),
      chains: new Map(),
      verdicts: { ingress: new Map(), egress: new Map() },
    },
    script: "",
    stats: { pods: 0, chains: 0, rules: 0, sets: 1, elements: 0, bytes: 0 },
    pods: { tables: 0, unselected: 0, "awaiting-tables": 0, unreadable: 0, "address-clash": 0 },
    problems: [],
    scope: { pods: new Set(["shop/web"]), peerSets: new Set(), namespaces: new Set(["shop"]) },
    timings: { readMs: 0, planMs: 0, applyMs: 0 },
  });

  /** A sync that waits until the test lets it finish (or fail). */
  function controlledSync() {
    const calls: { force: boolean; finish: (ok: boolean) => void }[] = [];
    const sync = (force: boolean) =>
      new Promise<NodeSyncResult>((resolve, reject) => {
        calls.push({
          force,
          finish: (ok) => (ok ? resolve(result(true)) : reject(new Error("API down"))),
        });
      });
    return { calls, sync };
  }
  const settle = () => new Promise((resolve) => setImmediate(resolve));

  afterEach(() => jest.useRealTimers());

  it("starts with a forced sync; hints arriving meanwhile fold into one more sync after it", async () => {
    const { calls, sync } = controlledSync();
    const loop = new NodeAgentLoop({ sync, resyncMs: 60_000, log });
    loop.start();
    expect(calls.map((c) => c.force)).toEqual([true]);
    for (const name of ["a", "b", "c"])
      loop.hint({ kind: "NetworkPolicy", namespace: "elsewhere", name });
    calls[0]?.finish(true);
    await settle();
    expect(loop.ready).toBe(true);
    expect(calls.map((c) => c.force)).toEqual([true, false]);
    calls[1]?.finish(true);
    await settle();
    // Idle now, and the scope is known: a change elsewhere starts nothing.
    loop.hint({ kind: "NetworkPolicy", namespace: "elsewhere", name: "d" });
    loop.hint({ kind: "NetworkPolicyEndpoint", namespace: "shop", name: "web" });
    expect(calls).toHaveLength(3);
    calls[2]?.finish(true);
    await loop.stop();
  });

  it("a failed sync is tried again after a backoff, still forced; the period forces a reload", async () => {
    jest.useFakeTimers();
    const { calls, sync } = controlledSync();
    const loop = new NodeAgentLoop({
      sync,
      resyncMs: 60_000,
      backoff: { initialMs: 500, maxMs: 30_000 },
      log,
    });
    loop.start();
    calls[0]?.finish(false);
    await jest.advanceTimersByTimeAsync(0);
    loop.hint({ kind: "Pod", namespace: "shop", name: "web" });
    expect(calls).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(500);
    expect(calls.map((c) => c.force)).toEqual([true, true]);
    expect(loop.ready).toBe(false);
    calls[1]?.finish(true);
    await jest.advanceTimersByTimeAsync(60_000);
    expect(calls.map((c) => c.force)).toEqual([true, true, true]);
    calls[2]?.finish(true);
    await loop.stop();
  });
});
