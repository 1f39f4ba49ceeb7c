// Where the real node lives on this machine: one network namespace, the CGNAT ranges inside it
// (no default route out), state under folders of its own. One node per machine: the kubelet
// hardcodes /var/lib/kubelet/device-plugins.
import os from "node:os";
import path from "node:path";
import { KUBERNETES_SERVICE_IP, NODE_IP, SERVICE_RANGE } from "../control-plane/addresses.js";

export const nodeLayout = {
  /** The node's name in Kubernetes and its network namespace's name. */
  name: "sdewan-node",
  netns: "sdewan-node",
  bridge: "sdewanbr0",
  /** On the namespace's loopback: the API server and the kubelet bind it. */
  address: NODE_IP,
  podSubnet: "100.64.0.0/24",
  podGateway: "100.64.0.1",
  clusterCidr: "100.64.0.0/16",
  serviceRange: SERVICE_RANGE,
  kubernetesServiceIp: KUBERNETES_SERVICE_IP,
  dnsServiceIp: "100.65.0.10",
  clusterDomain: "cluster.local",
  /** The node's registry, on the namespace's loopback; containerd mirrors docker.io and registry.k8s.io to it. */
  registry: "127.0.0.1:5000",
  stateDir: "/var/lib/sdewan-node",
  runDir: "/run/sdewan-node",
} as const;

export const nodeDir = path.dirname(new URL(import.meta.url).pathname);

/** Images pushed once stay in the registry's storage across node runs (a cache, outside git). */
export function registryStorageDir(env: NodeJS.ProcessEnv = process.env): string {
  const cache = env.XDG_CACHE_HOME ?? path.join(os.homedir(), ".cache");
  return path.join(cache, "sdewan-functions", "node-registry");
}

/**
 * The registry path an image reference is pulled from through the mirrors: `sdewan-functions:latest`
 * is docker.io/library/sdewan-functions:latest, served as <registry>/library/sdewan-functions:latest.
 */
export function registryPath(reference: string): string {
  const firstSlash = reference.indexOf("/");
  const first = firstSlash === -1 ? "" : reference.slice(0, firstSlash);
  const hasRegistry = first.includes(".") || first.includes(":") || first === "localhost";
  if (!hasRegistry) return reference.includes("/") ? reference : `library/${reference}`;
  if (first === "docker.io") {
    const rest = reference.slice(firstSlash + 1);
    return rest.includes("/") ? rest : `library/${rest}`;
  }
  return reference.slice(firstSlash + 1);
}
