// A converged system at rest stays at rest (issue 24): the whole system as a user runs it (a
// control plane of its own with an audit log, the shipped RBAC identities, every function, the
// webhook, CNF simulators, peer gateway simulators; dev/demo/system.ts), every kind of object
// applied and converged, then 60 s with nothing changing. Each function may handle only its
// resyncs in that minute, and our identities may write nothing (the audit log of the API server
// says, not our own counters). Twice: through the connector with the shipped configuration
// (every resync shortened to 10 s so the minute holds several, the heartbeat tick at its shipped
// 1 s), and through Knative's real ApiServerSource adapters for every source of manifests/knative
// plus the real PingSource adapter (mtping) firing both shipped PingSources.
import { parseAllDocuments } from "yaml";
import { readFileSync } from "node:fs";
import path from "node:path";
import { repoRoot } from "../../dev/control-plane/binaries.js";
import { auditArgs, isWrite, measureAtRest, type FunctionWork } from "../../dev/demo/at-rest.js";
import { RunningSystem, SERVED_FUNCTIONS } from "../../dev/demo/system.js";
import { NETPOL_ENDPOINTS } from "../../shared/kube/index.js";
import {
  KnativeAdapter,
  TriggerRouter,
  adapterAvailability,
  adapterEnvironment,
} from "./knative.js";
import {
  createReadyPingSource,
  installPingSourceSupport,
  manifestPingSources,
  mtpingAvailability,
  mtpingEnvironment,
} from "./ping-source.js";
import { waitFor } from "./world.js";

const REST_SECONDS = 60;
const quietLog = (): void => undefined;

/** Every object converged: rules on both pods, the EgressGroup, netpol tables, ClusterLink. */
async function converge(system: RunningSystem): Promise<void> {
  const cluster = system.demoCluster();
  await system.applySamples();
  await system.applyNetworkPolicy();
  const clusterLink = await system.applyClusterLink();
  await cluster.waitConverged(system.namespace, 180_000, quietLog);
  await waitFor(
    "ClusterLink converged",
    async () => (await clusterLink.pending()) ?? undefined,
    120_000,
    250,
  );
  await waitFor(
    "netpol tables for the web Pods",
    async () => {
      const tables = await cluster.kube.list(NETPOL_ENDPOINTS, { namespace: system.shopNamespace });
      return tables.length >= 2 ? undefined : `${tables.length} NetworkPolicyEndpoints`;
    },
    120_000,
    250,
  );
}

/**
 * Every event a function handled was a resync, and no more resyncs came than its period allows
 * in `seconds` (10 s; the heartbeat tick 1 s): a bound a runaway would break.
 */
function expectOnlyResyncs(work: ReadonlyMap<string, FunctionWork>, seconds: number): void {
  const extra = [...work]
    .filter(([, w]) => w.events !== w.resyncs)
    .map(([fn, w]) => `${fn}: ${w.events - w.resyncs} events that are not resyncs`);
  expect(extra).toEqual([]);
  for (const [fn, w] of work) {
    const period = fn === "clusterlink-peer-health" ? 1 : 10;
    expect([fn, w.resyncs <= Math.ceil(seconds / period) + 2]).toEqual([fn, true]);
  }
}

describe("a converged system at rest, through the connector", () => {
  const system = new RunningSystem(quietLog);
  let failed = false;

  beforeAll(async () => {
    await system.start({
      say: quietLog,
      eventSource: "connector",
      resync: (route, shipped) => (route === "clusterlink-peer-health" ? shipped : "10s"),
      apiserverArgs: auditArgs,
    });
    await converge(system);
  }, 300_000);

  afterAll(() => system.stop(failed), 60_000);

  it(`handles only resyncs for ${REST_SECONDS} s and writes nothing`, async () => {
    try {
      const { work, requests, seconds, report } = await measureAtRest(system, REST_SECONDS);
      process.stderr.write(`${report}\n`);
      expectOnlyResyncs(work, seconds);
      expect(requests.filter(isWrite)).toEqual([]);
    } catch (error) {
      failed = true;
      throw error;
    }
  }, 300_000);
});

const { binary: mtpingBinary, sources: knativeSources, skip } = mtpingAvailability();
if (skip !== undefined) console.warn(`at rest through Knative's adapters SKIPPED: ${skip}`);

/** The ApiServerSources of manifests/knative, by name. */
const apiServerSources = (): string[] =>
  parseAllDocuments(
    readFileSync(path.join(repoRoot, "manifests/knative/apiserversources.yaml"), "utf8"),
  )
    .map((d) => d.toJS() as { kind?: string; metadata?: { name?: string } } | null)
    .filter((d) => d?.kind === "ApiServerSource")
    .map((d) => d?.metadata?.name ?? "");

(skip === undefined ? describe : describe.skip)(
  "a converged system at rest, through Knative's ApiServerSource and PingSource adapters",
  () => {
    const system = new RunningSystem(quietLog);
    const adapters: KnativeAdapter[] = [];
    let router: TriggerRouter | undefined;
    let failed = false;

    beforeAll(async () => {
      await system.start({ say: quietLog, eventSource: "none", apiserverArgs: auditArgs });
      const cp = system.controlPlane;
      if (cp === undefined) throw new Error("no control plane");
      router = await TriggerRouter.start(system.functionsUrl, SERVED_FUNCTIONS);
      const sink = router.port;
      // Every ApiServerSource of the manifests, as its own identity, over every namespace.
      for (const name of apiServerSources()) {
        adapters.push(
          await KnativeAdapter.start({
            binary: adapterAvailability().binary,
            kubeconfigPath: system.identities?.sources ?? "",
            apiServer: cp.server,
            sinkPort: sink,
            env: adapterEnvironment(name, null),
          }),
        );
      }
      // Both PingSources; the resync every 10 s (shipped: 5 min) so the minute holds several.
      const api = cp.endpoint();
      await system.demoCluster().createNamespace("knative-eventing");
      await installPingSourceSupport(api, knativeSources, "knative-eventing");
      for (const source of manifestPingSources()) {
        if (source.metadata.name === "sdewan-resync") source.spec.schedule = "*/10 * * * * *";
        await createReadyPingSource(api, source, `http://127.0.0.1:${sink}/`);
      }
      adapters.push(
        await KnativeAdapter.start({
          binary: mtpingBinary,
          kubeconfigPath: cp.kubeconfigPath,
          apiServer: cp.server,
          sinkPort: sink,
          env: mtpingEnvironment("knative-eventing"),
        }),
      );
      await converge(system);
    }, 300_000);

    afterAll(async () => {
      for (const adapter of adapters) await adapter.stop(failed);
      await router?.close();
      await system.stop(failed);
    }, 60_000);

    it(`handles only the pings for ${REST_SECONDS} s and writes nothing`, async () => {
      try {
        const { work, requests, seconds, report } = await measureAtRest(system, REST_SECONDS);
        process.stderr.write(`through Knative's adapters, ${report}\n`);
        expectOnlyResyncs(work, seconds);
        // The heartbeat tick really came every second (Knative's cron with seconds).
        expect(work.get("clusterlink-peer-health")?.resyncs).toBeGreaterThanOrEqual(seconds - 5);
        expect(requests.filter(isWrite)).toEqual([]);
      } catch (error) {
        failed = true;
        throw error;
      }
    }, 300_000);
  },
);
