/**
 * Which pods count for a CNF (DESIGN.md section 4), decided purely from the Deployment and the
 * pods listed with its selector. Rollout-safe: pods of old and new ReplicaSets both count, so a
 * rollout never makes reconcile fail (upstream demanded exactly one ReplicaSet).
 */
import { compareStrings } from "../core/order.js";

/** The parts of a Deployment this decision reads. */
export interface DeploymentView {
  readonly name: string;
  readonly replicas: number | undefined;
}

/** The parts of a Pod this decision reads. */
export interface PodView {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly owners: readonly {
    readonly kind: string;
    readonly name: string;
    readonly controller?: boolean;
  }[];
  readonly terminating: boolean;
  readonly phase: string | undefined;
  readonly podIP: string | undefined;
  readonly ready: boolean;
  /** When the pod last turned Ready (its Ready condition's lastTransitionTime), if known. */
  readonly readySince?: string;
}

export interface CnfPods {
  /** Pods that receive writes now. */
  readonly ready: readonly {
    readonly name: string;
    readonly ip: string;
    readonly readySince?: string;
  }[];
  /** How many ready pods make the CNF fully in sync. */
  readonly expected: number;
}

/**
 * A Deployment names its ReplicaSets "<deployment>-<pod-template-hash>" and stamps the hash on
 * their pods, so ownership is checked without listing ReplicaSets (one API call less per event).
 */
export function ownedByDeployment(deployment: string, pod: PodView): boolean {
  const hash = pod.labels["pod-template-hash"];
  if (hash === undefined) return false;
  return pod.owners.some(
    (o) => o.kind === "ReplicaSet" && o.controller === true && o.name === `${deployment}-${hash}`,
  );
}

function live(pod: PodView): boolean {
  return !pod.terminating && pod.phase !== "Succeeded" && pod.phase !== "Failed";
}

export function planCnfPods(deployment: DeploymentView, pods: readonly PodView[]): CnfPods {
  const owned = pods.filter((p) => ownedByDeployment(deployment.name, p) && live(p));
  const ready = owned
    .filter((p) => p.ready && p.podIP !== undefined && p.podIP !== "")
    .map((p) => ({
      name: p.name,
      ip: p.podIP as string,
      ...(p.readySince === undefined ? {} : { readySince: p.readySince }),
    }))
    .sort((a, b) => compareStrings(a.name, b.name));
  // During a rollout (surge) more pods than replicas may be live; each must hold the rules.
  const expected = Math.max(deployment.replicas ?? 1, owned.length);
  return { ready, expected };
}

/** A CNF as read from the API server's watch cache, which may be a few writes behind etcd. */
export interface CachedCnfView {
  /** Exactly one live CNF Deployment of the purpose was found. */
  readonly found: boolean;
  readonly pods: CnfPods;
  /** The Deployment's network annotation could be read. */
  readonly networksReadable: boolean;
}

/**
 * Whether reconcile-rule may act on a cached view without a consistent re-read. Only a view that
 * lets it write to every pod qualifies: if that view is stale, the Deployment or Pod change it
 * missed has its own on-deployment-ready event, which syncs this rule with consistent reads.
 * A view that would answer "no CNF", "waiting for pods" or "bad annotation" is confirmed first,
 * so no rule waits for a redelivery, or is stalled, on the strength of a stale read.
 */
export function cachedViewSuffices(view: CachedCnfView): boolean {
  return (
    view.found &&
    view.networksReadable &&
    view.pods.ready.length > 0 &&
    view.pods.ready.length >= view.pods.expected
  );
}
