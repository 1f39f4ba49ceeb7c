// The node agent as it runs (issue 31): against the real API server, watching its node's Pods and
// the tables, loading its ruleset into a node namespace's packet filter, judged by real
// connections between pods (network namespaces on the node's bridge, packet-lab.ts). Tables are
// written by network-policy-sync's handler, called as its events would call it. It proves the
// order at a pod's start: an address the agent does not know is dropped, a selected pod whose
// tables are not stored is dropped, then exactly its tables apply. It also measures the time from
// a NetworkPolicyEndpoint write to the ruleset loaded (printed, not asserted).
import { jest } from "@jest/globals";
import { randomBytes } from "node:crypto";
import { pino } from "pino";
import { RunningNodeAgent } from "../../functions/netpol-node-agent/agent.js";
import { NETPOL_ENDPOINTS } from "../../shared/kube/index.js";
import type { NodeSyncResult } from "../../shared/netpol/index.js";
import { NetpolWorld } from "./netpol-harness.js";
import { adminKubeConfig } from "./support/cluster.js";
import { LAB_BRIDGE, PacketLab, describeWithLab } from "./support/packet-lab.js";

jest.setTimeout(120_000);

const WEB = "100.64.3.10";
const CLIENT = "100.64.3.11";
const OTHER = "100.64.3.12";
const LATE = "100.64.3.13";
const HTTP = [{ name: "http", port: 80 }];

interface Seen {
  readonly result: NodeSyncResult;
  /** performance.now() when the agent reported it. */
  readonly at: number;
}

/** Every sync the agent reports, and a wait for the first (latest or next) that satisfies a test. */
class Syncs {
  private readonly results: Seen[] = [];
  private readonly waiters: {
    test: (r: NodeSyncResult) => boolean;
    done: (seen: Seen) => void;
  }[] = [];

  record = (result: NodeSyncResult): void => {
    const at = performance.now();
    this.results.push({ result, at });
    for (const waiter of this.waiters.filter((w) => w.test(result))) {
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      waiter.done({ result, at });
    }
  };

