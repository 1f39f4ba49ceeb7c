/** The SyncStore of shared/sync over shared/kube: one method a request, nothing added. */
import { CONFIG_MAPS, DEPLOYMENTS, LEASES, PODS, SECRETS, type KubeClient } from "../kube/index.js";
import type { SyncStore } from "./store.js";

export function kubeSyncStore(kube: KubeClient): SyncStore {
  return {
    getRule: (type, key) => kube.get(type, key),
    listRules: (type, options) => kube.list(type, options),
    patchRuleStatus: (type, key, status, options) => kube.patchStatus(type, key, status, options),
    addRuleFinalizer: (type, key, finalizer, known, written) =>
      kube.addFinalizer(type, key, finalizer, known, written),
    removeRuleFinalizer: (type, key, finalizer, known) =>
      kube.removeFinalizer(type, key, finalizer, known),
    getDeployment: (key) => kube.get(DEPLOYMENTS, key),
    listDeployments: (options) => kube.list(DEPLOYMENTS, options),
    getPod: (key) => kube.get(PODS, key),
    listPods: (options) => kube.list(PODS, options),
    getSecret: (key) => kube.get(SECRETS, key),
    getConfigMap: (key) => kube.get(CONFIG_MAPS, key),
    createConfigMap: (object) => kube.create(CONFIG_MAPS, object),
    replaceConfigMap: (object) => kube.replace(CONFIG_MAPS, object),
    getLease: (key, options) => kube.get(LEASES, key, options),
    createLease: (object) => kube.create(LEASES, object),
    replaceLease: (object) => kube.replace(LEASES, object),
    deleteLease: (key, options) => kube.delete(LEASES, key, options),
  };
}
