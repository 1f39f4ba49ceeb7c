/**
 * What ClusterLink's four functions read and write on the API server, object by object: its own
 * kinds (Import, Export, Peer, the access policies), the Services and EndpointSlices an Import
 * keeps, and Pods (an egress decision's client). kube-store.ts implements it over shared/kube;
 * every method may throw the client's KubeError, which the entries map to an outcome.
 */
import type {
  DeleteOptions,
  GetOptions,
  KubeObject,
  ListOptions,
  ObjectInput,
  ObjectKey,
  Pod,
  Service,
} from "../kube/index.js";

/** A status merge patch; with a resourceVersion it fails (conflict) if the object changed. */
type PatchStatus = (
  key: ObjectKey,
  status: Readonly<Record<string, unknown>>,
  options?: { readonly resourceVersion?: string },
) => Promise<KubeObject>;

export interface ClusterLinkStore {
  /** Undefined when the Import does not exist. */
  getImport(key: ObjectKey, options?: GetOptions): Promise<KubeObject | undefined>;
  listImports(options?: ListOptions): Promise<KubeObject[]>;
  /** Fails (conflict) when the object's metadata.resourceVersion is stale. */
  replaceImport(object: ObjectInput): Promise<KubeObject>;
  patchImportStatus: PatchStatus;
  getExport(key: ObjectKey): Promise<KubeObject | undefined>;
  listExports(options?: ListOptions): Promise<KubeObject[]>;
  patchExportStatus: PatchStatus;
  getPeer(key: ObjectKey): Promise<KubeObject | undefined>;
  listPeers(options?: ListOptions): Promise<KubeObject[]>;
  patchPeerStatus: PatchStatus;
  listAccessPolicies(options?: ListOptions): Promise<KubeObject[]>;
  patchAccessPolicyStatus: PatchStatus;
  listPrivilegedAccessPolicies(options?: ListOptions): Promise<KubeObject[]>;
  patchPrivilegedAccessPolicyStatus: PatchStatus;
  getService(key: ObjectKey): Promise<Service | undefined>;
  listServices(options?: ListOptions): Promise<Service[]>;
  createService(object: ObjectInput): Promise<Service>;
  mergePatchService(key: ObjectKey, patch: object): Promise<Service>;
  /** True when deleted, false when already gone; a resourceVersion makes it conditional. */
  deleteService(key: ObjectKey, options?: DeleteOptions): Promise<boolean>;
  getEndpointSlice(key: ObjectKey): Promise<KubeObject | undefined>;
  listEndpointSlices(options?: ListOptions): Promise<KubeObject[]>;
  createEndpointSlice(object: ObjectInput): Promise<KubeObject>;
  mergePatchEndpointSlice(key: ObjectKey, patch: object): Promise<KubeObject>;
  deleteEndpointSlice(key: ObjectKey, options?: DeleteOptions): Promise<boolean>;
  listPods(options?: ListOptions): Promise<Pod[]>;
}
