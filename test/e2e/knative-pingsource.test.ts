// End to end with Knative's real PingSource adapter (mtping) as the only event source: the
// PingSource of manifests/knative (sdewan-resync in sdewan-system), its events routed by the
// Triggers of manifests/knative (the stand-in Broker of knative.ts, so the on-deployment-ready
// resync Trigger's type and source filters meet mtping's real attributes) to on-deployment-ready.
// No connector, no ApiServerSource adapter, no hand-made CloudEvent: the pings alone land the
// samples on both CNF pods, then heal both pods after their CNF lost every object silently (a CNF
// restart with no Pod event, which only the resync can notice).
//
// Two deviations from the manifest, both on the PingSource:
// - schedule every 2 s instead of every 5 minutes, so the test waits seconds. mtping's cron parser
//   and Knative's own PingSource validation both take an optional leading seconds field (Knative
//   refuses only `@every`); the test checks the changed object with Knative's validation too.
// - data `{"namespace": <the test's>}` instead of `{}` (every namespace): the control plane is
//   shared with the integration tests, whose CNFs a cluster-wide resync would touch.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { CNF_PORT_ANNOTATION } from "../../shared/cnf/index.js";
import { DEPLOYMENTS, PODS } from "../../shared/kube/index.js";
import { clusterInfo, endpoint, newNamespace } from "../integration/support/cluster.js";
import { KnativeAdapter, TriggerRouter, type Delivery } from "./knative.js";
import {
  createReadyPingSource,
  deletePingSource,
  installPingSourceSupport,
  manifestPingSource,
  mtpingAvailability,
  mtpingEnvironment,
} from "./ping-source.js";
import { SAMPLES, samplesConverged } from "./samples.js";
import { E2eWorld, waitFor, scenarioIt } from "./world.js";

const { binary, sources, skip } = mtpingAvailability();
if (skip !== undefined) console.warn(`Knative PingSource (mtping) e2e SKIPPED: ${skip}`);

const SCHEDULE = "*/2 * * * * *";
const PING_TYPE = "dev.knative.sources.ping";

let world: E2eWorld | undefined;
let router: TriggerRouter | undefined;
let mtping: KnativeAdapter | undefined;
let failed = false;
const source = manifestPingSource();
const timings: Record<string, number> = {};

const w = (): E2eWorld => {
  if (world === undefined) throw new Error("no world");
  return world;
};
const pings = (): Delivery[] => (router?.deliveries ?? []).filter((d) => d.type === PING_TYPE);

const scenario = scenarioIt(() => {
  failed = true;
}, 60_000);

/** The CNF simulators behind the test's CNF pods (Pod IP, the Deployment's CNF port). */
async function cnfPodUrls(): Promise<string[]> {
  const [deployment] = await w().kube.list(DEPLOYMENTS, { namespace: w().namespace });
  const port = deployment?.metadata.annotations?.[CNF_PORT_ANNOTATION];
  const pods = await w().kube.list(PODS, { namespace: w().namespace });
  return pods.map((p) => `http://${p.status?.podIP ?? "?"}:${port ?? "?"}`);
}

