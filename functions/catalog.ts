/**
 * Every function by name, each loaded only when asked for: the server imports only the functions
 * FUNCTIONS names, so an OpenFaaS or Knative pod serving one function never loads (nor keeps in
 * memory) the code of the others. all.ts is the same list, loaded at once, for tests and tools.
 */
import type { SdewanFunction } from "../shared/runtime/function.js";

export interface FunctionEntry {
  readonly name: string;
  load(): Promise<SdewanFunction>;
}

export const FUNCTION_CATALOG: readonly FunctionEntry[] = [
  {
    name: "reconcile-rule",
    load: async () => (await import("./reconcile-rule/index.js")).reconcileRule,
  },
  {
    name: "on-deployment-ready",
    load: async () => (await import("./on-deployment-ready/index.js")).onDeploymentReady,
  },
  {
    name: "validate-admission",
    load: async () => (await import("./validate-admission/index.js")).validateAdmission,
  },
  {
    name: "egress-group-sync",
    load: async () => (await import("./egress-group-sync/index.js")).egressGroupSync,
  },
  {
    name: "network-policy-sync",
    load: async () => (await import("./network-policy-sync/index.js")).networkPolicySync,
  },
  {
    name: "clusterlink-export",
    load: async () => (await import("./clusterlink-export/index.js")).clusterLinkExport,
  },
  {
    name: "clusterlink-import",
    load: async () => (await import("./clusterlink-import/index.js")).clusterLinkImport,
  },
  {
    name: "clusterlink-authz",
    load: async () => (await import("./clusterlink-authz/index.js")).clusterLinkAuthz,
  },
  {
    name: "clusterlink-peer-health",
    load: async () => (await import("./clusterlink-peer-health/index.js")).clusterLinkPeerHealth,
  },
];
