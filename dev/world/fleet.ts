/**
 * CNFs on the API server as a Deployment controller and a kubelet would leave them, each pod
 * served by its own CNF simulator. See ./index.ts for what this owns and what it does not.
 */
import { randomBytes, randomInt } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import { startCnfSim, totalWrites, type CnfSim, type CnfSimOptions } from "../cnf-sim/index.js";
import {
  CNF_PORT_ANNOTATION,
  CnfClient,
  CnfSessionCache,
  cnfCredentialsFromEnv,
} from "../../shared/cnf/index.js";
import {
  DEPLOYMENTS,
  PODS,
  REPLICA_SETS,
  type Deployment,
  type KubeClient,
  type ObjectInput,
} from "../../shared/kube/index.js";
import { NFN_NETWORK_ANNOTATION, PURPOSE_LABEL } from "../../shared/kinds/index.js";

/** The networks of a generated CNF Deployment; the rule samples name ovn-net1 and ovn-net2. */
export const CNF_NETWORKS = JSON.stringify({
  type: "ovn4nfv",
  interface: [
    { defaultGateway: "false", interface: "net0", name: "ovn-priv-net" },
    { defaultGateway: "false", interface: "net1", name: "ovn-net1" },
    { defaultGateway: "false", interface: "net2", name: "ovn-net2" },
  ],
});

const TEMPLATE_HASH_LABEL = "pod-template-hash";
const CONTAINERS = [{ name: "sdewan", image: "openwrt:sim" }];

export interface CnfPod {
  readonly namespace: string;
  readonly name: string;
  /** The Pod IP written to status: the simulator's address, or what serves in front of it. */
  readonly ip: string;
  readonly sim: CnfSim;
}

export interface Cnf {
  readonly namespace: string;
  /** The Deployment's name. */
  readonly name: string;
  /** Its sdewanPurpose label: rules with the same label apply to its pods. */
  readonly purpose: string;
  readonly uid: string;
  /** pod-template-hash of the ReplicaSet made with the Deployment. */
  readonly hash: string;
  /** The CNF port (annotation on the Deployment); every pod's simulator listens on it. */
  readonly port: number;
  /** Labels of the pod template; each pod carries them plus its pod-template-hash. */
  readonly labels: Readonly<Record<string, string>>;
  /** Live pods, oldest first. */
  readonly pods: CnfPod[];
  /** Options every simulator of this CNF starts with (e.g. a password). */
  readonly simOptions?: SimOptions;
}

/** Simulator options a caller may choose; address and port are the fleet's. */
export type SimOptions = Omit<CnfSimOptions, "host" | "port">;

/**
 * Where a new pod is served, given the CNF port: its Pod IP and the simulator behind it (e.g. a
 * faulty proxy at the Pod IP in front of a simulator elsewhere). Default: a simulator at the Pod IP.
 */
export type PodEndpointFactory = (port: number) => Promise<{ ip: string; sim: CnfSim }>;

export interface FleetOptions {
  /** Namespace of createCnf when it names none. */
  readonly namespace?: string;
  readonly podEndpoint?: PodEndpointFactory;
}

export interface CreateCnfOptions {
  readonly namespace?: string;
  /** Default `cnf-<purpose>`; ignored with `deployment` (its name is used). */
  readonly name?: string;
  /** Ready pods to start with (default 2). */
  readonly pods?: number;
  readonly sim?: SimOptions;
  /**
   * A Deployment manifest to create instead of the generated one (e.g.
   * manifests/samples/cnf-deployment.yaml); the CNF port annotation is added to it.
   */
  readonly deployment?: ObjectInput;
}

/** A loopback address unlikely to be taken: each simulator gets its own Pod IP. */
export function loopbackAddress(): string {
  return `127.${randomInt(1, 250)}.${randomInt(1, 250)}.${randomInt(2, 250)}`;
}

/** Tries `start` up to 6 times: a random loopback address and port may be taken. */
export async function withFreshAddress<T>(start: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      return await start();
    } catch (error) {
      if (attempt >= 5) throw error;
    }
  }
}

const newHash = (): string => randomBytes(4).toString("hex");

function generatedDeployment(name: string, purpose: string, pods: number): ObjectInput {
  return {
    metadata: { name, labels: { [PURPOSE_LABEL]: purpose } },
    spec: {
      replicas: pods,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: {
          labels: { app: name, [PURPOSE_LABEL]: purpose },
          annotations: { [NFN_NETWORK_ANNOTATION]: CNF_NETWORKS },
        },
        spec: { containers: CONTAINERS },
      },
    },
  };
}

export class CnfFleet {
  private readonly sims: CnfSim[] = [];
  /** uid of each ReplicaSet made here, by "<namespace>/<name>". */
  private readonly replicaSetUids = new Map<string, string>();
  /** When each pod not Ready turned so (setPodReady), until it is Ready again. */
  private readonly notReadyAt = new Map<string, number>();

  constructor(
    readonly kube: KubeClient,
    private readonly options: FleetOptions = {},
  ) {}

