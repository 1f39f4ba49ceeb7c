/**
 * Observation for rule sync: reads the CNF Deployment of a (namespace, purpose), its pods and
 * the rule CRs from the API server, and turns them into the views the pure planners take.
 * Reads only; decides nothing beyond "which Deployment, which pods" (plan-pods.ts). A rule
 * event's CNF is read from the API server's watch cache when that is safe (ADR 0004).
 */
import {
  ALL_RULE_KINDS,
  PURPOSE_LABEL,
  RuleError,
  isRuleKind,
  kindsReferencing,
  networkMapOfDeployment,
  type NetworkInterfaceMap,
} from "../kinds/index.js";
import {
  formatLabelSelector,
  isKubeError,
  readOptions,
  ruleResource,
  type Deployment,
  type KubeObject,
  type ObjectKey,
  type Pod,
  type ReadFreshness,
  type ResourceType,
} from "../kube/index.js";
import { cachedViewSuffices, planCnfPods, type CnfPods, type PodView } from "./plan-pods.js";
import { referrersOf } from "./plan-rules.js";
import { RecentCnfLists, type CnfLists } from "./recent-cnf-lists.js";
import type { CnfSituation } from "./plan-status.js";
import {
  parseRuleObject,
  type CnfObservation,
  type CnfScope,
  type ObservedRuleCr,
} from "./observed.js";

export {
  parseRuleObject,
  type CnfObservation,
  type CnfScope,
  type ObservedRuleCr,
} from "./observed.js";
import type { SyncStore } from "./store.js";

const NO_PODS: CnfPods = { ready: [], expected: 0 };

