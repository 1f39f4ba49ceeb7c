/** Every function this project serves; the combined server and its tests read this list. */
import type { SdewanFunction } from "../shared/runtime/function.js";
import { clusterLinkAuthz } from "./clusterlink-authz/index.js";
import { clusterLinkExport } from "./clusterlink-export/index.js";
import { clusterLinkImport } from "./clusterlink-import/index.js";
import { clusterLinkPeerHealth } from "./clusterlink-peer-health/index.js";
import { egressGroupSync } from "./egress-group-sync/index.js";
import { networkPolicySync } from "./network-policy-sync/index.js";
import { onDeploymentReady } from "./on-deployment-ready/index.js";
import { reconcileRule } from "./reconcile-rule/index.js";
import { validateAdmission } from "./validate-admission/index.js";

export const ALL_FUNCTIONS: readonly SdewanFunction[] = [
  reconcileRule,
  onDeploymentReady,
  validateAdmission,
  egressGroupSync,
  networkPolicySync,
  clusterLinkExport,
  clusterLinkImport,
  clusterLinkAuthz,
  clusterLinkPeerHealth,
];
