/**
 * ClusterLink rows (issue 14) against the bench API server, the functions served in process:
 *
 * - clusterlink-imports: Imports created at once, each followed by its add event (as the
 *   connector delivers it) -> every Import Ready with both Services. Timed from the first create
 *   to the last reply; the end state is then read back and checked (Ready, two Services each,
 *   distinct target ports).
 * - clusterlink-import-change: an Import's port edited, then its update event timed until the
 *   reply (the system Service already carries the new port when the reply comes; checked).
 * - clusterlink-heartbeats: Peers with simulated gateways (dev/peer-gateway-sim), 10% of them
 *   silent, all heartbeaten by one resync; the silent ones cost one timeout, together.
 */
import path from "node:path";
import pLimit from "p-limit";
import * as z from "zod";
import { PeerGatewayFleet } from "../../dev/peer-gateway-sim/index.js";
import { createClusterLinkImport } from "../../functions/clusterlink-import/index.js";
import { createClusterLinkPeerHealth } from "../../functions/clusterlink-peer-health/index.js";
import { DEFAULT_CL_NAMESPACE, systemServiceName } from "../../shared/clusterlink/index.js";
import type { BenchContext } from "../lib/context.js";
import { postObjectEvent, postResync, type EventReply } from "../lib/events.js";
import { RecordingKube } from "../lib/recording-kube.js";
import { atMost, type RowResult } from "../lib/report.js";
import { serveInProcess } from "../lib/serve.js";
import { int, ms, num, percentiles } from "../lib/stats.js";

const API = "/apis/clusterlink.net/v1alpha1";
const IMPORT_REF = { apiVersion: "clusterlink.net/v1alpha1", kind: "Import" } as const;
const CL_NAMESPACE = DEFAULT_CL_NAMESPACE;
/** Deliveries in flight at once, as a connector with this many workers would send them. */
const DELIVERY_CONCURRENCY = 32;
/** Below the function's default (2 s) so the row's 2 s target leaves room for the rest. */
const HEARTBEAT_TIMEOUT_MS = 1_000;

const listSchema = z.object({
  items: z.array(
    z.object({
      metadata: z.object({ name: z.string(), namespace: z.string().optional() }),
      spec: z.record(z.string(), z.unknown()).optional(),
      status: z
        .object({
          conditions: z
            .array(z.object({ type: z.string(), status: z.string(), reason: z.string() }))
            .optional(),
        })
        .passthrough()
        .optional(),
    }),
  ),
});

async function listItems(
  ctx: BenchContext,
  url: string,
): Promise<z.infer<typeof listSchema>["items"]> {
  return listSchema.parse(JSON.parse((await ctx.cluster.raw.must("GET", url)).body)).items;
}

const conditionOf = (
  item: z.infer<typeof listSchema>["items"][number],
  type: string,
): string | undefined => item.status?.conditions?.find((c) => c.type === type)?.status;

async function ensureNamespace(ctx: BenchContext, name: string): Promise<void> {
  const reply = await ctx.cluster.raw.request("POST", "/api/v1/namespaces", { metadata: { name } });
  if (reply.status !== 201 && reply.status !== 409) {
    throw new Error(`namespace ${name}: HTTP ${reply.status} ${reply.body.slice(0, 200)}`);
  }
}

const importName = (i: number): string => `db-${String(i).padStart(4, "0")}`;

/** The Peer every Import's source names; reachable, as clusterlink-peer-health would say. */
const SOURCE_PEER = "east";

async function reachablePeer(ctx: BenchContext, name: string): Promise<void> {
  const base = `${API}/namespaces/${CL_NAMESPACE}/peers`;
  const created = await ctx.cluster.raw.request("POST", base, {
    apiVersion: "clusterlink.net/v1alpha1",
    kind: "Peer",
    metadata: { name },
    spec: { gateways: [{ host: "127.0.0.1", port: 1 }] },
  });
  if (created.status !== 201 && created.status !== 409) {
    throw new Error(`Peer ${name}: HTTP ${created.status} ${created.body.slice(0, 200)}`);
  }
  const condition = {
    type: "PeerReachable",
    status: "True",
    reason: "Heartbeat",
    message: "",
    lastTransitionTime: new Date().toISOString(),
  };
  await ctx.cluster.raw.mergePatch(`${base}/${name}/status`, {
    status: { conditions: [condition] },
  });
}

