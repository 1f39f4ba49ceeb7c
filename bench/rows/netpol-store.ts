/**
 * network-policy-sync rows against the bench API server: the generated world (bench/netpol/
 * world.ts) created as Namespaces, Pods (with status) and NetworkPolicies, then one resync that
 * stores every table (timed, bytes and requests counted), then Pods relabelled one at a time,
 * each followed by its event (timed): the per-event cost of reading what one Pod can change and
 * rewriting it (relabelTarget picks relabels that do change tables). Last, the store row's floor:
 * the same tables created again by a plain client (bench/netpol/floor.ts), with the CPU the API
 * server and etcd spent on each (bench/lib/plane-cpu.ts).
 */
import path from "node:path";
import pLimit from "p-limit";
import { createNetworkPolicySync } from "../../functions/network-policy-sync/index.js";
import { RESYNC_IN_FLIGHT } from "../../shared/netpol/apply-event.js";
import type { BenchContext } from "../lib/context.js";
import { postObjectEvent, postResync } from "../lib/events.js";
import {
  describeListFreshness,
  listFreshnessCosts,
  writtenResourceVersion,
} from "../lib/list-freshness.js";
import { RecordingKube } from "../lib/recording-kube.js";
import { createFloor } from "../netpol/floor.js";
import { planeCpuMeter } from "../lib/plane-cpu.js";
import { atMost, type RowResult } from "../lib/report.js";
import { serveInProcess } from "../lib/serve.js";
import { int, ms, num, percentiles } from "../lib/stats.js";
import { netpolWorld, type NetpolBenchSizes, type RawNetpolWorld } from "../netpol/world.js";

const FULL: NetpolBenchSizes = { pods: 10_000, namespaces: 500, policies: 500 };
const QUICK: NetpolBenchSizes = { pods: 1_000, namespaces: 50, policies: 50 };
const RELABELS_FULL = 100;
const RELABELS_QUICK = 20;

interface PodKey {
  readonly name: string;
  readonly namespace: string;
}

/**
 * The i-th relabel: a Pod of a namespace whose policy np-k (world.ts's second shape) selects
 * app a<k> and admits app a<k+1>, relabelled from a<k> to a<k+1>, so every event changes tables:
 * the Pod joins np-k's address group (one peer set rewritten) and np-k no longer selects it (its
 * endpoint table deleted). Namespace k holds Pods k, k + namespaces, ..., all app a<k>.
 */
function relabelTarget(sizes: NetpolBenchSizes, i: number): { pod: number; app: string } {
  const shapeOne = Math.min(sizes.namespaces, sizes.policies);
  const k = (1 + 5 * i) % shapeOne;
  const round = Math.floor((5 * i) / shapeOne);
  return { pod: k + sizes.namespaces * round, app: `a${(k + 1) % 20}` };
}

async function createWorld(ctx: BenchContext, world: RawNetpolWorld): Promise<void> {
  const { raw } = ctx.cluster;
  const limit = pLimit(32);
  const started = performance.now();
  await Promise.all(
    world.namespaces.map((ns) => limit(() => raw.must("POST", "/api/v1/namespaces", ns))),
  );
  await Promise.all(
    world.pods.map((pod) =>
      limit(async () => {
        const { metadata, spec, status } = pod as {
          metadata: { name: string; namespace: string; labels: Record<string, string> };
          spec: unknown;
          status: unknown;
        };
        const base = `/api/v1/namespaces/${metadata.namespace}/pods`;
        await raw.must("POST", base, {
          metadata: { name: metadata.name, labels: metadata.labels },
          spec,
        });
        await raw.mergePatch(`${base}/${metadata.name}/status`, { status });
      }),
    ),
  );
  await Promise.all(
    world.policies.map((policy) =>
      limit(() => {
        const { metadata, spec } = policy as {
          metadata: { name: string; namespace: string };
          spec: unknown;
        };
        return raw.must(
          "POST",
          `/apis/networking.k8s.io/v1/namespaces/${metadata.namespace}/networkpolicies`,
          {
            metadata: { name: metadata.name },
            spec,
          },
        );
      }),
    ),
  );
  ctx.log(
    `netpol world: ${int(world.pods.length)} Pods, ${world.namespaces.length} Namespaces, ${world.policies.length} NetworkPolicies in ${Math.round(performance.now() - started)} ms`,
  );
}

