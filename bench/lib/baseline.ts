/**
 * The floor under every row: how long one API request takes on this machine right now, over a
 * kept-alive TLS connection, over a new TLS connection each time, and through shared/kube (what
 * the functions use). A row's time is roughly its sequential requests times one of these.
 */
import https from "node:https";
import { NAMESPACES } from "../../shared/kube/index.js";
import type { BenchCluster } from "./cluster.js";
import { percentiles } from "./stats.js";

export interface Baseline {
  readonly keepAliveP50Ms: number;
  readonly newConnectionP50Ms: number;
  readonly sharedKubeP50Ms: number;
  readonly sharedKubeP99Ms: number;
}

function rawGet(cluster: BenchCluster, agent: https.Agent): Promise<void> {
  const url = new URL("/api/v1/namespaces/default", cluster.plane.server);
  return new Promise((resolve, reject) => {
    const req = https.request(
      url,
      { agent, headers: { authorization: `Bearer ${cluster.plane.admin.token}` } },
      (res) => {
        res.resume();
        res.on("end", () => resolve());
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end();
  });
}

async function sample(n: number, work: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n; i += 1) {
    const started = performance.now();
    await work();
    samples.push(performance.now() - started);
  }
  return samples;
}

export async function measureBaseline(cluster: BenchCluster, n = 100): Promise<Baseline> {
  const ca = cluster.plane.caPem;
  const keepAlive = new https.Agent({ keepAlive: true, ca });
  await sample(10, () => rawGet(cluster, keepAlive)); // warm-up
  const kept = percentiles(await sample(n, () => rawGet(cluster, keepAlive)));
  keepAlive.destroy();
  const fresh = percentiles(
    await sample(n / 2, async () => {
      const agent = new https.Agent({ keepAlive: false, ca });
      await rawGet(cluster, agent);
      agent.destroy();
    }),
  );
  const kube = cluster.adminClient();
  const viaKube = percentiles(await sample(n, () => kube.get(NAMESPACES, { name: "default" })));
  return {
    keepAliveP50Ms: kept.p50,
    newConnectionP50Ms: fresh.p50,
    sharedKubeP50Ms: viaKube.p50,
    sharedKubeP99Ms: viaKube.p99,
  };
}