  /** A CNF Deployment (label sdewanPurpose=`purpose`) with its ReplicaSet and Ready pods. */
  async createCnf(purpose: string, options: CreateCnfOptions = {}): Promise<Cnf> {
    const namespace = options.namespace ?? this.options.namespace;
    if (namespace === undefined) throw new Error("createCnf: no namespace given");
    const pods = options.pods ?? 2;
    const manifest =
      options.deployment ?? generatedDeployment(options.name ?? `cnf-${purpose}`, purpose, pods);
    const port = randomInt(20_000, 60_000);
    const annotations = {
      ...(manifest.metadata["annotations"] as Record<string, string> | undefined),
      [CNF_PORT_ANNOTATION]: String(port),
    };
    const deployment: Deployment = await this.kube.create(DEPLOYMENTS, {
      ...manifest,
      metadata: { ...manifest.metadata, namespace, annotations },
    });
    const cnf: Cnf = {
      namespace,
      name: deployment.metadata.name,
      purpose,
      uid: deployment.metadata.uid ?? "",
      hash: newHash(),
      port,
      labels: deployment.spec.template.metadata?.labels ?? {},
      pods: [],
      simOptions: options.sim,
    };
    await this.createReplicaSet(cnf, cnf.hash, pods);
    for (let i = 0; i < pods; i += 1) await this.addPod(cnf);
    return cnf;
  }

