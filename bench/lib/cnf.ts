/**
 * CNFs for the bench and the soak: a CNF Deployment with a ReplicaSet and Ready Pods on the real
 * API server, each Pod served by its own CNF simulator on a 127.x.y.z address (the Pod IP). Pods
 * never run (no kubelet): readiness is whatever is written into status here.
 */
import { randomBytes, randomInt } from "node:crypto";
import { startCnfSim, type CnfSim } from "../../dev/cnf-sim/index.js";
import { CNF_PORT_ANNOTATION } from "../../shared/cnf/index.js";
import { DEPLOYMENTS, PODS, REPLICA_SETS, type KubeClient } from "../../shared/kube/index.js";
import { NFN_NETWORK_ANNOTATION, PURPOSE_LABEL } from "../../shared/rules/index.js";

/** The networks every bench CNF has; rule specs name ovn-net1 and ovn-net2. */
export const CNF_NETWORKS = JSON.stringify({
  type: "ovn4nfv",
  interface: [
    { defaultGateway: "false", interface: "net0", name: "ovn-priv-net" },
    { defaultGateway: "false", interface: "net1", name: "ovn-net1" },
    { defaultGateway: "false", interface: "net2", name: "ovn-net2" },
  ],
});

export interface SimPod {
  readonly name: string;
  readonly ip: string;
  readonly sim: CnfSim;
}

export interface BenchCnf {
  readonly namespace: string;
  readonly name: string;
  readonly purpose: string;
  readonly uid: string;
  readonly hash: string;
  readonly replicaSetUid: string;
  readonly port: number;
  readonly pods: SimPod[];
}

const CONTAINERS = [{ name: "sdewan", image: "openwrt:bench" }];

/** A loopback address unlikely to be taken: each simulator gets its own Pod IP. */
export function loopbackAddress(): string {
  return `127.${randomInt(1, 250)}.${randomInt(1, 250)}.${randomInt(2, 250)}`;
}

/** Where a new pod is served: its Pod IP and the simulator behind it. Default: the simulator itself. */
export type PodEndpointFactory = (port: number) => Promise<{ ip: string; sim: CnfSim }>;

export class CnfFleet {
  readonly sims: CnfSim[] = [];

  constructor(
    private readonly kube: KubeClient,
    private readonly endpoint?: PodEndpointFactory,
  ) {}

