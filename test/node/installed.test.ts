// The project as a user installs it, on a real node (dev/node): our image as Pods pulled from the
// node's registry, manifests/plain applied as docs/deploy.md says, the CNF and the peer gateways as
// Pods of the simulators (test/node/fixtures), so every Pod IP, readiness and Pod event comes from a
// real kubelet. The scenarios run in order on one install, as a user's day would.
import path from "node:path";
import { repoRoot } from "../../dev/control-plane/binaries.js";
import { isWrite } from "../../dev/demo/at-rest.js";
import {
  cnfHolds,
  type InstalledWorld,
  notAvailable,
  progress,
  pushProjectImage,
  pushSimulatorImage,
  readyPods,
  RULE_RESOURCES,
  applyFixtures,
  applySamples,
  atRestFor60s,
  cnfPodsPending as cnfPodsPendingIn,
  eventToFunctionMs,
  installPlain,
  percentiles,
  rulesNotInSync as rulesNotInSyncIn,
  startInstalledWorld,
  waitFor,
} from "./support/installed.js";

const NS = "sdewan-node";
const CNF = "app=cnf-1";
const repo = (p: string): string => path.join(repoRoot, p);

let world: InstalledWorld;
const numbers: string[] = [];
const measured = (line: string): void => {
  numbers.push(line);
  progress(line);
};

beforeAll(async () => {
  world = await startInstalledWorld();
  await pushProjectImage(world);
  await pushSimulatorImage(world);
}, 1_200_000);

afterAll(async () => {
  process.stderr.write(`\nnode scenarios, measured:\n  ${numbers.join("\n  ")}\n`);
  await world?.node.stop();
}, 180_000);

interface Rule {
  kind: string;
  metadata: { name: string; generation: number };
}

const rulesNotInSync = (): Promise<string | undefined> => rulesNotInSyncIn(world, NS);
const cnfPodsPending = (expected: number, pods = 2): Promise<string | undefined> =>
  cnfPodsPendingIn(world, NS, CNF, expected, pods);

const converged = (expected: number) => async () =>
  (await rulesNotInSync()) ?? (await cnfPodsPending(expected));

let samplesOnCnf = 0;