(skip === undefined ? describe : describe.skip)(
  "Knative's PingSource adapter (mtping) drives the resync",
  () => {
    beforeAll(async () => {
      const api = endpoint();
      const systemNamespace = await newNamespace("e2e-mtping-system");
      world = await E2eWorld.start(await newNamespace("e2e-mtping"), { connector: false });
      router = await TriggerRouter.start(w().functionsUrl, ["on-deployment-ready"]);
      await installPingSourceSupport(api, sources, systemNamespace);
      source.spec.schedule = SCHEDULE;
      source.spec.data = JSON.stringify({ namespace: w().namespace });
      await createReadyPingSource(api, source, `http://127.0.0.1:${router.port}/`);
      mtping = await KnativeAdapter.start({
        binary,
        kubeconfigPath: w().kubeconfig,
        apiServer: clusterInfo().server,
        sinkPort: router.port,
        env: mtpingEnvironment(systemNamespace),
      });
    }, 120_000);

    afterAll(async () => {
      await mtping?.stop(failed);
      await deletePingSource(endpoint(), source).catch(() => undefined);
      await router?.close();
      await world?.stop(failed);
      const sent = pings()
        .map((d) => d.sentAt)
        .sort((a, b) => a - b);
      const gaps = sent.slice(1).map((at, i) => at - (sent[i] ?? at));
      process.stderr.write(
        `mtping e2e timings (ms): ${JSON.stringify(timings)}; pings: ${pings().length}, gaps ${JSON.stringify(gaps)}\n`,
      );
    }, 60_000);

    it("the PingSource as configured here passes Knative's own validation (a seconds field is allowed)", () => {
      const validator = path.join(path.dirname(binary), "validate-manifests");
      const work = mkdtempSync(path.join(os.tmpdir(), "sdewan-mtping-"));
      try {
        const file = path.join(work, "pingsource.yaml");
        writeFileSync(file, stringify(source));
        const run = spawnSync(validator, [file], { encoding: "utf8", timeout: 60_000 });
        expect({ status: run.status, err: run.stderr }).toEqual({ status: 0, err: "" });
        expect(run.stdout).toMatch(/^ok .*PingSource\/sdewan-resync/m);
        // And `@every`, which mtping's parser would take, is what Knative refuses.
        writeFileSync(
          file,
          stringify({ ...source, spec: { ...source.spec, schedule: "@every 2s" } }),
        );
        expect(spawnSync(validator, [file], { encoding: "utf8" }).stdout).toMatch(/@every/);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    });

    scenario("the pings alone land the samples on both CNF pods", async () => {
      const from = Date.now();
      expect(await w().applySamples(SAMPLES)).toBe(6);
      timings["samplesByPing"] = await waitFor(
        "samples converged by the resync",
        () => samplesConverged(w()),
        30_000,
      );
      // A delivery is recorded when the function answers, after the CNF writes that made the
      // samples converge: wait for a ping since the apply to be answered 2xx (a resync is 202; on
      // a loaded machine one may answer 503 when a CNF login times out, and the next one is done).
      const delivered = () => pings().filter((d) => d.sentAt >= from);
      await waitFor("a ping since the apply answered 2xx", () =>
        Promise.resolve(delivered().some((d) => d.status < 300) ? undefined : "none yet"),
      );
      // Routed by the resync Trigger (its exact type and source filters matched mtping's
      // event), none refused (4xx).
      expect(new Set(delivered().map((d) => d.trigger))).toEqual(
        new Set(["on-deployment-ready-resync"]),
      );
      expect(delivered().filter((d) => d.status >= 400 && d.status < 500)).toEqual([]);
      expect(router?.unrouted).toEqual([]);
    });

    scenario("both pods' CNF wiped silently (no Pod event): the next ping heals them", async () => {
      await waitFor("samples in sync before the wipe", () => samplesConverged(w()));
      const urls = await cnfPodUrls();
      expect(urls).toHaveLength(2);
      const wipedAt = Date.now();
      for (const url of urls) {
        const res = await fetch(`${url}/_sim/restart`, { method: "POST" });
        expect(res.ok).toBe(true);
      }
      // The wipe took: the samples are gone from the CNF (checked before the next tick can
      // heal it: a tick is 2 s, this read a few ms).
      expect(await samplesConverged(w())).toBeDefined();
      timings["healByPing"] = await waitFor(
        "samples healed by the next ping",
        () => samplesConverged(w()),
        30_000,
        20,
      );
      const healedAt = Date.now();
      // The ping that healed them was sent after the wipe and before the heal; its delivery is
      // recorded when the function's answer comes (after the CNF writes the heal is seen by).
      const healing = () => pings().filter((d) => d.sentAt >= wipedAt && d.sentAt <= healedAt);
      await waitFor("the healing ping's answer", () =>
        Promise.resolve(healing().length > 0 ? undefined : "no ping answered"),
      );
      // Routed by the resync Trigger, none refused (4xx)...
      expect(new Set(healing().map((d) => d.trigger))).toEqual(
        new Set(["on-deployment-ready-resync"]),
      );
      expect(healing().filter((d) => d.status >= 400 && d.status < 500)).toEqual([]);
      // ... and the resync settles: a ping since the wipe answered 2xx (on a loaded machine the
      // one that healed may still have answered 503 for a slow CNF login; the next one is done).
      await waitFor("a ping since the wipe answered 2xx", () =>
        Promise.resolve(
          pings().some((d) => d.sentAt >= wipedAt && d.status < 300) ? undefined : "none yet",
        ),
      );
      timings["wipeToPing"] = Math.min(...healing().map((d) => d.sentAt)) - wipedAt;
    });
  },
);