export function podView(pod: Pod): PodView {
  const condition = pod.status?.conditions?.find((c) => c.type === "Ready");
  const ready = condition?.status === "True";
  const since = condition?.lastTransitionTime;
  return {
    name: pod.metadata.name,
    labels: pod.metadata.labels ?? {},
    owners: pod.metadata.ownerReferences ?? [],
    terminating: pod.metadata.deletionTimestamp !== undefined,
    phase: pod.status?.phase,
    podIP: pod.status?.podIP,
    ready,
    ...(ready && typeof since === "string" ? { readySince: since } : {}),
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

/**
 * Reads the CNF Deployment of `scope` and its pods (two list calls), consistently unless
 * `freshness` says the watch cache will do (a preview, which acts on nothing it reads).
 */
export async function observeCnf(
  store: SyncStore,
  scope: CnfScope,
  freshness: ReadFreshness = "consistent",
): Promise<CnfObservation> {
  const deployments = await store.listDeployments({
    namespace: scope.namespace,
    labelSelector: { [PURPOSE_LABEL]: scope.purpose },
    ...readOptions(freshness),
  });
  return observeCnfOf(store, scope, deployments, freshness);
}

/** Like observeCnf, for Deployments already listed (a resync lists them once for all CNFs). */
export async function observeCnfOf(
  store: SyncStore,
  scope: CnfScope,
  deployments: readonly Deployment[],
  freshness: ReadFreshness = "consistent",
): Promise<CnfObservation> {
  const found = foundDeployment(scope, deployments);
  if (!found.found) return found.absent;
  const pods = await store.listPods({
    namespace: scope.namespace,
    labelSelector: found.deployment.spec.selector,
    ...readOptions(freshness),
  });
  return observationOf(found.situation, found.deployment, pods);
}

type FoundDeployment =
  | {
      readonly found: true;
      readonly situation: CnfSituation & { kind: "found" };
      readonly deployment: Deployment;
    }
  | { readonly found: false; readonly absent: CnfObservation };

/** The CNF Deployment of `scope` among `deployments`, or the observation of its absence. */
function foundDeployment(scope: CnfScope, deployments: readonly Deployment[]): FoundDeployment {
  const situation = situationOf(scope, deployments);
  if (situation.kind !== "found") {
    const absent = { situation, deployment: undefined, pods: NO_PODS, networks: new Map() };
    return { found: false, absent };
  }
  const deployment = deployments.find(
    (d) => d.metadata.name === situation.deployment,
  ) as Deployment;
  return { found: true, situation, deployment };
}

function observationOf(
  situation: CnfSituation & { kind: "found" },
  deployment: Deployment,
  pods: readonly Pod[],
): CnfObservation {
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

/**
 * The Pod selector of each CNF Deployment seen, per namespace and purpose, kept per process and
 * safe to lose: the selector a rule event's Pod list is started with before its Deployment has
 * been read. A guess is used only when the Deployment then found has exactly that selector.
 */
class PodSelectorGuesses {
  private static readonly MAX_NAMESPACES = 4096;
  private readonly byNamespace = new Map<string, Map<string, string>>();

  /** The selector of the namespace's only known CNF; none when it has several or none. */
  guess(namespace: string): string | undefined {
    const selectors = this.byNamespace.get(namespace);
    if (selectors?.size !== 1) return undefined;
    return selectors.values().next().value;
  }

  remember(scope: CnfScope, selector: string | undefined): void {
    let selectors = this.byNamespace.get(scope.namespace);
    if (selector === undefined) {
      selectors?.delete(scope.purpose);
      if (selectors?.size === 0) this.byNamespace.delete(scope.namespace);
      return;
    }
    if (selectors === undefined) {
      // Forget the namespace noted first: a lost guess costs one sequential Pod list.
      if (this.byNamespace.size >= PodSelectorGuesses.MAX_NAMESPACES) {
        const oldest = this.byNamespace.keys().next().value;
        if (oldest !== undefined) this.byNamespace.delete(oldest);
      }
      selectors = new Map();
      this.byNamespace.set(scope.namespace, selectors);
    }
    selectors.set(scope.purpose, selector);
  }
}

const podSelectorGuesses = new PodSelectorGuesses();

/** A rule a reconcile-rule event names, and its CNF. */
export interface RuleAndCnf {
  readonly raw: KubeObject;
  readonly observation: CnfObservation;
  readonly echo?: false;
}

/** The rule as read is the echo of this process's own write (`isEcho`): its CNF was not needed. */
export interface RuleEcho {
  readonly raw: KubeObject;
  readonly echo: true;
}

/** "From the watch cache": served as the API server's cache holds it, without waiting. */
const FROM_CACHE = readOptions("cached");

/**
 * Reads the rule `key` and its CNF for reconcile-rule; undefined when the rule does not exist.
 * The rule is read consistently (its change is the event). The Deployments (every CNF of the
 * namespace; the rule's purpose is not known yet) and the Pods (by the selector last seen for
 * the namespace's CNF) are read at the same time from the API server's watch cache: a
 * consistent list made right after a write waits for that cache to catch up, which costs more
 * than the rest of the event. In a burst of rule events (lists of the namespace begun lately),
 * the rule is read first, and lists another event began since this one began are taken rather
 * than read again: they are as fresh (ADR 0020). The cached view is acted on only when
 * cachedViewSuffices says so; otherwise the CNF is read again, consistently.
 */
export async function observeRuleAndCnf(
  store: SyncStore,
  type: ResourceType,
  key: ObjectKey & { readonly namespace: string },
  /** Asked once about the rule as read; true: answered as an echo, the CNF left unread. */
  isEcho: (raw: KubeObject) => boolean = () => false,
): Promise<RuleAndCnf | RuleEcho | undefined> {
  const { namespace } = key;
  const read = await readRuleAndLists(store, type, key, isEcho);
  // Deleted (and released) before we got here: the finalizer path already cleaned the CNF.
  if (read === undefined) return undefined;
  if (read.lists === undefined) return { raw: read.raw, echo: true };
  const { raw, lists } = read;
  const purpose = raw.metadata.labels?.[PURPOSE_LABEL];
  if (purpose === undefined) return { raw, observation: noCnf(namespace) };
  const scope = { namespace, purpose };
  const found = foundDeployment(scope, lists.deployments);
  const selector = found.found ? formatLabelSelector(found.deployment.spec.selector) : undefined;
  podSelectorGuesses.remember(scope, selector);
  if (!found.found) {
    recentCnfLists.forget(namespace);
    return { raw, observation: await observeCnf(store, scope) };
  }
  const pods = await podsOf(store, namespace, lists, selector);
  const cached = observationOf(found.situation, found.deployment, pods);
  const suffices = cachedViewSuffices({
    found: true,
    pods: cached.pods,
    networksReadable: !(cached.networks instanceof RuleError),
  });
  if (!suffices) recentCnfLists.forget(namespace);
  return { raw, observation: suffices ? cached : await observeCnf(store, scope) };
}

/** The Pods of `selector`: as listed with the Deployments if that guess was right, else listed now. */
async function podsOf(
  store: SyncStore,
  namespace: string,
  lists: CnfLists,
  selector: string | undefined,
): Promise<readonly Pod[]> {
  if (lists.pods !== undefined && lists.pods.selector === selector) return lists.pods.items;
  return store.listPods({ namespace, labelSelector: selector, ...FROM_CACHE });
}

/** The observation of a rule that names no CNF (no purpose label). */
function noCnf(namespace: string): CnfObservation {
  const situation = { kind: "none" as const, namespace, purpose: "" };
  return { situation, deployment: undefined, pods: NO_PODS, networks: new Map() };
}

/**
 * The rule and the namespace's CNF lists: at once, or, in a burst (lists begun lately), the rule
 * first, then lists begun since this event began if there are any (ADR 0020).
 */
async function readRuleAndLists(
  store: SyncStore,
  type: ResourceType,
  key: ObjectKey & { readonly namespace: string },
  isEcho: (raw: KubeObject) => boolean,
): Promise<{ raw: KubeObject; lists: CnfLists | undefined } | undefined> {
  const { namespace } = key;
  const began = recentCnfLists.clock();
  if (!recentCnfLists.inBurst(namespace)) {
    const [rule, listed] = await Promise.allSettled([
      store.getRule(type, key),
      recentCnfLists.begin(namespace, () => readCnfLists(store, namespace)),
    ]);
    const raw = settledValue(rule);
    if (raw === undefined) return undefined;
    return { raw, lists: isEcho(raw) ? undefined : settledValue(listed) };
  }
  const raw = await store.getRule(type, key);
  if (raw === undefined) return undefined;
  // An echo of our own write needs no CNF: in a burst, most status writes' echoes.
  if (isEcho(raw)) return { raw, lists: undefined };
  const joined = recentCnfLists.since(namespace, began);
  // In a burst the pair is begun BURST_LIST_DELAY_MS later, for every event begun until then
  // (ADR 0021), but only while other events are in flight to share it; a failed shared pair is
  // read again at once.
  const delayMs = recentCnfLists.othersInFlight(namespace) > 0 ? BURST_LIST_DELAY_MS : 0;
  const lists =
    (await (
      joined ?? recentCnfLists.begin(namespace, () => readCnfLists(store, namespace), delayMs)
    ).catch(() => undefined)) ??
    (await recentCnfLists.begin(namespace, () => readCnfLists(store, namespace)));
  return { raw, lists };
}

/** How long, in a burst, a rule event waits for others to share the CNF lists it begins. */
const BURST_LIST_DELAY_MS = 200;

/** The lists reconcile-rule began lately, per namespace (recent-cnf-lists.ts). */
const recentCnfLists = new RecentCnfLists();

/** A rule event of `namespace` began: call the answer when it ends (RecentCnfLists.eventBegan). */
export const ruleEventBegan = (namespace: string): (() => void) =>
  recentCnfLists.eventBegan(namespace);

/**
 * The namespace's CNF Deployments and, with the selector last seen there, its Pods, from the
 * watch cache, at once.
 */
async function readCnfLists(store: SyncStore, namespace: string): Promise<CnfLists> {
  const guess = podSelectorGuesses.guess(namespace);
  const [deployments, guessed] = await Promise.all([
    store.listDeployments({ namespace, labelSelector: PURPOSE_LABEL, ...FROM_CACHE }),
    guess === undefined
      ? undefined
      : store.listPods({ namespace, labelSelector: guess, ...FROM_CACHE }).catch(() => undefined),
  ]);
  return {
    deployments,
    pods:
      guess === undefined || guessed === undefined
        ? undefined
        : { selector: guess, items: guessed },
  };
}

function settledValue<T>(result: PromiseSettledResult<T>): T {
  if (result.status === "rejected") throw result.reason;
  return result.value;
}

/** Every rule of every kind labelled with `scope.purpose` in `scope.namespace` (one list per kind). */
export async function listRulesOfScope(
  store: SyncStore,
  scope: CnfScope,
): Promise<ObservedRuleCr[]> {
  const lists = await Promise.all(
    ALL_RULE_KINDS.map((entry) =>
      store.listRules(ruleResource(entry), {
        namespace: scope.namespace,
        labelSelector: { [PURPOSE_LABEL]: scope.purpose },
      }),
    ),
  );
  return lists.flat().map(parseRuleObject);
}

/** A rule whose deletion the CNF refused because something on it still uses the object. */
export interface BlockedDeletion {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly purpose: string | undefined;
}

/**
 * The rule CRs of the same CNF (namespace and purpose) that reference `blocked`, "Kind name"
 * each, deleting ones included: what the CNF's "in use" most likely means. One list per
 * referring kind; read only on this failure path. Undefined when the API could not be read.
 */
export async function observeReferrers(
  store: SyncStore,
  blocked: BlockedDeletion,
): Promise<string[] | undefined> {
  if (!isRuleKind(blocked.kind) || blocked.purpose === undefined) return undefined;
  const labelSelector = { [PURPOSE_LABEL]: blocked.purpose };
  try {
    const lists = await Promise.all(
      kindsReferencing(blocked.kind).map(async (entry) => ({
        entry,
        items: await store.listRules(ruleResource(entry), {
          namespace: blocked.namespace,
          labelSelector,
        }),
      })),
    );
    return lists.flatMap(({ entry, items }) =>
      referrersOf(
        items.map((item) => ({ kind: entry.kind, name: item.metadata.name, spec: item.spec })),
        blocked,
      ),
    );
  } catch (error) {
    if (isKubeError(error)) return undefined;
    throw error;
  }
}