/** What went wrong with the end state, or null when every Import is Ready with two Services. */
async function checkImports(ctx: BenchContext, ns: string, count: number): Promise<string | null> {
  const imports = await listItems(ctx, `${API}/namespaces/${ns}/imports`);
  const notReady = imports.filter((i) => conditionOf(i, "Ready") !== "True");
  const ports = new Set(imports.map((i) => i.spec?.["targetPort"]));
  const selector = `labelSelector=${encodeURIComponent(`clusterlink.net/import-namespace=${ns}`)}`;
  const [system, user] = await Promise.all([
    listItems(ctx, `/api/v1/namespaces/${CL_NAMESPACE}/services?${selector}`),
    listItems(ctx, `/api/v1/namespaces/${ns}/services?${selector}`),
  ]);
  const problems = [
    imports.length === count ? "" : `${imports.length} Imports, not ${count}`,
    notReady.length === 0
      ? ""
      : `${notReady.length} not Ready (first: ${notReady[0]?.metadata.name})`,
    ports.size === count ? "" : `${ports.size} distinct target ports for ${count} Imports`,
    system.length === count ? "" : `${system.length} system Services`,
    user.length === count ? "" : `${user.length} user Services`,
  ].filter(Boolean);
  return problems.length === 0 ? null : problems.join("; ");
}

async function benchImports(
  ctx: BenchContext,
  wanted: (id: string) => boolean,
): Promise<RowResult[]> {
  const count = ctx.quick ? 200 : 1_000;
  const changes = ctx.quick ? 30 : 200;
  await ensureNamespace(ctx, CL_NAMESPACE);
  await reachablePeer(ctx, SOURCE_PEER);
  const ns = await ctx.cluster.namespace("cl-imports");
  const kube = new RecordingKube(ctx.cluster.adminClient());
  const server = await serveInProcess(
    [createClusterLinkImport({ kube: () => kube, env: { CL_NAMESPACE } })],
    path.join(ctx.workDir, "clusterlink-import.log"),
  );
  const url = `${server.url}/clusterlink-import`;
  const rows: RowResult[] = [];
  try {
    const limit = pLimit(DELIVERY_CONCURRENCY);
    const replies: EventReply[] = [];
    const started = performance.now();
    await Promise.all(
      Array.from({ length: count }, (_, i) =>
        limit(async () => {
          const name = importName(i);
          await ctx.cluster.raw.must("POST", `${API}/namespaces/${ns}/imports`, {
            apiVersion: IMPORT_REF.apiVersion,
            kind: "Import",
            metadata: { name },
            spec: {
              port: 5432,
              sources: [{ peer: SOURCE_PEER, exportName: "db", exportNamespace: "data" }],
            },
          });
          replies.push(await postObjectEvent(url, { ...IMPORT_REF, namespace: ns, name }, "add"));
        }),
      ),
    );
    const createdMs = performance.now() - started;
    const tally = kube.tally.describe(count);
    const api = replies.reduce((s, r) => s + r.calls.api, 0);
    const notAccepted = replies.filter((r) => r.status !== 202);
    const problem = await checkImports(ctx, ns, count);
    if (wanted("clusterlink-imports")) {
      rows.push({
        id: "clusterlink-imports",
        metric: `clusterlink-import: ${int(count)} Imports created, each with its add event (${DELIVERY_CONCURRENCY} deliveries at once) -> every Import Ready with its system and user Service`,
        target: "<= 10 s",
        measured: `${ms(createdMs)} (${num(count / (createdMs / 1000), 0)} Imports/s)`,
        counts: `${num(api / count)} API requests per Import, by the function (${tally}); plus the create`,
        checks: [atMost("time", createdMs, 10_000)],
        values: { imports: count, ms: createdMs, apiPerImport: api / count },
        ...(problem !== null
          ? { error: problem }
          : notAccepted.length > 0
            ? { error: `${notAccepted.length} replies not 202 (first: ${notAccepted[0]?.detail})` }
            : {}),
      });
    }
    if (wanted("clusterlink-import-change")) {
      rows.push(await benchChange(ctx, kube, url, ns, Math.min(changes, count)));
    }
  } finally {
    await server.close();
  }
  return rows;
}