describe("manifests/plain on a real node", () => {
  it("installs as docs/deploy.md says and every Deployment turns Available", async () => {
    const t = Date.now();
    await installPlain(world);
    measured(
      `install (kubectl apply -k manifests/plain + Secrets) -> every Deployment Available: ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
    const deployments = await world.getJson<{ items: unknown[] }>([
      "-n",
      "sdewan-system",
      "deployments",
    ]);
    expect(deployments.items.length).toBeGreaterThanOrEqual(10);
  }, 420_000);

  it("the samples converge on both CNF pods, which run as Pods of the simulator", async () => {
    await applyFixtures(world);
    const t = Date.now();
    await applySamples(world);
    await waitFor(
      "samples in sync on both pods",
      async () => {
        const pending = await rulesNotInSync();
        if (pending !== undefined) return pending;
        const [a, b] = await readyPods(world, NS, CNF);
        if (a === undefined || b === undefined) return "CNF pods not ready";
        const [heldA, heldB] = [
          await cnfHolds(world, NS, a.metadata.name),
          await cnfHolds(world, NS, b.metadata.name),
        ];
        samplesOnCnf = heldA.size;
        return heldA.size > 0 && [...heldA.keys()].sort().join() === [...heldB.keys()].sort().join()
          ? undefined
          : `pods differ: ${heldA.size} vs ${heldB.size}`;
      },
      120_000,
      500,
    );
    measured(
      `samples applied -> in sync on both CNF pods: ${((Date.now() - t) / 1000).toFixed(1)} s (${samplesOnCnf} CNF items per pod)`,
    );
    expect(samplesOnCnf).toBeGreaterThanOrEqual(11);
  }, 300_000);

  it("kubectl apply --dry-run=server of a policy change warns its plan per pod, changes nothing", async () => {
    const policy = (weight: number): string =>
      JSON.stringify({
        apiVersion: "batch.sdewan.akraino.org/v1alpha1",
        kind: "Mwan3Policy",
        metadata: { name: "balance-1", namespace: NS, labels: { sdewanPurpose: "cnf-1" } },
        spec: {
          members: [
            { network: "ovn-net1", metric: 2, weight },
            { network: "ovn-net2", metric: 3, weight: 3 },
          ],
        },
      });
    const pods = (await readyPods(world, NS, CNF)).map((p) => p.metadata.name);
    const before = await world.getJson<Rule & { metadata: { resourceVersion: string } }>([
      "-n",
      NS,
      "mwan3policy",
      "balance-1",
    ]);
    const heldBefore = await cnfHolds(world, NS, pods[0]!);
    const t = Date.now();
    const { stderr } = await world.node.kubectlOutput(
      ["apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-"],
      policy(5),
    );
    measured(`dry run of a policy change on a 2-pod CNF, through kubectl: ${Date.now() - t} ms`);
    expect(pods).toHaveLength(2);
    for (const pod of pods) {
      expect(stderr).toContain(
        `plan Mwan3Policy balance-1: pod ${pod}: PUT mwan3/policies/balance_1 [members]; restart mwan3`,
      );
    }
    expect(stderr).toContain("affects 1 rule(s) using it: Mwan3Rule http-rule");
    // Nothing written: neither the rule nor what the CNF holds.
    const after = await world.getJson<typeof before>(["-n", NS, "mwan3policy", "balance-1"]);
    expect(after.metadata.resourceVersion).toBe(before.metadata.resourceVersion);
    expect(await cnfHolds(world, NS, pods[0]!)).toEqual(heldBefore);
    // The policy as it is: the CNF already holds it.
    const same = await world.node.kubectlOutput(
      ["apply", "--server-side", "--force-conflicts", "--dry-run=server", "-f", "-"],
      policy(2),
    );
    expect(same.stderr).toContain("no change");
  }, 120_000);

  it("event -> function latency through the connector (20 rules, one at a time)", async () => {
    const latencies = await eventToFunctionMs(world, NS, 20);
    measured(
      `event -> function (rule created -> reconcile-rule reads it), connector: ${percentiles(latencies)}`,
    );
    samplesOnCnf += 20;
    expect(latencies).toHaveLength(20);
  }, 300_000);

  it("ClusterLink: the Peer whose gateway Pod answers is reachable, the silent one is not", async () => {
    await world.kubectl(["create", "namespace", "clusterlink-system"]);
    const t = Date.now();
    for (const [peer, port] of [
      ["east", 8443],
      ["west", 8444],
    ] as const) {
      await world.kubectl(
        ["apply", "-f", "-"],
        `apiVersion: clusterlink.net/v1alpha1
kind: Peer
metadata: {name: ${peer}, namespace: clusterlink-system}
spec: {gateways: [{host: peer-gateway-sim.${NS}.svc, port: ${port}}]}
`,
      );
    }
    interface Peer {
      metadata: { name: string };
      status?: { conditions?: { type: string; status: string }[] };
    }
    const reachable = (p: Peer | undefined): string | undefined =>
      p?.status?.conditions?.find((c) => c.type === "PeerReachable")?.status;
    await waitFor(
      "Peers heartbeaten",
      async () => {
        const peers = await world.getJson<{ items: Peer[] }>(["-n", "clusterlink-system", "peers"]);
        const east = reachable(peers.items.find((p) => p.metadata.name === "east"));
        const west = reachable(peers.items.find((p) => p.metadata.name === "west"));
        return east === "True" && west === "False" ? undefined : `east ${east}, west ${west}`;
      },
      120_000,
      500,
    );
    measured(
      `Peers created -> east PeerReachable True, west False: ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
  }, 180_000);

  it("network-policy-sync: a NetworkPolicy on the CNF's pods gives each its enforcement table", async () => {
    const t = Date.now();
    await world.kubectl(
      ["-n", NS, "apply", "-f", "-"],
      `apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: cnf-from-namespace}
spec:
  podSelector: {matchLabels: {app: cnf-1}}
  policyTypes: [Ingress]
  ingress:
    - from:
        - podSelector: {}
        - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: sdewan-system}}
      ports: [{protocol: TCP, port: 80}]
`,
    );
    interface Endpoint {
      spec: { podIPs: string[]; ingress: { isolated: boolean } };
    }
    await waitFor(
      "a table per CNF pod, ingress isolated",
      async () => {
        const ips = (await readyPods(world, NS, CNF)).map((p) => p.status.podIP ?? "");
        const tables = await world.getJson<{ items: Endpoint[] }>([
          "-n",
          NS,
          "networkpolicyendpoints",
        ]);
        const isolated = new Set(
          tables.items.filter((e) => e.spec.ingress.isolated).flatMap((e) => e.spec.podIPs),
        );
        const missing = ips.filter((ip) => !isolated.has(ip));
        return ips.length === 2 && missing.length === 0
          ? undefined
          : `no isolated table for ${missing.join(", ") || "the pods"}`;
      },
      120_000,
      500,
    );
    measured(
      `NetworkPolicy applied -> a table per CNF pod: ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
    // The policy stays through the scenarios below, enforced by manifests/plain's node agent: the
    // functions reach the CNF from sdewan-system, which the policy lets in.
  }, 180_000);

  it("a CNF pod deleted comes back with a new IP and is healed", async () => {
    const [victim] = await readyPods(world, NS, CNF);
    if (victim === undefined) throw new Error("no CNF pod");
    const t = Date.now();
    await world.kubectl(["-n", NS, "delete", "pod", victim.metadata.name, "--wait=false"]);
    await waitFor(
      "healed",
      async () => {
        const ready = await readyPods(world, NS, CNF);
        if (ready.some((p) => p.metadata.name === victim.metadata.name))
          return "old pod still ready";
        return cnfPodsPending(samplesOnCnf);
      },
      120_000,
      250,
    );
    const ips = (await readyPods(world, NS, CNF)).map((p) => p.status.podIP);
    expect(ips).not.toContain(victim.status.podIP);
    measured(
      `CNF pod deleted -> replacement (new IP) holds every rule: ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
    expect(await rulesNotInSync()).toBeUndefined();
  }, 180_000);

  it("a rolling update of the CNF (two ReplicaSets at once) converges", async () => {
    const t = Date.now();
    await world.kubectl([
      "-n",
      NS,
      "patch",
      "deployment",
      "cnf-1",
      "--type=merge",
      "-p",
      JSON.stringify({
        spec: { template: { metadata: { annotations: { "rollout-test": String(t) } } } },
      }),
    ]);
    await waitFor(
      "rolled out and healed",
      async () => (await notAvailable(world, NS, ["cnf-1"])) ?? (await converged(samplesOnCnf)()),
      180_000,
      500,
    );
    const sets = await world.getJson<{ items: { status: { replicas: number } }[] }>([
      "-n",
      NS,
      "replicasets",
      "-l",
      CNF,
    ]);
    expect(sets.items.length).toBeGreaterThanOrEqual(2);
    measured(
      `rolling update of the CNF -> every new pod holds every rule: ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
  }, 240_000);

  it("a function Pod killed in the middle of a 300-rule burst loses nothing", async () => {
    const burst = Array.from(
      { length: 300 },
      (_, i) => `apiVersion: batch.sdewan.akraino.org/v1alpha1
kind: FirewallRule
metadata: {name: burst-${String(i).padStart(3, "0")}, labels: {sdewanPurpose: cnf-1}}
spec: {src: lan1, src_port: "${1000 + i}", proto: tcp, target: REJECT}
`,
    ).join("---\n");
    const t = Date.now();
    const applying = world.kubectl(["-n", NS, "apply", "-f", "-"], burst);
    // Kill reconcile-rule (no grace: a crash) once the burst is under way.
    await waitFor(
      "burst under way",
      async () => {
        const rules = await world.getJson<{ items: Rule[] }>(["-n", NS, "firewallrules"]);
        return rules.items.filter((r) => r.metadata.name.startsWith("burst-")).length >= 50
          ? undefined
          : "fewer than 50 created";
      },
      120_000,
      200,
    );
    const [fn] = await readyPods(world, "sdewan-system", "app.kubernetes.io/name=reconcile-rule");
    if (fn === undefined) throw new Error("no reconcile-rule pod");
    await world.kubectl([
      "-n",
      "sdewan-system",
      "delete",
      "pod",
      fn.metadata.name,
      "--grace-period=0",
      "--force",
    ]);
    progress(`killed ${fn.metadata.name} ${((Date.now() - t) / 1000).toFixed(1)} s into the burst`);
    await applying;
    await waitFor("burst converged", converged(samplesOnCnf + 300), 600_000, 1_000);
    measured(
      `300-rule burst with reconcile-rule killed in it -> all in sync on both pods: ${((Date.now() - t) / 1000).toFixed(1)} s`,
    );
  }, 720_000);

  it("the kubelet restarted: pods keep running, changes still converge", async () => {
    const before = (await readyPods(world, NS, CNF)).map((p) => p.metadata.name).sort();
    await world.node.restartKubelet();
    await waitFor(
      "node Ready",
      async () => {
        const node = await world.getJson<{
          status: { conditions: { type: string; status: string }[] };
        }>(["node", "sdewan-node"]);
        return node.status.conditions.some((c) => c.type === "Ready" && c.status === "True")
          ? undefined
          : "not Ready";
      },
      120_000,
      500,
    );
    await world.kubectl(
      ["-n", NS, "apply", "-f", "-"],
      `apiVersion: batch.sdewan.akraino.org/v1alpha1
kind: FirewallRule
metadata: {name: after-kubelet, labels: {sdewanPurpose: cnf-1}}
spec: {src: lan1, src_port: "9999", proto: tcp, target: REJECT}
`,
    );
    await waitFor(
      "converged after the kubelet restart",
      converged(samplesOnCnf + 301),
      120_000,
      500,
    );
    expect((await readyPods(world, NS, CNF)).map((p) => p.metadata.name).sort()).toEqual(before);
  }, 240_000);

  it("at rest for 60 s: our identities read for the resyncs and write nothing", async () => {
    const requests = await atRestFor60s(world);
    const byUser = new Map<string, number>();
    for (const r of requests) {
      const who = r.user.replace("system:serviceaccount:sdewan-system:", "");
      byUser.set(who, (byUser.get(who) ?? 0) + 1);
    }
    measured(
      `at rest 60 s: ${requests.length} API requests by our identities (${[...byUser].map(([u, n]) => `${u} ${n}`).join(", ")}), writes ${requests.filter(isWrite).length}`,
    );
    expect(requests.filter(isWrite)).toEqual([]);
    // ... and the resyncs ran: clusterlink-peer-health's heartbeat reads the Peers every second
    expect(byUser.get("sdewan-clusterlink-peer-health") ?? 0).toBeGreaterThanOrEqual(30);
  }, 360_000);

  it("reports each function Pod's memory, as the kubelet measures it", async () => {
    const summary = JSON.parse(
      await world.kubectl(["get", "--raw", "/api/v1/nodes/sdewan-node/proxy/stats/summary"]),
    ) as {
      pods: {
        podRef: { name: string; namespace: string };
        memory?: { workingSetBytes?: number };
      }[];
    };
    const ours = summary.pods.filter((p) => p.podRef.namespace === "sdewan-system");
    const mib = (p: (typeof ours)[number]): number => (p.memory?.workingSetBytes ?? 0) / 2 ** 20;
    measured(
      `memory (working set) after the scenarios: ${ours
        .map(
          (p) => `${p.podRef.name.replace(/-[a-z0-9]+-[a-z0-9]+$/, "")} ${mib(p).toFixed(0)} MiB`,
        )
        .sort()
        .join(", ")}`,
    );
    expect(ours.length).toBeGreaterThanOrEqual(10);
    for (const pod of ours)
      expect([pod.podRef.name, mib(pod) > 0]).toEqual([pod.podRef.name, true]);
  });

  it("the webhook scaled to 0: rule writes fail closed, unlabelled deletes and CNF operations go on", async () => {
    await world.kubectl([
      "-n",
      "sdewan-system",
      "scale",
      "deployment/validate-admission",
      "--replicas=0",
    ]);
    await waitFor(
      "no webhook endpoint",
      async () => {
        const slices = await world.getJson<{ items: { endpoints?: unknown[] }[] }>([
          "-n",
          "sdewan-system",
          "endpointslices",
          "-l",
          "kubernetes.io/service-name=validate-admission",
        ]);
        return slices.items.some((e) => (e.endpoints ?? []).length > 0)
          ? "endpoints left"
          : undefined;
      },
      60_000,
      500,
    );
    // failurePolicy Fail for rule kinds (manifests/webhook/README.md): no rule passes unchecked
    await expect(
      world.kubectl(
        ["-n", NS, "apply", "-f", "-"],
        `apiVersion: batch.sdewan.akraino.org/v1alpha1
kind: FirewallRule
metadata: {name: unchecked, labels: {sdewanPurpose: cnf-1}}
spec: {src: lan1, src_port: "8888", proto: tcp, target: REJECT}
`,
      ),
    ).rejects.toThrow(/failed calling webhook "rules.validate-admission.sdewan.akraino.org"/);
    // a delete of a rule with no bucket label never calls the webhook (ADR 0010), nor does scaling
    // the CNF (failurePolicy Ignore for CNF Deployments)
    await world.kubectl(["-n", NS, "delete", "firewallrule", "after-kubelet", "--timeout=60s"]);
    await world.kubectl(["-n", NS, "scale", "deployment/cnf-1", "--replicas=2"]);
    await world.kubectl([
      "-n",
      "sdewan-system",
      "scale",
      "deployment/validate-admission",
      "--replicas=2",
    ]);
    await waitFor(
      "webhook back",
      () => notAvailable(world, "sdewan-system", ["validate-admission"]),
      120_000,
      500,
    );
  }, 300_000);

  it("uninstall removes everything ours and leaves the user's objects", async () => {
    // docs/deploy.md: rules first (their finalizers are released by reconcile-rule), then the variant.
    await world.kubectl([
      "-n",
      NS,
      "delete",
      RULE_RESOURCES.split(",").join(","),
      "--all",
      "--timeout=300s",
    ]);
    await world.kubectl(["delete", "-k", repo("manifests/plain"), "--timeout=300s"]);
    const left = await world.kubectl([
      "get",
      "clusterroles,clusterrolebindings,validatingwebhookconfigurations,validatingadmissionpolicies,namespaces",
      "-o",
      "name",
    ]);
    expect(left.split("\n").filter((l) => /sdewan/.test(l) && !l.endsWith(`/${NS}`))).toEqual([]);
    // the user's CNF, its Secret and namespace stay, untouched
    expect(await notAvailable(world, NS, ["cnf-1"])).toBeUndefined();
    await world.kubectl(["-n", NS, "get", "secret", "sdewan-cnf-credentials"]);
  }, 420_000);
});
