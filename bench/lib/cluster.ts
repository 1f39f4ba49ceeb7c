/**
 * The bench's own control plane: a real kube-apiserver + etcd on loopback (dev/control-plane),
 * the admin's KubeConfig and KubeClient, and namespaces with unique names. Nothing here imports
 * jest, so bench and soak run as plain tsx programs.
 */
import { randomBytes } from "node:crypto";
import { KubeConfig } from "@kubernetes/client-node";
import { startControlPlane, type ControlPlane } from "../../dev/control-plane/control-plane.js";
import { createKubeClient, NAMESPACES, type KubeClient } from "../../shared/kube/index.js";
import { RawApi } from "./raw-api.js";

export interface BenchCluster {
  readonly plane: ControlPlane;
  /** Path of the admin kubeconfig, for child processes (KUBECONFIG). */
  readonly kubeconfigPath: string;
  adminKubeConfig(): KubeConfig;
  /** A fresh admin client with its own request counter. */
  adminClient(): KubeClient;
  /** Kept-alive admin requests for bulk setup. */
  readonly raw: RawApi;
  /** Creates a namespace named `<prefix>-<random>` and returns its name. */
  namespace(prefix: string, labels?: Record<string, string>): Promise<string>;
  stop(): Promise<void>;
}

export async function startBenchCluster(log: (line: string) => void): Promise<BenchCluster> {
  const plane = await startControlPlane({ log });
  const adminKubeConfig = (): KubeConfig => {
    const kc = new KubeConfig();
    kc.loadFromFile(plane.kubeconfigPath);
    return kc;
  };
  const kube = createKubeClient(adminKubeConfig());
  const raw = new RawApi(plane.server, plane.caPem, plane.admin.token);
  return {
    raw,
    plane,
    kubeconfigPath: plane.kubeconfigPath,
    adminKubeConfig,
    adminClient: () => createKubeClient(adminKubeConfig()),
    async namespace(prefix, labels = {}) {
      const name = `${prefix}-${randomBytes(3).toString("hex")}`;
      await kube.create(NAMESPACES, { metadata: { name, labels } });
      return name;
    },
    stop: () => {
      raw.close();
      return plane.stop();
    },
  };
}
