// network-policy-sync at its edges, against the real API server: a peer set too large to store
// is reported (status, Event, metric) and fails closed instead of being retried forever; and
// `npm run netpol -- check` says when it cannot judge a packet (no such namespace, no such Pod,
// tables not computed yet) instead of answering "allow".
import { spawn } from "node:child_process";
import type { Outcome } from "../../shared/core/outcome.js";
import type { IntakeEvent } from "../../shared/events/types.js";
import { EVENTS, NETPOL_PEER_SETS } from "../../shared/kube/index.js";
import { RuntimeMetrics } from "../../shared/runtime/index.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import { NetpolWorld } from "./netpol-harness.js";
import { apiRequest } from "../../dev/control-plane/api.js";
import { NETPOL_API_VERSION, NETPOL_PEER_SET_PLURAL } from "../../shared/core/api-groups.js";
import { clusterInfo, endpoint } from "./support/cluster.js";

const world = new NetpolWorld();
// A /24 of the pod range per run (netpol-sync.test.ts takes 100.64.200-249).
const net = `100.64.${150 + (parseInt(world.run, 16) % 50)}`;

/** Redelivers like the broker while the handler says retry, at most `times` deliveries. */
async function deliver(event: IntakeEvent, fn: EventFunction, times = 3): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (let i = 0; i < times; i += 1) {
    outcomes.push(await world.send(event, fn));
    if (outcomes.at(-1)?.kind !== "retry") break;
  }
  return outcomes;
}

interface RecordedEvent {
  reason: string;
  type: string;
  note: string;
  regarding: { kind: string; name: string };
}

async function eventsOn(namespace: string, name: string): Promise<RecordedEvent[]> {
  const listed = (await world.kube.list(EVENTS, { namespace })) as unknown as RecordedEvent[];
  return listed.filter((e) => e.regarding.name === name);
}

interface StoredPeerSet {
  metadata: { labels?: Record<string, string>; managedFields?: unknown[] };
  spec: { groups: { name: string; addresses: string[] }[] };
  status?: { problems: { reason: string; message: string }[] };
}

async function peerSet(namespace: string, name: string): Promise<StoredPeerSet | undefined> {
  return (await world.kube.get(NETPOL_PEER_SETS, { namespace, name })) as unknown as
    StoredPeerSet | undefined;
}

