/**
 * What the peer rows need of a controller under test (ours or upstream): a CNF of two pods on
 * its own control plane, an admin client to act as the user and the kubelet, how it says a rule
 * is applied, and how many API requests it has made so far (its own counter: controller-runtime's
 * rest_client_requests_total upstream, sdewan_api_calls_total ours).
 */
import { DEPLOYMENTS, type KubeClient } from "../../../shared/kube/index.js";
import type { Cnf, CnfFleet, CnfPod } from "../../../dev/world/index.js";
import type { RawApi } from "../raw-api.js";
import type { ListedRule } from "./rules.js";

export interface PeerWorld {
  readonly label: string;
  readonly namespace: string;
  /** sdewanPurpose of the CNF and of every rule. */
  readonly purpose: string;
  readonly cnf: Cnf;
  readonly fleet: CnfFleet;
  /** Admin requests to the controller's control plane (the user's creates and deletes). */
  readonly raw: RawApi;
  readonly kube: KubeClient;
  /** Whether the controller says this rule's current generation is applied. */
  isApplied(rule: ListedRule): boolean;
  /** API requests the controller has made since it started. */
  apiRequests(): Promise<number>;
  /**
   * Work it put off to try again since it started: events the connector redelivers (ours),
   * reconciles ending in an error or a requeue (upstream).
   */
  retries(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The Deployment status a Deployment controller would write for `available` of `replicas` pods:
 * upstream reconciles every rule of a CNF when availableReplicas or unavailableReplicas change
 * (its only CNF trigger), ours watches Deployments too. No controller-manager runs here, so the
 * bench writes it, for both controllers alike.
 */
export async function writeDeploymentStatus(
  kube: KubeClient,
  cnf: Cnf,
  available: number,
): Promise<void> {
  const replicas = cnf.pods.length;
  await kube.patchStatus(
    DEPLOYMENTS,
    { namespace: cnf.namespace, name: cnf.name },
    {
      observedGeneration: 1,
      replicas,
      updatedReplicas: replicas,
      readyReplicas: available,
      availableReplicas: available,
      unavailableReplicas: replicas - available,
    },
  );
}

/**
 * A container restart as a cluster reports it: the CNF loses its state, the pod turns not ready
 * and the Deployment counts one pod unavailable, then both recover.
 */
export async function restartCnfPod(world: PeerWorld, pod: CnfPod): Promise<void> {
  const n = world.cnf.pods.length;
  await world.fleet.crashPod(pod);
  await writeDeploymentStatus(world.kube, world.cnf, n - 1);
  await world.fleet.setPodReady(pod, true);
  await writeDeploymentStatus(world.kube, world.cnf, n);
}

/** CNF requests and service restarts the CNF's pods handled since their counters were reset. */
export function cnfWork(cnf: Cnf): { requests: number; restarts: number } {
  let requests = 0;
  let restarts = 0;
  for (const pod of cnf.pods) {
    const c = pod.sim.counters();
    const collections = Object.values(c.collections).reduce((s, x) => s + x.reads + x.writes, 0);
    requests += c.logins + c.serviceActions + collections;
    restarts += c.serviceActions;
  }
  return { requests, restarts };
}