export async function benchNetpolStore(
  ctx: BenchContext,
  wanted: (id: string) => boolean,
): Promise<RowResult[]> {
  const sizes = ctx.quick ? QUICK : FULL;
  const world = netpolWorld(sizes, `np${Date.now().toString(36)}`);
  await createWorld(ctx, world);
  const kube = new RecordingKube(ctx.cluster.adminClient());
  const server = await serveInProcess(
    [createNetworkPolicySync({ kube: () => kube })],
    path.join(ctx.workDir, "network-policy-sync.log"),
  );
  const url = `${server.url}/network-policy-sync`;
  const rows: RowResult[] = [];
  try {
    kube.tally.reset();
    const planeCpu = await planeCpuMeter(ctx.cluster.plane.dir);
    const started = performance.now();
    const first = await postResync(url);
    const fullMs = performance.now() - started;
    const oursCpuMs = await planeCpu();
    const tally = kube.tally.describe();
    const listed = async (plural: string) =>
      (await ctx.cluster.raw.must("GET", `/apis/netpol.sdewan.akraino.org/v1alpha1/${plural}`))
        .body;
    const endpointList = await listed("networkpolicyendpoints");
    const peerSetList = await listed("networkpolicypeersets");
    const stored = endpointList.length + peerSetList.length;
    const endpoints = (JSON.parse(endpointList) as { items: unknown[] }).items.length;
    const peerSets = (JSON.parse(peerSetList) as { items: unknown[] }).items.length;
    if (wanted("netpol-relabel")) {
      const samples: number[] = [];
      const api: number[] = [];
      let failures = 0;
      kube.tally.reset();
      const events = ctx.quick ? RELABELS_QUICK : RELABELS_FULL;
      for (let i = 0; i < events; i += 1) {
        const { pod, app } = relabelTarget(sizes, i);
        const { name, namespace } = (world.pods[pod] as { metadata: PodKey }).metadata;
        await ctx.cluster.raw.mergePatch(`/api/v1/namespaces/${namespace}/pods/${name}`, {
          metadata: { labels: { app } },
        });
        const t = performance.now();
        const reply = await postObjectEvent(url, {
          apiVersion: "v1",
          kind: "Pod",
          namespace,
          name,
        });
        samples.push(performance.now() - t);
        api.push(reply.calls.api);
        if (reply.status !== 202) failures += 1;
      }
      const p = percentiles(samples);
      const avg = api.reduce((a, b) => a + b, 0) / Math.max(1, api.length);
      // A label no policy reads, so the probe's writes change no table.
      const probe = (world.pods[0] as { metadata: PodKey }).metadata;
      const freshness = await listFreshnessCosts(
        ctx.cluster.raw,
        `/apis/netpol.sdewan.akraino.org/v1alpha1/networkpolicypeersets?labelSelector=${encodeURIComponent("netpol.sdewan.akraino.org/peer-set=bench-probe")}`,
        async (i) =>
          writtenResourceVersion(
            (
              await ctx.cluster.raw.mergePatch(
                `/api/v1/namespaces/${probe.namespace}/pods/${probe.name}`,
                { metadata: { labels: { "bench-probe": String(i) } } },
              )
            ).body,
          ),
      );
      rows.push({
        id: "netpol-relabel",
        metric: `network-policy-sync: Pod relabelled -> its event -> affected tables rewritten (${events} events, ${int(sizes.pods)} Pods)`,
        target: "p50 <= 20 ms, p99 <= 100 ms",
        measured: `p50 ${ms(p.p50)} / p99 ${ms(p.p99)} (max ${ms(p.max)})`,
        counts:
          `per event: ${num(avg)} API requests (${kube.tally.describe(events)}); ` +
          `${describeListFreshness("a label-selected list of NetworkPolicyPeerSets", freshness)}` +
          `${failures > 0 ? `; ${failures} not 202` : ""}`,
        checks: [atMost("p50", p.p50, 20), atMost("p99", p.p99, 100)],
        values: {
          events,
          p50Ms: p.p50,
          p99Ms: p.p99,
          apiPerEvent: avg,
          listConsistentMs: freshness.consistent,
          listCachedMs: freshness.cached,
          listNotOlderThanWriteMs: freshness.notOlderThanWrite,
        },
        ...(failures > 0 ? { error: `${failures} events not answered 202` } : {}),
      });
    }
    if (wanted("netpol-store")) {
      // Last, so its copies (beside the tables, other names) cannot slow the relabel row.
      const floor = await createFloor(
        ctx.cluster.raw,
        ctx.cluster.plane.dir,
        peerSetList,
        endpointList,
        { concurrency: RESYNC_IN_FLIGHT, suffix: "-floor" },
      );
      rows.unshift({
        id: "netpol-store",
        metric: `network-policy-sync full compile stored: ${int(sizes.pods)} Pods / ${sizes.namespaces} Namespaces / ${sizes.policies} NetworkPolicies (one resync, every table created)`,
        target: "<= 5 s",
        measured:
          `${ms(fullMs)}; floor ${ms(floor.ms)} (ours/floor ${num(fullMs / floor.ms)}x); ` +
          `${num(stored / 2 ** 20)} MiB of tables as listed, ${int(stored / Math.max(1, endpoints))} B per endpoint`,
        counts:
          `${first.calls.api} API requests (${tally}); ${first.status} "${first.detail.slice(0, 80)}"; ` +
          `kube-apiserver + etcd CPU: ours ${ms(oursCpuMs)}, floor ${ms(floor.cpuMs)}, of which the peer sets ${ms(floor.peerSetCpuMs)} ` +
          `(the floor: a plain client creating the same ${int(endpoints)} endpoint tables and ${int(peerSets)} peer sets, ` +
          `${RESYNC_IN_FLIGHT} in flight, peer sets first: ${ms(floor.peerSetMs)} for the peer sets)`,
        checks: [atMost("time", fullMs, 5_000)],
        values: {
          ms: fullMs,
          floorMs: floor.ms,
          apiRequests: first.calls.api,
          storedBytes: stored,
          endpoints,
          planeCpuMs: oursCpuMs,
          floorPlaneCpuMs: floor.cpuMs,
          floorPeerSetPlaneCpuMs: floor.peerSetCpuMs,
        },
        ...(first.status === 202 ? {} : { error: `reply ${first.status} ${first.detail}` }),
      });
    }
  } finally {
    await server.close();
  }
  return rows;
}