async function benchChange(
  ctx: BenchContext,
  kube: RecordingKube,
  url: string,
  ns: string,
  events: number,
): Promise<RowResult> {
  const samples: number[] = [];
  const api: number[] = [];
  const wrong: string[] = [];
  kube.tally.reset();
  for (let i = 0; i < events; i += 1) {
    const name = importName(i);
    const port = 6_000 + i;
    await ctx.cluster.raw.mergePatch(`${API}/namespaces/${ns}/imports/${name}`, {
      spec: { port },
    });
    const t = performance.now();
    const reply = await postObjectEvent(url, { ...IMPORT_REF, namespace: ns, name });
    samples.push(performance.now() - t);
    api.push(reply.calls.api);
    const system = systemServiceName({ namespace: ns, name }, CL_NAMESPACE);
    const svc = JSON.parse(
      (await ctx.cluster.raw.must("GET", `/api/v1/namespaces/${CL_NAMESPACE}/services/${system}`))
        .body,
    ) as { spec?: { ports?: { port?: number }[] } };
    if (reply.status !== 202 || svc.spec?.ports?.[0]?.port !== port) {
      wrong.push(`${name}: reply ${reply.status}, Service port ${svc.spec?.ports?.[0]?.port}`);
    }
  }
  const p = percentiles(samples);
  const avg = api.reduce((a, b) => a + b, 0) / Math.max(1, api.length);
  return {
    id: "clusterlink-import-change",
    metric: `clusterlink-import: Import port edited -> its update event -> system Service updated (${events} events)`,
    target: "p50 <= 15 ms, p99 <= 50 ms",
    measured: `p50 ${ms(p.p50)} / p99 ${ms(p.p99)} (max ${ms(p.max)})`,
    counts: `per event: ${num(avg)} API requests (${kube.tally.describe(events)})`,
    checks: [atMost("p50", p.p50, 15), atMost("p99", p.p99, 50)],
    values: { events, p50Ms: p.p50, p99Ms: p.p99, apiPerEvent: avg },
    ...(wrong.length > 0 ? { error: `${wrong.length} not updated (first: ${wrong[0]})` } : {}),
  };
}

async function benchHeartbeats(ctx: BenchContext): Promise<RowResult> {
  const count = ctx.quick ? 30 : 100;
  const silentEvery = 10;
  await ensureNamespace(ctx, CL_NAMESPACE);
  const names = Array.from({ length: count }, (_, i) => `peer-${String(i).padStart(3, "0")}`);
  const silent = new Set(names.filter((_, i) => i % silentEvery === silentEvery - 1));
  const fleet = await PeerGatewayFleet.start({
    dir: path.join(ctx.workDir, "peer-gateways"),
    peers: names.map((name) => ({
      name,
      labels: { region: name },
      mode: silent.has(name) ? { mode: "silent" as const } : { mode: "healthy" as const },
    })),
  });
  const limit = pLimit(DELIVERY_CONCURRENCY);
  await Promise.all(
    names.map((name) =>
      limit(() =>
        ctx.cluster.raw.must("POST", `${API}/namespaces/${CL_NAMESPACE}/peers`, {
          apiVersion: "clusterlink.net/v1alpha1",
          kind: "Peer",
          metadata: { name },
          spec: fleet.peerSpec(name),
        }),
      ),
    ),
  );
  const kube = new RecordingKube(ctx.cluster.adminClient());
  const env = {
    CL_NAMESPACE,
    CL_PEER_TLS_DIR: fleet.identityDir,
    CL_HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS),
  };
  const server = await serveInProcess(
    [createClusterLinkPeerHealth({ kube: () => kube, env })],
    path.join(ctx.workDir, "clusterlink-peer-health.log"),
  );
  try {
    const url = `${server.url}/clusterlink-peer-health`;
    const first = performance.now();
    const reply = await postResync(url);
    const firstMs = performance.now() - first;
    const tally = kube.tally.describe();
    kube.tally.reset();
    const second = performance.now();
    await postResync(url);
    const secondMs = performance.now() - second;
    const peers = await listItems(ctx, `${API}/namespaces/${CL_NAMESPACE}/peers`);
    const wrong = peers.filter(
      (p) => (conditionOf(p, "PeerReachable") === "True") === silent.has(p.metadata.name),
    );
    const held = fleet.gateway([...silent][0] ?? "").counters.maxSilentHeld;
    return {
      id: "clusterlink-heartbeats",
      metric: `clusterlink-peer-health: ${count} Peers heartbeaten in one resync, ${silent.size} of their gateways silent (timeout ${ms(HEARTBEAT_TIMEOUT_MS)})`,
      target: "<= 2 s",
      measured: `${ms(firstMs)} (every status written); ${ms(secondMs)} the next resync`,
      counts: `${reply.calls.api} API requests (${tally}); each silent gateway held its probe for one timeout, all at once`,
      checks: [atMost("time", firstMs, 2_000)],
      values: { peers: count, silent: silent.size, ms: firstMs, nextMs: secondMs, held },
      ...(reply.status !== 202
        ? { error: `reply ${reply.status} ${reply.detail}` }
        : wrong.length > 0
          ? {
              error: `${wrong.length} Peers with the wrong PeerReachable (first: ${wrong[0]?.metadata.name})`,
            }
          : {}),
    };
  } finally {
    await server.close();
    await fleet.close();
  }
}

export async function benchClusterLink(
  ctx: BenchContext,
  wanted: (id: string) => boolean,
): Promise<RowResult[]> {
  const rows: RowResult[] = [];
  if (wanted("clusterlink-imports") || wanted("clusterlink-import-change")) {
    rows.push(...(await benchImports(ctx, wanted)));
  }
  if (wanted("clusterlink-heartbeats")) rows.push(await benchHeartbeats(ctx));
  return rows;
}
