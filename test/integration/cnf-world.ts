// The world of the rule-sync integration tests: a namespace on the real API server, CNF
// Deployments with ReplicaSets and Pods (status written as a kubelet would), one CNF simulator
// per pod on its own 127.x.y.z address, and the functions called directly with the admin
// client. Pods never run (no kubelet): readiness is whatever the test writes into status.
import { randomBytes, randomInt } from "node:crypto";
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { startCnfSim, type CnfSim } from "../../dev/cnf-sim/index.js";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import type { IntakeEvent, WatchAction } from "../../shared/events/types.js";
import { createKubeClient, PODS, ruleResource, type KubeClient } from "../../shared/kube/index.js";
import {
  NFN_NETWORK_ANNOTATION,
  RULE_GROUP,
  RULE_VERSION,
  requireKind,
  type RuleStatus,
} from "../../shared/rules/index.js";
import { CNF_PORT_ANNOTATION } from "../../shared/cnf/index.js";
import type { EventFunction, HandlerContext } from "../../shared/runtime/function.js";
import type { Outcome } from "../../shared/runtime/outcome.js";
import { adminKubeConfig, newNamespace } from "./support/cluster.js";

export const NETWORKS = JSON.stringify({
  type: "ovn4nfv",
  interface: [
    { defaultGateway: "false", interface: "net0", name: "ovn-priv-net" },
    { defaultGateway: "false", interface: "net1", name: "ovn-net1" },
    { defaultGateway: "false", interface: "net2", name: "ovn-net2" },
  ],
});

/** Collects log lines so tests can assert on them (e.g. no secret ever appears). */
export class CapturedLog {
  readonly lines: string[] = [];
  private add = (level: string) => (fields: Record<string, unknown>, message: string) => {
    this.lines.push(JSON.stringify({ level, message, ...fields }));
  };
  info = this.add("info");
  warn = this.add("warn");
  error = this.add("error");
  debug = this.add("debug");
}

export interface CnfPod {
  readonly name: string;
  readonly ip: string;
  readonly sim: CnfSim;
}

export interface Cnf {
  readonly name: string;
  readonly purpose: string;
  readonly uid: string;
  readonly hash: string;
  readonly port: number;
  readonly pods: CnfPod[];
}

/** A unique loopback address per simulator so many CNFs can share one port number. */
function loopbackAddress(): string {
  return `127.${randomInt(1, 250)}.${randomInt(1, 250)}.${randomInt(2, 250)}`;
}

export class CnfWorld {
  readonly apps = adminKubeConfig().makeApiClient(AppsV1Api);
  readonly core = adminKubeConfig().makeApiClient(CoreV1Api);
  readonly custom = adminKubeConfig().makeApiClient(CustomObjectsApi);
  readonly kube: KubeClient = createKubeClient(adminKubeConfig());
  readonly log = new CapturedLog();
  readonly calls = { api: 0, cnf: 0 };
  readonly sims: CnfSim[] = [];
  readonly env: Record<string, string | undefined> = { CNF_TIMEOUT_MS: "400" };
  namespace = "";

  private constructor() {}

  static async create(): Promise<CnfWorld> {
    const world = new CnfWorld();
    world.namespace = await newNamespace();
    return world;
  }

  get reconcileRule(): EventFunction {
    return createReconcileRule({ kube: () => this.kube, env: this.env });
  }

  context(): HandlerContext {
    return {
      correlationId: randomBytes(4).toString("hex"),
      log: this.log,
      calls: this.calls,
      signal: new AbortController().signal,
    };
  }

  ruleEvent(kind: string, name: string, action: WatchAction = "update"): IntakeEvent {
    return {
      type: "object",
      id: randomBytes(8).toString("hex"),
      action,
      ref: { apiVersion: `${RULE_GROUP}/${RULE_VERSION}`, kind, namespace: this.namespace, name },
    };
  }

  /** Delivers a rule event to reconcile-rule, as the connector or Knative would. */
  async reconcile(kind: string, name: string, action: WatchAction = "update"): Promise<Outcome> {
    return this.reconcileRule.handle(this.ruleEvent(kind, name, action), this.context());
  }