describe("a peer set too large for the API server to store", () => {
  it("is stored failing closed, reported on the peer set, as an Event and a metric, and not retried", async () => {
    const ns = await world.namespace("huge");
    const pods = Array.from({ length: 100 }, (_, i) => `p-${i}`);
    for (const [i, name] of pods.entries()) {
      await world.pod(ns, name, { app: "peer" }, { ip: `${net}.${i + 1}` });
    }
    // 1,200 rules each letting in every Pod of the namespace: 1,200 groups of 100 addresses,
    // about 1.7 MB, past etcd's 1.5 MiB request limit. It selects no endpoint of its own. Deleted
    // at the end: every full recompute in the cluster (other files' too) compiles it, ~0.7 s.
    const rules = Array.from({ length: 1_200 }, () => ({ from: [{ podSelector: {} }] }));
    await world.policy(ns, "everyone-many-times", {
      podSelector: { matchLabels: { app: "nothing" } },
      ingress: rules,
    });
    try {
      const outcomes = await deliver(world.policyEvent(ns, "everyone-many-times", "add"), world.fn);
      expect(outcomes.map((o) => o.kind)).toEqual(["done"]);
      expect(outcomes[0]).toMatchObject({
        result: expect.stringMatching(/everyone-many-times: PeerSetTooLarge/) as unknown,
      });

      const stored = await peerSet(ns, "everyone-many-times");
      expect(stored?.spec.groups).toHaveLength(1_200);
      expect(stored?.spec.groups.every((g) => g.addresses.length === 0)).toBe(true);
      expect(stored?.status?.problems).toEqual([
        {
          reason: "PeerSetTooLarge",
          message: expect.stringMatching(
            /^100 Pods selected by labels need \d+ bytes in this peer set; at most 1310720 are stored/,
          ) as unknown,
        },
      ]);
      const events = await eventsOn(ns, "everyone-many-times");
      expect(events.map((e) => `${e.type} ${e.reason}`)).toEqual(["Warning PeerSetTooLarge"]);

      // A redelivery finds it as compiled: nothing written, nothing recorded again; the metric
      // says it. (No resync here: it would recompute the other files' namespaces under their feet.)
      const metrics = new RuntimeMetrics();
      const again = await world.send(
        world.policyEvent(ns, "everyone-many-times"),
        world.fn,
        metrics,
      );
      expect(again).toMatchObject({
        kind: "done",
        result: expect.stringMatching(/^unchanged/) as unknown,
      });
      expect(await eventsOn(ns, "everyone-many-times")).toHaveLength(1);
      expect(
        await metrics.registry.getSingleMetricAsString("sdewan_netpol_policy_problems"),
      ).toContain(
        `sdewan_netpol_policy_problems{namespace="${ns}",policy="everyone-many-times",reason="PeerSetTooLarge"} 1`,
      );
    } finally {
      await world.deletePolicy(ns, "everyone-many-times");
    }
  }, 120_000);

  it("NETPOL_PEER_SET_MAX_BYTES sets the bound: a small one makes a three-client peer set too large", async () => {
    // Only the outcome is asserted: what is stored, any instance with the default bound (another
    // file's resync) may recompute meanwhile. test/unit/netpol/peer-set-size.test.ts has the rest.
    const ns = await world.namespace("bound");
    for (const i of [1, 2, 3]) {
      await world.pod(ns, `client-${i}`, { role: "client" }, { ip: `${net}.${100 + i}` });
    }
    await world.policy(ns, "from-clients", {
      podSelector: {},
      ingress: [{ from: [{ podSelector: { matchLabels: { role: "client" } } }] }],
    });
    const small = world.instance(undefined, { NETPOL_PEER_SET_MAX_BYTES: "800" });
    expect(await deliver(world.policyEvent(ns, "from-clients", "add"), small)).toEqual([
      expect.objectContaining({
        kind: "done",
        result: expect.stringMatching(/; problems: .*from-clients: PeerSetTooLarge/) as unknown,
      }),
    ]);
    const usual = await deliver(world.policyEvent(ns, "from-clients"), world.fn);
    expect(usual).toEqual([
      expect.objectContaining({
        kind: "done",
        result: expect.not.stringMatching(/PeerSetTooLarge/) as unknown,
      }),
    ]);
  });

  it("stores a large peer set without managedFields, which would list every member label again", async () => {
    const ns = await world.namespace("lean");
    for (const i of [1, 2, 3, 4, 5]) {
      await world.pod(ns, `client-${i}`, { role: "client" }, { ip: `${net}.${200 + i}` });
    }
    // 1,000 groups of 5 addresses: ~100 KB, past what is created in one request (64 KiB).
    const rules = Array.from({ length: 1_000 }, () => ({
      from: [{ podSelector: { matchLabels: { role: "client" } } }],
    }));
    await world.policy(ns, "from-clients", { podSelector: {}, ingress: rules });
    await deliver(world.policyEvent(ns, "from-clients", "add"), world.fn);
    // Raw: shared/kube drops managedFields from what it reads.
    const path = `/apis/${NETPOL_API_VERSION}/namespaces/${ns}/${NETPOL_PEER_SET_PLURAL}/from-clients`;
    const stored = JSON.parse((await apiRequest(endpoint(), path)).body) as StoredPeerSet;
    expect(stored.spec.groups[999]?.addresses).toHaveLength(5);
    expect(Object.keys(stored.metadata.labels ?? {}).filter((k) => k.includes("/m-"))).toHaveLength(
      5,
    );
    expect(stored.metadata.managedFields ?? []).toEqual([]);
  }, 60_000);
});

interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** `npm run netpol -- <args>` as a user runs it, with `stdin` piped in when given. */
function netpolCli(args: readonly string[], stdin?: string): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "--silent", "netpol", "--", ...args], {
      env: { ...process.env, KUBECONFIG: clusterInfo().kubeconfigPath },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(stdin ?? "");
  });
}

