/**
 * `npm run netpol -- check` as a user runs it, against the bench API server: a namespace with a
 * default deny plus one allow (web from its clients), its tables computed by network-policy-sync
 * in process, then one check per process, N times, through what `npm run netpol` and
 * dev/netpol/netpol run (node dev/netpol/launch.mjs: the bundle, checked for staleness), a few
 * through npm itself (its own start-up is most of what remains) and through tsx (how it ran
 * before the bundle); then a batch of packets on stdin (`check --batch -`), per packet.
 */
import { spawn } from "node:child_process";
import { createNetworkPolicySync } from "../../functions/network-policy-sync/index.js";
import { NODE_IP } from "../../dev/control-plane/addresses.js";
import { bundleNetpolCli } from "../../scripts/bundle-netpol.js";
import { NAMESPACES, NETWORK_POLICIES, PODS } from "../../shared/kube/index.js";
import type { BenchContext } from "../lib/context.js";
import { atMost, type RowResult } from "../lib/report.js";
import { int, median, ms, percentiles } from "../lib/stats.js";

interface Run {
  readonly ms: number;
  readonly code: number | null;
  readonly stdout: string;
}

function run(command: string, args: readonly string[], env: NodeJS.ProcessEnv, stdin = "") {
  return new Promise<Run>((resolve, reject) => {
    const started = performance.now();
    const child = spawn(command, args, { env, stdio: ["pipe", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ ms: performance.now() - started, code, stdout }));
    child.stdin.end(stdin);
  });
}

async function timesOf(n: number, once: () => Promise<Run>): Promise<Run[]> {
  const runs: Run[] = [];
  for (let i = 0; i < n; i += 1) runs.push(await once());
  return runs;
}

async function createWorld(ctx: BenchContext, ns: string, clients: number): Promise<void> {
  const kube = ctx.cluster.adminClient();
  await kube.create(NAMESPACES, { metadata: { name: ns } });
  const pods = [
    { name: "web", labels: { app: "web" }, ip: "100.64.0.1" },
    ...Array.from({ length: clients }, (_, i) => ({
      name: `client-${i}`,
      labels: { role: "client" },
      ip: `100.64.1.${i + 1}`,
    })),
  ];
  for (const pod of pods) {
    await kube.create(PODS, {
      metadata: { name: pod.name, namespace: ns, labels: pod.labels },
      spec: { nodeName: "node-1", containers: [{ name: "app", image: "example.invalid/app:1" }] },
    });
    await kube.patchStatus(
      PODS,
      { namespace: ns, name: pod.name },
      { phase: "Running", hostIP: NODE_IP, podIP: pod.ip, podIPs: [{ ip: pod.ip }] },
    );
  }
  await kube.create(NETWORK_POLICIES, {
    metadata: { name: "web-from-clients", namespace: ns },
    spec: {
      podSelector: { matchLabels: { app: "web" } },
      ingress: [{ from: [{ podSelector: { matchLabels: { role: "client" } } }] }],
    },
  });
  const fn = createNetworkPolicySync({ kube: () => kube });
  const ref = { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", namespace: ns };
  const outcome = await fn.handle(
    { type: "object", id: "bench", action: "add", ref: { ...ref, name: "web-from-clients" } },
    {
      correlationId: "bench",
      log: { info: () => {}, warn: () => {}, error: () => {}, debug: () => {} },
      calls: { api: 0, cnf: 0 },
      signal: new AbortController().signal,
    },
  );
  if (outcome.kind !== "done") throw new Error(`tables not computed: ${JSON.stringify(outcome)}`);
}

export async function benchNetpolCheck(ctx: BenchContext): Promise<RowResult[]> {
  const ns = `npcheck-${Date.now().toString(36)}`;
  const clients = 20;
  await createWorld(ctx, ns, clients);
  const building = performance.now();
  await bundleNetpolCli();
  const buildMs = performance.now() - building;
  const env = { ...process.env, KUBECONFIG: ctx.cluster.kubeconfigPath };
  const packet = ["check", `${ns}/web`, "ingress", "100.64.1.1", "TCP", "8080"];
  const calls = ctx.quick ? 10 : 40;
  const launched = await timesOf(calls, () =>
    run(process.execPath, ["dev/netpol/launch.mjs", ...packet], env),
  );
  const throughNpm = await timesOf(ctx.quick ? 3 : 5, () =>
    run("npm", ["run", "--silent", "netpol", "--", ...packet], env),
  );
  const underTsx = await timesOf(3, () =>
    run(process.execPath, ["--import", "tsx", "dev/netpol/main.ts", ...packet], env),
  );
  const packets = ctx.quick ? 1_000 : 10_000;
  const lines = Array.from({ length: packets }, (_, i) => {
    const target = i % 4 === 0 ? `${ns}/client-${i % clients}` : `${ns}/web`;
    return `${target} ingress 100.64.1.${(i % (clients + 5)) + 1} TCP ${8080 + (i % 3)}`;
  });
  const batch = await run(
    process.execPath,
    ["dev/netpol/launch.mjs", "check", "--batch", "-"],
    env,
    `${lines.join("\n")}\n`,
  );
  const answers = batch.stdout.split("\n").filter(Boolean);
  const perPacket = batch.ms / packets;
  const p = percentiles(launched.map((r) => r.ms));
  const wrong = [...launched, ...throughNpm, ...underTsx].filter(
    (r) => r.code !== 0 || !r.stdout.startsWith("allow "),
  ).length;
  const problems = [
    ...(wrong > 0 ? [`${wrong} single checks did not answer allow`] : []),
    ...(batch.code !== 0 || answers.length !== packets
      ? [`batch: exit ${batch.code}, ${answers.length} answers for ${packets} packets`]
      : []),
  ];
  return [
    {
      id: "netpol-check",
      metric: `\`npm run netpol -- check\`: one packet per process (${calls} runs of node dev/netpol/launch.mjs, what the npm script runs), and ${int(packets)} packets in one \`check --batch -\``,
      target: "<= 300 ms per call",
      measured: `p50 ${ms(p.p50)} / p99 ${ms(p.p99)} per call; batch ${ms(perPacket)} per packet`,
      counts:
        `through npm run: median ${ms(median(throughNpm.map((r) => r.ms)))} (npm's own start-up included); ` +
        `under tsx, as before the bundle: median ${ms(median(underTsx.map((r) => r.ms)))}; ` +
        `batch ${ms(batch.ms)} for ${int(packets)} packets over ${clients + 1} Pods; bundle build ${ms(buildMs)}`,
      checks: [atMost("per call", p.p50, 300), atMost("batch per packet", perPacket, 300)],
      values: {
        p50Ms: p.p50,
        p99Ms: p.p99,
        npmMedianMs: median(throughNpm.map((r) => r.ms)),
        tsxMedianMs: median(underTsx.map((r) => r.ms)),
        batchPerPacketMs: perPacket,
        bundleBuildMs: buildMs,
      },
      ...(problems.length > 0 ? { error: problems.join("; ") } : {}),
    },
  ];
}
