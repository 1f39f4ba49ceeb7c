/**
 * Observation for rule sync: reads the CNF Deployment of a (namespace, purpose), its pods and
 * the rule CRs from the API server, and turns them into the views the pure planners take.
 * Reads only; decides nothing beyond "which Deployment, which pods" (plan-pods.ts).
 */
import {
  ALL_RULE_KINDS,
  PURPOSE_LABEL,
  RuleError,
  networkMapOfDeployment,
  requireKind,
  type NetworkInterfaceMap,
  type RuleCr,
} from "../rules/index.js";
import {
  DEPLOYMENTS,
  PODS,
  ruleResource,
  type Deployment,
  type KubeClient,
  type KubeObject,
  type Pod,
} from "../kube/index.js";
import { planCnfPods, type CnfPods, type PodView } from "./plan-pods.js";
import type { CnfSituation } from "./plan-status.js";

/** Where a set of rules belongs: the CNF Deployment labelled with `purpose` in `namespace`. */
export interface CnfScope {
  readonly namespace: string;
  readonly purpose: string;
}

export interface CnfObservation {
  readonly situation: CnfSituation;
  readonly deployment: Deployment | undefined;
  readonly pods: CnfPods;
  /** The nfn-network map, or why the annotation could not be read. */
  readonly networks: NetworkInterfaceMap | RuleError;
}

const NO_PODS: CnfPods = { ready: [], expected: 0 };

export function podView(pod: Pod): PodView {
  const ready = pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True");
  return {
    name: pod.metadata.name,
    labels: pod.metadata.labels ?? {},
    owners: pod.metadata.ownerReferences ?? [],
    terminating: pod.metadata.deletionTimestamp !== undefined,
    phase: pod.status?.phase,
    podIP: pod.status?.podIP,
    ready: ready === true,
  };
}

function networksOf(deployment: Deployment): NetworkInterfaceMap | RuleError {
  try {
    return networkMapOfDeployment(deployment);
  } catch (err) {
    if (err instanceof RuleError) return err;
    throw err;
  }
}

/** Finds the CNF of `scope` among already-listed Deployments of that namespace. */
export function situationOf(scope: CnfScope, deployments: readonly Deployment[]): CnfSituation {
  const matching = deployments.filter(
    (d) => d.metadata.labels?.[PURPOSE_LABEL] === scope.purpose && !d.metadata.deletionTimestamp,
  );
  if (matching.length === 0) return { kind: "none", ...scope };
  if (matching.length > 1) {
    return { kind: "conflict", deployments: matching.map((d) => d.metadata.name).sort() };
  }
  const deployment = matching[0] as Deployment;
  return { kind: "found", deployment: deployment.metadata.name, readyPods: 0, expectedPods: 0 };
}

/** Reads the CNF Deployment of `scope` and its pods (two list calls). */
export async function observeCnf(kube: KubeClient, scope: CnfScope): Promise<CnfObservation> {
  const deployments = await kube.list(DEPLOYMENTS, {
    namespace: scope.namespace,
    labelSelector: { [PURPOSE_LABEL]: scope.purpose },
  });
  return observeCnfOf(kube, scope, deployments);
}

/** Like observeCnf, for Deployments already listed (a resync lists them once for all CNFs). */
export async function observeCnfOf(
  kube: KubeClient,
  scope: CnfScope,
  deployments: readonly Deployment[],
): Promise<CnfObservation> {
  const situation = situationOf(scope, deployments);
  if (situation.kind !== "found") {
    return { situation, deployment: undefined, pods: NO_PODS, networks: new Map() };
  }
  const deployment = deployments.find(
    (d) => d.metadata.name === situation.deployment,
  ) as Deployment;
  const pods = await kube.list(PODS, {
    namespace: scope.namespace,
    labelSelector: deployment.spec.selector,
  });
  const cnfPods = planCnfPods(
    { name: deployment.metadata.name, replicas: deployment.spec.replicas },
    pods.map(podView),
  );
  return {
    situation: { ...situation, readyPods: cnfPods.ready.length, expectedPods: cnfPods.expected },
    deployment,
    pods: cnfPods,
    networks: networksOf(deployment),
  };
}

/** A rule CR read from the API server: parsed, or kept raw with why it does not parse. */
export type ObservedRuleCr =
  | { readonly ok: true; readonly cr: RuleCr }
  | {
      readonly ok: false;
      readonly raw: KubeObject;
      readonly code: string;
      readonly message: string;
    };

export function parseRuleObject(raw: KubeObject): ObservedRuleCr {
  const parsed = requireKind(raw.kind).parseCr(raw);
  if (!parsed.ok) return { ok: false, raw, code: "InvalidSpec", message: parsed.message };
  if (parsed.value.metadata.labels?.[PURPOSE_LABEL] === undefined) {
    const message = `label ${PURPOSE_LABEL} is missing: set it to the purpose of the CNF Deployment this rule belongs to`;
    return { ok: false, raw, code: "MissingPurpose", message };
  }
  return { ok: true, cr: parsed.value };
}

/** Every rule of every kind labelled with `scope.purpose` in `scope.namespace` (one list per kind). */
export async function listRulesOfScope(
  kube: KubeClient,
  scope: CnfScope,
): Promise<ObservedRuleCr[]> {
  const lists = await Promise.all(
    ALL_RULE_KINDS.map((entry) =>
      kube.list(ruleResource(entry), {
        namespace: scope.namespace,
        labelSelector: { [PURPOSE_LABEL]: scope.purpose },
      }),
    ),
  );
  return lists.flat().map(parseRuleObject);
}
