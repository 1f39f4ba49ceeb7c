/**
 * What rule sync reads and writes on the API server, object by object: the rule CRs (of any
 * kind: `type` is the kind's resource), the CNF's Deployment and Pods, the CNF credentials,
 * the prune ledger and the CNF sync Lease. kube-store.ts implements it over shared/kube; every
 * method may throw the client's KubeError, which the entries map to an outcome.
 */
import type {
  ConfigMap,
  DeleteOptions,
  Deployment,
  FinalizerResult,
  GetOptions,
  KnownFinalizers,
  KubeObject,
  Lease,
  ListOptions,
  ObjectInput,
  ObjectKey,
  Pod,
  ResourceType,
  Secret,
} from "../kube/index.js";

export interface SyncStore {
  /** The rule, or undefined when it does not exist. */
  getRule(type: ResourceType, key: ObjectKey): Promise<KubeObject | undefined>;
  listRules(type: ResourceType, options?: ListOptions): Promise<KubeObject[]>;
  /** Merge patch of the rule's status; fails (conflict) when a resourceVersion is given and stale. */
  patchRuleStatus(
    type: ResourceType,
    key: ObjectKey,
    status: Readonly<Record<string, unknown>>,
    options?: { readonly resourceVersion?: string },
  ): Promise<KubeObject>;
  addRuleFinalizer(
    type: ResourceType,
    key: ObjectKey,
    finalizer: string,
    known?: KnownFinalizers,
    written?: (object: KubeObject) => void,
  ): Promise<FinalizerResult>;
  removeRuleFinalizer(
    type: ResourceType,
    key: ObjectKey,
    finalizer: string,
    known?: KnownFinalizers,
  ): Promise<FinalizerResult>;
  getDeployment(key: ObjectKey): Promise<Deployment | undefined>;
  listDeployments(options: ListOptions): Promise<Deployment[]>;
  getPod(key: ObjectKey): Promise<Pod | undefined>;
  listPods(options: ListOptions): Promise<Pod[]>;
  getSecret(key: ObjectKey): Promise<Secret | undefined>;
  getConfigMap(key: ObjectKey): Promise<ConfigMap | undefined>;
  createConfigMap(object: ObjectInput): Promise<ConfigMap>;
  /** Fails (conflict) when the object's metadata.resourceVersion is stale. */
  replaceConfigMap(object: ObjectInput): Promise<ConfigMap>;
  getLease(key: ObjectKey, options?: GetOptions): Promise<Lease | undefined>;
  createLease(object: ObjectInput): Promise<Lease>;
  /** Fails (conflict) when the object's metadata.resourceVersion is stale. */
  replaceLease(object: ObjectInput): Promise<Lease>;
  deleteLease(key: ObjectKey, options?: DeleteOptions): Promise<boolean>;
}