  /** Resolves with when it happened; the latest result counts when `latestCounts`. */
  until(what: string, test: (r: NodeSyncResult) => boolean, latestCounts = true): Promise<Seen> {
    const latest = this.results[this.results.length - 1];
    if (latestCounts && latest !== undefined && test(latest.result)) return Promise.resolve(latest);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no agent sync: ${what}`)), 20_000);
      this.waiters.push({
        test,
        done: (seen) => {
          clearTimeout(timer);
          resolve(seen);
        },
      });
    });
  }
}

const percentile = (sorted: readonly number[], p: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

describeWithLab("the netpol node agent on a node: real API server, real packets", () => {
  const world = new NetpolWorld();
  const node = `lab-node-${randomBytes(3).toString("hex")}`;
  const syncs = new Syncs();
  let lab: PacketLab;
  let agent: RunningNodeAgent;
  let ns: string;
  const onNode = (ip: string, ports: typeof HTTP = []) => ({
    ip,
    ports,
    nodeName: node,
    node: lab.gateway,
  });

  beforeAll(async () => {
    lab = await PacketLab.start(
      3,
      [WEB, CLIENT, OTHER, LATE].map((ip) => ({ key: ip, ip })),
    );
    ns = await world.namespace("agent");
    agent = await RunningNodeAgent.start(
      {
        node,
        podInterfaces: [LAB_BRIDGE],
        table: "sdewan_netpol",
        resyncMs: 60_000,
        nftCommand: lab.nftCommand(),
        port: 0,
        host: "127.0.0.1",
      },
      {
        kubeConfig: adminKubeConfig(),
        logger: pino({ level: "silent" }),
        processMetrics: false,
        onSynced: syncs.record,
      },
    );
    await syncs.until("the first ruleset loaded", (r) => r.applied);
  }, 60_000);

  afterAll(async () => {
    await agent?.stop();
    await lab?.close();
  });

  it("with no policy the node's pods talk to each other; an address no Pod has is dropped", async () => {
    await world.pod(ns, "web", { app: "web" }, onNode(WEB, HTTP));
    await world.pod(ns, "client", { app: "client" }, onNode(CLIENT));
    await world.pod(ns, "other", { app: "other" }, onNode(OTHER));
    await syncs.until("3 unselected Pods", (r) => r.pods.unselected === 3);
    expect(
      await Promise.all([
        lab.connects(CLIENT, WEB, "TCP", 80),
        lab.connects(OTHER, WEB, "UDP", 81),
        lab.connects(LATE, WEB, "TCP", 80),
        lab.connects(CLIENT, LATE, "TCP", 80),
      ]),
    ).toEqual([true, true, false, false]);
    const ready = await fetch(`${agent.url()}/_/ready`);
    expect(ready.status).toBe(200);
  });

  it("a policy selects web: web's ingress is dropped until its tables are stored, then exactly they apply", async () => {
    await world.policy(ns, "web-from-clients", {
      podSelector: { matchLabels: { app: "web" } },
      ingress: [
        { from: [{ podSelector: { matchLabels: { app: "client" } } }], ports: [{ port: "http" }] },
      ],
    });
    await syncs.until("web awaiting its tables", (r) => r.pods["awaiting-tables"] === 1);
    expect(
      await Promise.all([
        lab.connects(CLIENT, WEB, "TCP", 80),
        lab.connects(WEB, CLIENT, "TCP", 80),
      ]),
    ).toEqual([false, true]);

    expect(await world.send(world.policyEvent(ns, "web-from-clients"))).toMatchObject({
      kind: "done",
    });
    await syncs.until("web enforced from its table", (r) => r.pods.tables === 1);
    expect(
      await Promise.all([
        lab.connects(CLIENT, WEB, "TCP", 80),
        lab.connects(OTHER, WEB, "TCP", 80),
        lab.connects(CLIENT, WEB, "TCP", 81),
        lab.connects(WEB, OTHER, "UDP", 80),
      ]),
    ).toEqual([true, false, false, true]);
  });

  it("a new client joins the peer set: only the peer set changes, and the agent lets it in", async () => {
    await world.relabelPod(ns, "other", { app: "client" });
    expect(await world.send(world.podEvent(ns, "other"))).toMatchObject({ kind: "done" });
    await syncs.until(
      "other in web's group",
      (r) => r.script.includes(OTHER) && r.pods.tables === 1 && groupHas(r, OTHER),
    );
    expect(await lab.connects(OTHER, WEB, "TCP", 80)).toBe(true);
  });

  it("a pod starting on the node: dropped while unknown, dropped while its tables load, then as they say", async () => {
    // The pod's network is up (CNI) before the API server has its address: the guard drops it.
    expect(await lab.connects(CLIENT, LATE, "TCP", 80)).toBe(false);
    // The kubelet reports the address; the policy selects it; its table is not written yet.
    await world.pod(ns, "late", { app: "web" }, onNode(LATE, HTTP));
    await syncs.until("late awaiting its tables", (r) => r.pods["awaiting-tables"] === 1);
    expect(
      await Promise.all([
        lab.connects(CLIENT, LATE, "TCP", 80),
        lab.connects(LATE, CLIENT, "TCP", 80),
      ]),
    ).toEqual([false, true]);
    // network-policy-sync writes its table: the agent loads it.
    expect(await world.send(world.podEvent(ns, "late"))).toMatchObject({ kind: "done" });
    await syncs.until("late enforced from its table", (r) => r.pods.tables === 2);
    expect(
      await Promise.all([
        lab.connects(CLIENT, LATE, "TCP", 80),
        lab.connects(CLIENT, LATE, "TCP", 81),
      ]),
    ).toEqual([true, false]);
  });

  it("a Pod deleted: its address is unknown again and dropped", async () => {
    await world.deletePod(ns, "late");
    await syncs.until("late gone", (r) => !r.scope.pods.has(`${ns}/late`));
    expect(await lab.connects(CLIENT, LATE, "TCP", 80)).toBe(false);
  });

  it("the table removed behind the agent's back: the next change finds it missing and loads the whole table", async () => {
    await lab.nft("", ["delete", "table", "inet", "sdewan_netpol"]);
    // Nothing filters now: the agent learns of it at its next change (or its periodic resync).
    await world.relabelPod(ns, "other", { app: "other" });
    expect(await world.send(world.podEvent(ns, "other"))).toMatchObject({ kind: "done" });
    const { result } = await syncs.until(
      "the whole table loaded again",
      (r) => r.loaded === "table after a refused update",
      false,
    );
    expect(groupHas(result, OTHER)).toBe(false);
    expect(
      await Promise.all([
        lab.connects(CLIENT, WEB, "TCP", 80),
        lab.connects(OTHER, WEB, "TCP", 80),
      ]),
    ).toEqual([true, false]);
  });

  it("measures: from a NetworkPolicyEndpoint write to the ruleset loaded (20 writes)", async () => {
    const latencies: number[] = [];
    const stages = { readMs: [] as number[], planMs: [] as number[], applyMs: [] as number[] };
    for (let i = 0; i < 20; i += 1) {
      // One more port entry on web's table each time (the bits of its first entry): a real change.
      const port = 9000 + 2 * i; // not adjacent: adjacent ranges are merged
      const stored = (await world.kube.get(NETPOL_ENDPOINTS, {
        namespace: ns,
        name: "web",
      })) as unknown as StoredEndpoint;
      const { ports } = stored.spec.ingress;
      const added = { ...ports[0], protocol: "UDP", port };
      const loaded = syncs.until(
        `UDP ${port} loaded`,
        (r) => r.loaded === "update" && r.script.includes(`udp . ${port}`),
        false,
      );
      const written = performance.now();
      await world.kube.replace(NETPOL_ENDPOINTS, {
        ...stored,
        spec: { ...stored.spec, ingress: { ...stored.spec.ingress, ports: [...ports, added] } },
      });
      const { at, result } = await loaded;
      latencies.push(at - written);
      for (const stage of ["readMs", "planMs", "applyMs"] as const)
        stages[stage].push(result.timings[stage]);
    }
    const summary = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      return `p50 ${percentile(sorted, 50).toFixed(1)} ms, p90 ${percentile(sorted, 90).toFixed(1)} ms, max ${percentile(sorted, 100).toFixed(1)} ms`;
    };
    console.log(
      [
        "netpol node agent, 20 NetworkPolicyEndpoint writes (4 Pods on the node):",
        `  write -> ruleset loaded: ${summary(latencies)}`,
        `  the agent's sync: read ${summary(stages.readMs)}; plan ${summary(stages.planMs)}; nft -f ${summary(stages.applyMs)}`,
      ].join("\n"),
    );
    // The kernel holds the last one.
    expect(await lab.nft("", ["list", "table", "inet", "sdewan_netpol"])).toContain("udp . 9038");
  });
});

interface StoredEndpoint {
  readonly metadata: { name: string; namespace: string; resourceVersion: string };
  readonly spec: {
    readonly ingress: { readonly ports: readonly Record<string, unknown>[] } & Record<
      string,
      unknown
    >;
  } & Record<string, unknown>;
}

/** Whether the ruleset's address sets hold `ip` (a group, not only the node's Pod list). */
function groupHas(result: NodeSyncResult, ip: string): boolean {
  return result.script
    .split("\tset ")
    .filter((block) => block.startsWith("g_"))
    .some((block) => block.includes(ip));
}