  /** A CNF Deployment (label sdewanPurpose=`purpose`) with `pods` Ready pods. */
  async createCnf(
    namespace: string,
    purpose: string,
    options: { pods?: number; name?: string } = {},
  ): Promise<BenchCnf> {
    const name = options.name ?? `cnf-${purpose}`;
    const hash = randomBytes(4).toString("hex");
    const port = randomInt(20_000, 60_000);
    const deployment = await this.kube.create(DEPLOYMENTS, {
      metadata: {
        name,
        namespace,
        labels: { [PURPOSE_LABEL]: purpose },
        annotations: { [CNF_PORT_ANNOTATION]: String(port) },
      },
      spec: {
        replicas: options.pods ?? 2,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: {
            labels: { app: name, [PURPOSE_LABEL]: purpose },
            annotations: { [NFN_NETWORK_ANNOTATION]: CNF_NETWORKS },
          },
          spec: { containers: CONTAINERS },
        },
      },
    });
    const labels = { app: name, "pod-template-hash": hash };
    const replicaSet = await this.kube.create(REPLICA_SETS, {
      metadata: {
        name: `${name}-${hash}`,
        namespace,
        labels,
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            name,
            uid: deployment.metadata.uid ?? "",
            controller: true,
          },
        ],
      },
      spec: {
        replicas: options.pods ?? 2,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: CONTAINERS } },
      },
    });
    const cnf: BenchCnf = {
      namespace,
      name,
      purpose,
      uid: deployment.metadata.uid ?? "",
      hash,
      replicaSetUid: replicaSet.metadata.uid ?? "",
      port,
      pods: [],
    };
    for (let i = 0; i < (options.pods ?? 2); i += 1) await this.addPod(cnf);
    return cnf;
  }

  /** A new Ready pod of the CNF, served by a new simulator. */
  async addPod(cnf: BenchCnf): Promise<SimPod> {
    const { ip, sim } = this.endpoint
      ? await this.endpoint(cnf.port)
      : await this.startSim(cnf.port).then((started) => ({ ip: started.host, sim: started }));
    if (this.endpoint) this.sims.push(sim);
    const name = `${cnf.name}-${cnf.hash}-${randomBytes(3).toString("hex")}`;
    await this.kube.create(PODS, {
      metadata: {
        name,
        namespace: cnf.namespace,
        labels: { app: cnf.name, [PURPOSE_LABEL]: cnf.purpose, "pod-template-hash": cnf.hash },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "ReplicaSet",
            name: `${cnf.name}-${cnf.hash}`,
            uid: cnf.replicaSetUid,
            controller: true,
          },
        ],
      },
      spec: { nodeName: "node-1", containers: CONTAINERS },
    });
    const pod = { name, ip, sim };
    cnf.pods.push(pod);
    await this.setPodReady(cnf, pod, true);
    return pod;
  }

  /** Pod status as a kubelet writes it: Running with the simulator's address, Ready or not. */
  async setPodReady(cnf: BenchCnf, pod: SimPod, ready: boolean): Promise<void> {
    await this.kube.patchStatus(
      PODS,
      { namespace: cnf.namespace, name: pod.name },
      {
        phase: "Running",
        podIP: pod.ip,
        podIPs: [{ ip: pod.ip }],
        conditions: [
          {
            type: "Ready",
            status: ready ? "True" : "False",
            lastTransitionTime: new Date().toISOString(),
          },
        ],
      },
    );
  }

  private async startSim(port: number): Promise<CnfSim> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const sim = await startCnfSim({ host: loopbackAddress(), port });
        this.sims.push(sim);
        return sim;
      } catch (error) {
        if (attempt >= 5) throw error;
      }
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.sims.map((s) => s.close()));
  }
}

/** Names each pod of `cnf` holds, per collection ("mwan3/policies": [...]), sorted. */
export function holdings(pod: SimPod): Record<string, string[]> {
  const result: Record<string, string[]> = {};
  for (const [collection, objects] of Object.entries(pod.sim.state().collections)) {
    if (objects.length > 0) result[collection] = objects.map((o) => String(o["name"])).sort();
  }
  return result;
}

/** "GET mwan3/rules/<name>", "PUT restart/mwan3", "POST login" for one simulator request. */
export function describeCnfRequest(method: string, path: string): string {
  const segments = path.split("/").filter((s) => s !== "" && s !== "cgi-bin" && s !== "luci");
  if (segments.length === 0) return `${method} login`;
  const [area, second, , collection, item] = segments;
  if (area === "sdewan" && second === "v1") return `${method} restart/${segments[3] ?? ""}`;
  return `${method} ${second ?? "?"}/${collection ?? "?"}${item === undefined ? "" : "/<name>"}`;
}

/** Counts of described requests each simulator handled after sequence number `after[i]`. */
export function cnfRequestTally(
  pods: readonly SimPod[],
  after: readonly number[] = [],
): Map<string, number> {
  const tally = new Map<string, number>();
  pods.forEach((pod, i) => {
    for (const record of pod.sim.requests()) {
      if (record.seq <= (after[i] ?? 0)) continue;
      const key = describeCnfRequest(record.method, record.path);
      tally.set(key, (tally.get(key) ?? 0) + 1);
    }
  });
  return tally;
}

/** The last request sequence number of each pod's simulator, to tally what comes next. */
export function lastSeqs(pods: readonly SimPod[]): number[] {
  return pods.map((pod) => pod.sim.requests().at(-1)?.seq ?? 0);
}

/** "GET mwan3/rules/<name> 1, PUT restart/mwan3 1" with counts divided by `per`. */
export function describeTally(tally: ReadonlyMap<string, number>, per = 1): string {
  return [...tally]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, n]) => `${key} ${Number((n / per).toFixed(2))}`)
    .join(", ");
}