  /** A CNF Deployment with `pods` Ready pods, each served by its own simulator. */
  async createCnf(purpose: string, options: { pods?: number; name?: string } = {}): Promise<Cnf> {
    const name = options.name ?? `cnf-${purpose}`;
    const hash = randomBytes(4).toString("hex").slice(0, 8);
    const port = randomInt(20000, 60000);
    const deployment = await this.apps.createNamespacedDeployment({
      namespace: this.namespace,
      body: {
        metadata: {
          name,
          labels: { sdewanPurpose: purpose },
          annotations: { [CNF_PORT_ANNOTATION]: String(port) },
        },
        spec: {
          replicas: options.pods ?? 2,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: {
              labels: { app: name, sdewanPurpose: purpose },
              annotations: { [NFN_NETWORK_ANNOTATION]: NETWORKS },
            },
            spec: { containers: [{ name: "sdewan", image: "openwrt:test" }] },
          },
        },
      },
    });
    const cnf: Cnf = { name, purpose, uid: deployment.metadata?.uid ?? "", hash, port, pods: [] };
    await this.createReplicaSet(cnf, hash);
    for (let i = 0; i < (options.pods ?? 2); i += 1) await this.addPod(cnf, hash);
    return cnf;
  }

  async createReplicaSet(cnf: Cnf, hash: string): Promise<void> {
    const labels = { app: cnf.name, "pod-template-hash": hash };
    await this.apps.createNamespacedReplicaSet({
      namespace: this.namespace,
      body: {
        metadata: {
          name: `${cnf.name}-${hash}`,
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
          replicas: 1,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: { containers: [{ name: "sdewan", image: "openwrt:test" }] },
          },
        },
      },
    });
  }

  /** Adds a Ready pod (of ReplicaSet `hash`) served by a new simulator. */
  async addPod(cnf: Cnf, hash = cnf.hash): Promise<CnfPod> {
    const sim = await this.startSim(cnf.port);
    const rs = await this.apps.readNamespacedReplicaSet({
      namespace: this.namespace,
      name: `${cnf.name}-${hash}`,
    });
    const name = `${cnf.name}-${hash}-${randomBytes(3).toString("hex")}`;
    await this.core.createNamespacedPod({
      namespace: this.namespace,
      body: {
        metadata: {
          name,
          labels: { app: cnf.name, sdewanPurpose: cnf.purpose, "pod-template-hash": hash },
          ownerReferences: [
            {
              apiVersion: "apps/v1",
              kind: "ReplicaSet",
              name: `${cnf.name}-${hash}`,
              uid: rs.metadata?.uid ?? "",
              controller: true,
            },
          ],
        },
        spec: { nodeName: "node-1", containers: [{ name: "sdewan", image: "openwrt:test" }] },
      },
    });
    const pod = { name, ip: sim.host, sim };
    cnf.pods.push(pod);
    await this.setPodReady(pod, true);
    return pod;
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

  /** Writes pod status as a kubelet would: Running with an IP, Ready true or false. */
  async setPodReady(pod: CnfPod, ready: boolean): Promise<void> {
    // A merge patch: a PUT of /status would also replace metadata (and drop the pod's labels).
    await this.kube.patchStatus(
      PODS,
      { namespace: this.namespace, name: pod.name },
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

  async createRule(
    kind: string,
    name: string,
    purpose: string,
    spec: Record<string, unknown>,
  ): Promise<void> {
    const entry = requireKind(kind);
    await this.custom.createNamespacedCustomObject({
      group: RULE_GROUP,
      version: RULE_VERSION,
      namespace: this.namespace,
      plural: entry.plural,
      body: {
        apiVersion: `${RULE_GROUP}/${RULE_VERSION}`,
        kind,
        metadata: { name, labels: { sdewanPurpose: purpose } },
        spec,
      },
    });
  }

  async patchRuleSpec(kind: string, name: string, spec: Record<string, unknown>): Promise<void> {
    await this.kube.mergePatch(this.ruleType(kind), { namespace: this.namespace, name }, { spec });
  }

  async deleteRule(kind: string, name: string): Promise<void> {
    await this.kube.delete(this.ruleType(kind), { namespace: this.namespace, name });
  }

  async readRule(kind: string, name: string) {
    const obj = await this.kube.get(this.ruleType(kind), { namespace: this.namespace, name });
    return obj as (typeof obj & { status?: RuleStatus }) | undefined;
  }

  private ruleType(kind: string) {
    return ruleResource(requireKind(kind));
  }

  /** Object names each pod holds in `collection`, e.g. "mwan3/policies". */
  held(cnf: Cnf, collection: string): string[][] {
    return cnf.pods.map((p) =>
      (p.sim.state().collections[collection] ?? []).map((o) => String(o["name"])).sort(),
    );
  }

  async close(): Promise<void> {
    await Promise.all(this.sims.map((s) => s.close()));
  }
}