describe("`npm run netpol -- check` says when it cannot judge a packet", () => {
  let ns = "";
  const web = `${net}.230`;

  beforeAll(async () => {
    ns = await world.namespace("check");
    await world.pod(ns, "web", { app: "web" }, { ip: web });
    await world.pod(ns, "free", { app: "free" }, { ip: `${net}.231` });
    // A policy selects web, but network-policy-sync never ran for it: no tables yet.
    await world.policy(ns, "web-deny", { podSelector: { matchLabels: { app: "web" } } });
  }, 30_000);

  it("a namespace that does not exist: exit 4", async () => {
    const run = await netpolCli(["check", `${ns}-gone/web`, "ingress", `${net}.1`, "TCP", "80"]);
    expect(run).toMatchObject({
      code: 4,
      stdout: `no-namespace ${ns}-gone/web ingress from ${net}.1 TCP/80 (namespace ${ns}-gone does not exist)\n`,
    });
  }, 60_000);

  it("a Pod that does not exist: exit 5", async () => {
    const run = await netpolCli(["check", `${ns}/ghost`, "ingress", `${net}.1`, "TCP", "80"]);
    expect(run).toMatchObject({
      code: 5,
      stdout: `no-pod ${ns}/ghost ingress from ${net}.1 TCP/80 (pod ${ns}/ghost does not exist)\n`,
    });
  }, 60_000);

  it("a Pod a policy selects whose tables were never computed: exit 6", async () => {
    const run = await netpolCli(["check", `${ns}/web`, "ingress", `${net}.1`, "TCP", "80"]);
    expect(run).toMatchObject({
      code: 6,
      stdout: `not-computed ${ns}/web ingress from ${net}.1 TCP/80 (NetworkPolicy web-deny selects the pod; its tables are not computed yet)\n`,
    });
  }, 60_000);

  it("a Pod no policy selects: allow, exit 0", async () => {
    const run = await netpolCli(["check", `${ns}/free`, "ingress", `${net}.1`, "TCP", "80"]);
    expect(run).toMatchObject({
      code: 0,
      stdout: `allow ${ns}/free ingress from ${net}.1 TCP/80 (no policy selects the pod)\n`,
    });
  }, 60_000);

  it("--batch answers one line per packet line from stdin, in order", async () => {
    const lines = [
      `${ns}/free ingress ${net}.1 TCP 80`,
      `${ns}/ghost egress ${net}.1 UDP 53`,
      `${ns}/web ingress ${net}.1 TCP 80`,
      `not a packet`,
      `${ns}/free egress ${net}.230 SCTP 9`,
    ];
    const run = await netpolCli(["check", "--batch", "-"], `${lines.join("\n")}\n`);
    expect(run.stdout.split("\n").slice(0, -1)).toEqual([
      `allow ${ns}/free ingress from ${net}.1 TCP/80 (no policy selects the pod)`,
      `no-pod ${ns}/ghost egress to ${net}.1 UDP/53 (pod ${ns}/ghost does not exist)`,
      `not-computed ${ns}/web ingress from ${net}.1 TCP/80 (NetworkPolicy web-deny selects the pod; its tables are not computed yet)`,
      `invalid line 4: not: want <namespace>/<pod>`,
      `allow ${ns}/free egress to ${net}.230 SCTP/9 (no policy selects the pod)`,
    ]);
    // Every line answered, one of them unusable: exit 2.
    expect(run.code).toBe(2);
  }, 60_000);

  it("--batch answers every line of a long batch before it exits (stdout is a pipe)", async () => {
    // More output than a pipe holds at once (64 KiB): an exit before stdout drained lost the rest.
    const packets = 5_000;
    const input = Array.from(
      { length: packets },
      (_, i) => `${ns}/free ingress ${net}.${(i % 200) + 1} TCP ${1000 + i}`,
    );
    const run = await netpolCli(["check", "--batch", "-"], `${input.join("\n")}\n`);
    const answers = run.stdout.split("\n").slice(0, -1);
    expect({ code: run.code, answers: answers.length }).toEqual({ code: 0, answers: packets });
    expect(answers.at(-1)).toBe(
      `allow ${ns}/free ingress from ${net}.200 TCP/5999 (no policy selects the pod)`,
    );
  }, 120_000);
});
