/**
 * shared/kube: API access. Kubeconfig loading, one kept-alive HTTPS agent per process, typed
 * get/list (zod-checked), writes and status patches, finalizer changes, the one conflict-retry
 * loop (retryOnConflict), per-event call counts, one error type (KubeError), what a failed call
 * means as an Outcome (kubeFailureOutcome), and eachObject (one object's failure stays its own).
 * Decides nothing else: no reconcile logic, no retry policy of its own.
 * @kubernetes/client-node is never imported statically (it costs ~1 s of start-up and ~50 MB).
 * Example and measurements: docs/code-notes.md (kube).
 */
export { createKubeClient, defaultKubeClient } from "./client.js";
export type {
  DeleteOptions,
  FinalizerResult,
  GetOptions,
  KnownFinalizers,
  KubeClient,
  KubeClientOptions,
  ListOptions,
  ObjectInput,
  ObjectKey,
} from "./client.js";
export { loadKubeConfig } from "./config.js";
export type { ClusterInfo, KubeConfigSource, LoadKubeConfigOptions } from "./config.js";
export { KubeError, isKubeError } from "./errors.js";
export type { KubeErrorCode } from "./errors.js";
export {
  CONFIG_MAPS,
  DEPLOYMENTS,
  ENDPOINT_SLICES,
  SERVICES,
  clusterLinkResource,
  EGRESSES,
  EGRESS_GROUPS,
  LEASES,
  NAMESPACES,
  NETPOL_ENDPOINTS,
  NETPOL_PEER_SETS,
  NETWORK_POLICIES,
  PODS,
  REPLICA_SETS,
  SECRETS,
  apiVersionOf,
  ruleResource,
} from "./resources.js";
export type { ResourceType } from "./resources.js";
export {
  configMapSchema,
  deploymentSchema,
  kubeObjectSchema,
  namespaceSchema,
  objectMetaSchema,
  podSchema,
  replicaSetSchema,
  secretSchema,
  serviceSchema,
} from "../core/objects.js";
export type {
  ConfigMap,
  Deployment,
  KubeObject,
  Lease,
  Namespace,
  ObjectMeta,
  OwnerReference,
  Pod,
  ReplicaSet,
  Secret,
  Service,
  ServicePort,
} from "../core/objects.js";
export { formatLabelSelector } from "./selectors.js";
export type { LabelSelectorInput } from "./selectors.js";
export { planFinalizers } from "./plan-finalizers.js";
export { retryOnConflict } from "./retry.js";
export { eachObject, OBJECT_FAILED_REASON, settleObject } from "./each-object.js";
export { kubeFailureOutcome, raced } from "./failure-outcome.js";
export type { EntryContext } from "./entry-context.js";
export type { KubeFailureOptions } from "./failure-outcome.js";
export type { EachObjectOptions, SettleObjectOptions } from "./each-object.js";
export { cachedThenConsistent, readOptions } from "./freshness.js";
export type { ReadFreshness } from "./freshness.js";
export {
  EVENTS,
  NO_EVENTS,
  OBJECT_BURST,
  OBJECT_REFILL_MS,
  kubeEventRecorder,
  processEvents,
  redactingRecorder,
} from "./event-recorder.js";
export type {
  EventRecord,
  EventRecorder,
  EventRegarding,
  RecorderOptions,
} from "./event-recorder.js";
export type { ConflictRetryOptions } from "./retry.js";