  /** The ReplicaSet `<cnf>-<hash>`, owned by the CNF's Deployment. */
  async createReplicaSet(cnf: Cnf, hash: string, replicas = 1): Promise<void> {
    const labels = { ...cnf.labels, [TEMPLATE_HASH_LABEL]: hash };
    const replicaSet = await this.kube.create(REPLICA_SETS, {
      metadata: {
        name: `${cnf.name}-${hash}`,
        namespace: cnf.namespace,
        labels,
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            name: cnf.name,
            uid: cnf.uid,
            controller: true,
          },
        ],
      },
      spec: {
        replicas,
        selector: { matchLabels: labels },
        template: { metadata: { labels }, spec: { containers: CONTAINERS } },
      },
    });
    this.replicaSetUids.set(
      `${cnf.namespace}/${replicaSet.metadata.name}`,
      replicaSet.metadata.uid ?? "",
    );
  }

  /** A new Ready pod of ReplicaSet `hash`, served by a new simulator. */
  async addPod(cnf: Cnf, hash = cnf.hash): Promise<CnfPod> {
    const { ip, sim } = await this.startEndpoint(cnf);
    const owner = `${cnf.name}-${hash}`;
    const name = `${owner}-${randomBytes(3).toString("hex")}`;
    await this.kube.create(PODS, {
      metadata: {
        name,
        namespace: cnf.namespace,
        labels: { ...cnf.labels, [TEMPLATE_HASH_LABEL]: hash },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "ReplicaSet",
            name: owner,
            uid: this.replicaSetUid(cnf.namespace, owner),
            controller: true,
          },
        ],
      },
      spec: { nodeName: "node-1", containers: CONTAINERS },
    });
    const pod: CnfPod = { namespace: cnf.namespace, name, ip, sim };
    cnf.pods.push(pod);
    await this.setPodReady(pod, true);
    return pod;
  }

  /**
   * Pod status as a kubelet writes it: Running at the pod's IP, Ready or not. A pod Ready again
   * turns Ready two seconds after it turned not Ready at the earliest (a restarted container and
   * its readiness probe take that long; the API server keeps whole seconds of it), so what was
   * applied while it was down is known to be older (ADR 0016).
   */
  async setPodReady(pod: CnfPod, ready: boolean): Promise<void> {
    const down = this.notReadyAt.get(pod.name);
    if (ready) this.notReadyAt.delete(pod.name);
    else this.notReadyAt.set(pod.name, Date.now());
    const at = ready && down !== undefined ? Math.max(Date.now(), down + 2000) : Date.now();
    // A merge patch: a PUT of /status would also replace metadata (and drop the pod's labels).
    await this.kube.patchStatus(
      PODS,
      { namespace: pod.namespace, name: pod.name },
      {
        phase: "Running",
        podIP: pod.ip,
        podIPs: [{ ip: pod.ip }],
        conditions: [
          {
            type: "Ready",
            status: ready ? "True" : "False",
            lastTransitionTime: new Date(at).toISOString(),
          },
        ],
      },
    );
  }

  /**
   * The CNF container dies: its simulator drops every object and session at once, then the pod
   * turns not Ready. Same pod (name, uid, IP); setPodReady(pod, true) brings it back, empty.
   */
  async crashPod(pod: CnfPod): Promise<void> {
    pod.sim.restartCnf();
    await this.setPodReady(pod, false);
  }

  /** A container restart as the kubelet reports it: crashPod, `downMs` later Ready again. */
  async restartPod(pod: CnfPod, options: { downMs?: number } = {}): Promise<void> {
    await this.crashPod(pod);
    if (options.downMs !== undefined) await delay(options.downMs);
    await this.setPodReady(pod, true);
  }

  /**
   * Deletes the pod, as the ReplicaSet controller does after a scale-down, and drops it from
   * cnf.pods. A graceful delete of a scheduled pod: with no kubelet to finish it, the object
   * stays in the API as Terminating. Its simulator keeps running (and holding) until close().
   */
  async deletePod(cnf: Cnf, pod: CnfPod): Promise<void> {
    await this.kube.delete(PODS, { namespace: pod.namespace, name: pod.name });
    cnf.pods.splice(cnf.pods.indexOf(pod), 1);
  }

  async scaleReplicaSet(cnf: Cnf, hash: string, replicas: number): Promise<void> {
    const key = { namespace: cnf.namespace, name: `${cnf.name}-${hash}` };
    await this.kube.mergePatch(REPLICA_SETS, key, { spec: { replicas } });
  }

  /**
   * A rollout in progress: a new ReplicaSet with one Ready pod, the old one scaled to 0 while its
   * pods are still Ready (they terminate later). Returns the new pod-template hash.
   */
  async startRollout(cnf: Cnf): Promise<string> {
    const hash = newHash();
    await this.createReplicaSet(cnf, hash);
    await this.scaleReplicaSet(cnf, cnf.hash, 0);
    await this.addPod(cnf, hash);
    return hash;
  }

  /** Merges `annotations` into the Deployment's metadata (null removes one). */
  async annotateCnf(cnf: Cnf, annotations: Record<string, string | null>): Promise<void> {
    const key = { namespace: cnf.namespace, name: cnf.name };
    await this.kube.mergePatch(DEPLOYMENTS, key, { metadata: { annotations } });
  }

  /** Deletes the Deployment only: with no garbage collector, its ReplicaSets and pods stay. */
  async deleteDeployment(cnf: Cnf): Promise<void> {
    await this.kube.delete(DEPLOYMENTS, { namespace: cnf.namespace, name: cnf.name });
  }

  /**
   * Every non-empty collection of every pod, object names sorted (a duplicate shows twice), e.g.
   * `[{ "mwan3/policies": ["balance1"] }, { "mwan3/policies": ["balance1"] }]`.
   */
  holdings(cnf: Cnf): Record<string, string[]>[] {
    return cnf.pods.map((p) => {
      const result: Record<string, string[]> = {};
      for (const [collection, objects] of Object.entries(p.sim.state().collections)) {
        if (objects.length > 0) result[collection] = objects.map((o) => String(o["name"])).sort();
      }
      return result;
    });
  }

  /** Object names each pod holds in `collection`, e.g. "mwan3/policies", sorted. */
  held(cnf: Cnf, collection: string): string[][] {
    return cnf.pods.map((p) =>
      (p.sim.state().collections[collection] ?? []).map((o) => String(o["name"])).sort(),
    );
  }

  /** The object `name` of `collection` on each pod (undefined where absent). */
  heldObjects(cnf: Cnf, collection: string, name: string): (Record<string, unknown> | undefined)[] {
    return cnf.pods.map((p) =>
      (p.sim.state().collections[collection] ?? []).find((o) => o["name"] === name),
    );
  }

  /** Object writes (POST/PUT/DELETE) each pod handled since the last resetCounters. */
  cnfWrites(cnf: Cnf): number[] {
    return cnf.pods.map((p) => totalWrites(p.sim.counters()));
  }

  /** Service restarts each pod's CNF was asked for, e.g. [["mwan3"], ["mwan3"]]. */
  serviceRestarts(cnf: Cnf): string[][] {
    return cnf.pods.map((p) => p.sim.serviceActions().map((a) => a.service));
  }

  /** A client of one pod's CNF REST API, as an operator changing the CNF by hand would use. */
  cnfClient(pod: CnfPod): CnfClient {
    return new CnfClient({
      baseUrl: pod.sim.url,
      credentials: cnfCredentialsFromEnv({}),
      sessions: new CnfSessionCache(),
    });
  }

  /** Zeroes every simulator's counters, to measure what comes next. */
  resetCounters(): void {
    for (const sim of this.sims) sim.resetCounters();
  }

  /** Stops every simulator this fleet started (the API objects stay). */
  async close(): Promise<void> {
    await Promise.all(this.sims.map((s) => s.close()));
  }

  private async startEndpoint(cnf: Cnf): Promise<{ ip: string; sim: CnfSim }> {
    const factory = this.options.podEndpoint;
    const endpoint = factory
      ? await factory(cnf.port)
      : await withFreshAddress(async () => {
          const sim = await startCnfSim({
            ...cnf.simOptions,
            host: loopbackAddress(),
            port: cnf.port,
          });
          return { ip: sim.host, sim };
        });
    this.sims.push(endpoint.sim);
    return endpoint;
  }

  private replicaSetUid(namespace: string, name: string): string {
    const uid = this.replicaSetUids.get(`${namespace}/${name}`);
    if (uid === undefined) throw new Error(`no ReplicaSet ${namespace}/${name} made by this fleet`);
    return uid;
  }
}
