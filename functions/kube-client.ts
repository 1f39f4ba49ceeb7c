/**
 * The process-wide Kubernetes client of the functions, from KUBECONFIG or the in-cluster
 * service account, created on first use so importing a function (the combined server's list,
 * unit tests) never loads a kubeconfig. A failed creation is retried on the next event.
 */
import type { KubeClient } from "../shared/kube/index.js";

let client: Promise<KubeClient> | undefined;

export function defaultKubeClient(): Promise<KubeClient> {
  client ??= import("../shared/kube/index.js")
    .then((kube) => kube.createKubeClient())
    .catch((error: unknown) => {
      client = undefined;
      throw error;
    });
  return client;
}
