/**
 * Our side of the peer rows, deployed the way the issue measured it: the connector (watches ->
 * CloudEvents, its default delivery settings) and the function server (reconcile-rule and
 * on-deployment-ready) as child processes run from source, on the bench's control plane, against
 * a CNF of two pods. The connector watches only this namespace and purpose, so the objects other
 * rows left behind stay out of it. API requests: the function server's sdewan_api_calls_total
 * (the connector's own list and watch requests are made before a row starts); retries: the
 * connector's redeliveries (sdewan_connector_events_retried_total).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";
import { CnfFleet } from "../../../dev/world/index.js";
import { PURPOSE_LABEL } from "../../../shared/kinds/index.js";
import { metricSum, startConnector } from "../../soak/fleet.js";
import { freePort, spawnFunctionServer, waitReady } from "../child.js";
import type { BenchContext } from "../context.js";
import { PEER_KINDS, type ListedRule } from "./rules.js";
import { writeDeploymentStatus, type PeerWorld } from "./world.js";

const FUNCTIONS = "reconcile-rule,on-deployment-ready";

/** The connector's routes for the two rule functions, over `namespaces`, objects matching `selector`. */
export function connectorConfig(options: {
  readonly port: number;
  readonly namespaces: readonly string[];
  readonly selector: string;
  readonly reconcileUrl: string;
  readonly deploymentUrl: string;
}): string {
  const { selector } = options;
  const namespaces = [...options.namespaces];
  return stringify({
    http: { host: "127.0.0.1", port: options.port },
    routes: [
      {
        name: "reconcile-rule",
        url: options.reconcileUrl,
        resources: PEER_KINDS.map(({ kind }) => ({
          apiVersion: "batch.sdewan.akraino.org/v1alpha1",
          kind,
          selector,
          namespaces,
        })),
      },
      {
        name: "on-deployment-ready",
        url: options.deploymentUrl,
        resources: [
          { apiVersion: "apps/v1", kind: "Deployment", selector, namespaces },
          { apiVersion: "v1", kind: "Pod", selector, namespaces },
        ],
      },
    ],
  });
}

export async function startOurWorld(ctx: BenchContext, purpose: string): Promise<PeerWorld> {
  const namespace = await ctx.cluster.namespace("peer-ours");
  const kube = ctx.cluster.adminClient();
  const fleet = new CnfFleet(kube);
  const cnf = await fleet.createCnf(purpose, { namespace, pods: 2 });
  await writeDeploymentStatus(kube, cnf, cnf.pods.length);
  const env = {
    KUBECONFIG: ctx.cluster.kubeconfigPath,
    LOG_LEVEL: process.env["SDEWAN_BENCH_PEER_LOG_LEVEL"] ?? "warn",
  };
  const functions = await spawnFunctionServer({
    logFile: path.join(ctx.workDir, "peer-functions.log"),
    // As stack.yml ships it (the connector redelivers): restarts paced per burst (ADR 0007).
    // Its own state (prune ledgers, CNF sync Leases, ADR 0008) in the row's namespace, which
    // stands in for sdewan-prune-ledgers.
    env: {
      ...env,
      FUNCTIONS,
      CNF_RESTART_MIN_INTERVAL_MS: "10000",
      PRUNE_LEDGER_NAMESPACE: namespace,
    },
  });
  const stops: (() => Promise<unknown>)[] = [() => functions.stop(), () => fleet.close()];
  const close = async (): Promise<void> => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
  };
  try {
    await waitReady(`${functions.url}/_/ready`, "the function server", 180_000);
    const port = await freePort();
    const configFile = path.join(ctx.workDir, "peer-connector.yaml");
    await writeFile(
      configFile,
      connectorConfig({
        port,
        namespaces: [namespace],
        selector: `${PURPOSE_LABEL}=${purpose}`,
        reconcileUrl: `${functions.url}/reconcile-rule`,
        deploymentUrl: `${functions.url}/on-deployment-ready`,
      }),
    );
    const connector = await startConnector(ctx.workDir, configFile, port, env);
    stops.push(() => connector.proc.stop());
    const metric = async (url: string, name: string): Promise<number> =>
      metricSum(await (await fetch(url)).text(), name);
    return {
      label: "ours",
      namespace,
      purpose,
      cnf,
      fleet,
      raw: ctx.cluster.raw,
      kube,
      isApplied: (rule: ListedRule) =>
        rule.status?.["inSync"] === true &&
        rule.status["appliedGeneration"] === rule.metadata.generation,
      apiRequests: () => metric(`${functions.url}/metrics`, "sdewan_api_calls_total"),
      retries: () => metric(connector.metricsUrl, "sdewan_connector_events_retried_total"),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
