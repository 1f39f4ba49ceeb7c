/** Where the API server is: KUBECONFIG (or ~/.kube/config), else the pod's service account. */
import { KubeConfig } from "@kubernetes/client-node";

export function loadKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  // loadFromDefault: $KUBECONFIG (files merged) -> ~/.kube/config -> in-cluster service account.
  kc.loadFromDefault();
  if (kc.getCurrentCluster() === null) {
    throw new Error(
      "no Kubernetes API server configured: set KUBECONFIG, or run in a pod with a service account",
    );
  }
  return kc;
}
