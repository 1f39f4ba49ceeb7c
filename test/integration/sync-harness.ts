// The world of the rule-sync integration tests: a namespace on the real API server, CNF
// Deployments with ReplicaSets and Pods (status written as a kubelet would), one CNF simulator
// per pod on its own 127.x.y.z address, and the functions called directly with the admin
// client. Pods never run (no kubelet): readiness is whatever the test writes into status.
import { randomBytes, randomInt } from "node:crypto";
import { readFileSync, readdirSync } from "node:fs";
import { AppsV1Api, CoreV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { parseAllDocuments } from "yaml";
import {
  startCnfSim,
  totalWrites,
  type CnfSim,
  type CnfSimOptions,
} from "../../dev/cnf-sim/index.js";
import { createOnDeploymentReady } from "../../functions/on-deployment-ready/index.js";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import type { IntakeEvent, ResyncScope, WatchAction } from "../../shared/events/types.js";
import {
  createKubeClient,
  DEPLOYMENTS,
  PODS,
  REPLICA_SETS,
  ruleResource,
  type KubeClient,
} from "../../shared/kube/index.js";
import {
  ALL_RULE_KINDS,
  NFN_NETWORK_ANNOTATION,
  RULE_GROUP,
  RULE_VERSION,
  isRuleKind,
  requireKind,
  type RuleCondition,
  type RuleStatus,
} from "../../shared/rules/index.js";
import {
  CNF_PORT_ANNOTATION,
  CnfClient,
  CnfSessionCache,
  cnfCredentialsFromEnv,
} from "../../shared/cnf/index.js";
import type { EventFunction, HandlerContext } from "../../shared/runtime/function.js";
import type { Outcome } from "../../shared/core/outcome.js";
import { adminKubeConfig, newNamespace } from "./support/cluster.js";

export const NETWORKS = JSON.stringify({
  type: "ovn4nfv",
  interface: [
    { defaultGateway: "false", interface: "net0", name: "ovn-priv-net" },
    { defaultGateway: "false", interface: "net1", name: "ovn-net1" },
    { defaultGateway: "false", interface: "net2", name: "ovn-net2" },
  ],
});

/**
 * Per-request CNF timeout in tests: the default, so a busy machine (the simulators share the
 * test's event loop) does not turn slow replies into timeouts.
 */
export const CNF_TEST_TIMEOUT_MS = 1500;

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
  /** Options every simulator of this CNF starts with (e.g. a password). */
  readonly simOptions?: SimOptions;
}

/** Simulator options a test may choose; address and port are the world's. */
export type SimOptions = Omit<CnfSimOptions, "host" | "port">;

/** A rule CR as the tests see it: what an operator would read from its status. */
export interface RuleView {
  readonly generation: number;
  readonly deleting: boolean;
  readonly finalizers: readonly string[];
  readonly inSync: boolean | undefined;
  /** appliedGeneration equals metadata.generation, with appliedVersion and appliedTime set. */
  readonly appliedCurrent: boolean;
  readonly appliedVersion: string | undefined;
  /** status.observedGeneration equals metadata.generation. */
  readonly observedCurrent: boolean;
  readonly condition: Pick<RuleCondition, "type" | "reason" | "message"> | undefined;
  readonly message: string | undefined;
  readonly status: RuleStatus | undefined;
}

/** A rule CR of the namespace, named by kind and name. */
export interface RuleName {
  readonly kind: string;
  readonly name: string;
}

/** A manifests/samples rule document. */
export interface SampleRule {
  readonly kind: string;
  readonly name: string;
  readonly spec: Record<string, unknown>;
}

const SAMPLES_DIR = new URL("../../manifests/samples/", import.meta.url);

/** Every rule in manifests/samples, in file order. */
export function sampleRules(): SampleRule[] {
  return readdirSync(SAMPLES_DIR)
    .filter((file) => file.endsWith(".yaml"))
    .sort()
    .flatMap((file) =>
      parseAllDocuments(readFileSync(new URL(file, SAMPLES_DIR), "utf8")).map(
        (doc) => doc.toJS() as { kind?: string; metadata?: { name?: string }; spec?: unknown },
      ),
    )
    .flatMap((doc) =>
      doc.kind !== undefined && isRuleKind(doc.kind)
        ? [
            {
              kind: doc.kind,
              name: doc.metadata?.name ?? "",
              spec: doc.spec as Record<string, unknown>,
            },
          ]
        : [],
    );
}

/** The sample rule of `kind` (the first one, or the one named `name`). */
export function sampleRule(kind: string, name?: string): SampleRule {
  const found = sampleRules().find(
    (r) => r.kind === kind && (name === undefined || r.name === name),
  );
  if (found === undefined) throw new Error(`no sample ${kind} ${name ?? ""} in manifests/samples`);
  return found;
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
  readonly env: Record<string, string | undefined> = {
    CNF_TIMEOUT_MS: String(CNF_TEST_TIMEOUT_MS),
  };
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
    await this.watchCacheCaughtUp();
    return this.reconcileRule.handle(this.ruleEvent(kind, name, action), this.context());
  }

  /**
   * reconcile-rule reads Deployments and Pods from the API server's watch cache. A consistent
   * list answers only once that cache holds every write made before it, so the event then sees
   * the CNF as the test left it, as a rule event that follows a CNF change through a watch would.
   */
  async watchCacheCaughtUp(): Promise<void> {
    const namespace = this.namespace;
    await Promise.all([
      this.kube.list(DEPLOYMENTS, { namespace }),
      this.kube.list(PODS, { namespace }),
    ]);
  }

  /** A CNF Deployment with `pods` Ready pods, each served by its own simulator. */
  async createCnf(
    purpose: string,
    options: { pods?: number; name?: string; sim?: SimOptions } = {},
  ): Promise<Cnf> {
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
    const uid = deployment.metadata?.uid ?? "";
    const cnf: Cnf = { name, purpose, uid, hash, port, pods: [], simOptions: options.sim };
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
    const sim = await this.startSim(cnf.port, cnf.simOptions);
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

  private async startSim(port: number, options: SimOptions = {}): Promise<CnfSim> {
    for (let attempt = 0; ; attempt += 1) {
      try {
        const sim = await startCnfSim({ ...options, host: loopbackAddress(), port });
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

  /**
   * A rollout in progress: a new ReplicaSet with one Ready pod, the old one scaled to 0 while its
   * pods are still Ready (they terminate later). Returns the new pod-template hash.
   */
  async startRollout(cnf: Cnf): Promise<string> {
    const hash = randomBytes(4).toString("hex").slice(0, 8);
    await this.createReplicaSet(cnf, hash);
    await this.scaleReplicaSet(cnf, cnf.hash, 0);
    await this.addPod(cnf, hash);
    return hash;
  }

  async scaleReplicaSet(cnf: Cnf, hash: string, replicas: number): Promise<void> {
    const key = { namespace: this.namespace, name: `${cnf.name}-${hash}` };
    await this.kube.mergePatch(REPLICA_SETS, key, { spec: { replicas } });
  }

  /** Deletes a pod object (as the ReplicaSet controller would after a scale-down). */
  async deletePod(cnf: Cnf, pod: CnfPod): Promise<void> {
    await this.kube.delete(PODS, { namespace: this.namespace, name: pod.name });
    cnf.pods.splice(cnf.pods.indexOf(pod), 1);
  }

  async deleteDeployment(cnf: Cnf): Promise<void> {
    await this.apps.deleteNamespacedDeployment({ namespace: this.namespace, name: cnf.name });
  }

  /** Creates a rule with the spec of its sample in manifests/samples (optionally renamed). */
  async createSampleRule(purpose: string, kind: string, name?: string): Promise<SampleRule> {
    const sample = sampleRule(kind, name);
    await this.createRule(kind, sample.name, purpose, structuredClone(sample.spec));
    return sample;
  }

  /** Every rule CR of the namespace, all kinds, in the registry's apply order. */
  async listRules(): Promise<RuleName[]> {
    const lists = await Promise.all(
      ALL_RULE_KINDS.map(async (entry) =>
        (await this.kube.list(ruleResource(entry), { namespace: this.namespace })).map((o) => ({
          kind: entry.kind,
          name: o.metadata.name,
        })),
      ),
    );
    return lists.flat();
  }

  /**
   * "The controller comes up": the events a resync sends, one per rule of the namespace, in
   * `order` (default: reverse apply order, so dependants arrive before what they need). Events
   * answered "retry" are redelivered, as Knative or the connector would, for up to `rounds`
   * rounds. Returns the last outcome per "Kind/name".
   */
  async resyncRules(
    options: { order?: "apply" | "reverse"; rounds?: number } = {},
  ): Promise<Map<string, Outcome>> {
    const rules = await this.listRules();
    if ((options.order ?? "reverse") === "reverse") rules.reverse();
    const outcomes = new Map<string, Outcome>();
    let pending = rules;
    for (let round = 0; round < (options.rounds ?? 4) && pending.length > 0; round += 1) {
      for (const rule of pending) {
        outcomes.set(`${rule.kind}/${rule.name}`, await this.reconcile(rule.kind, rule.name));
      }
      pending = pending.filter((r) => outcomes.get(`${r.kind}/${r.name}`)?.kind === "retry");
    }
    return outcomes;
  }

  /** Delivers one event, then redelivers while it is answered "retry" (at most `attempts`). */
  async reconcileUntilSettled(kind: string, name: string, attempts = 4): Promise<Outcome> {
    let outcome = await this.reconcile(kind, name);
    for (let i = 1; i < attempts && outcome.kind === "retry"; i += 1) {
      outcome = await this.reconcile(kind, name);
    }
    return outcome;
  }

  /** What an operator reads from a rule; undefined once the CR is gone. */
  async ruleView(kind: string, name: string): Promise<RuleView | undefined> {
    const rule = await this.readRule(kind, name);
    if (rule === undefined) return undefined;
    const status = rule.status;
    const generation = rule.metadata.generation ?? 0;
    const condition = status?.conditions?.[0];
    return {
      generation,
      deleting: rule.metadata.deletionTimestamp !== undefined,
      finalizers: rule.metadata.finalizers ?? [],
      inSync: status?.inSync,
      appliedCurrent:
        status?.appliedGeneration === generation &&
        status.appliedVersion !== undefined &&
        status.appliedTime !== undefined,
      appliedVersion: status?.appliedVersion,
      observedCurrent: status?.observedGeneration === generation,
      condition: condition && {
        type: condition.type,
        reason: condition.reason,
        message: condition.message,
      },
      message: status?.message,
      status,
    };
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

  /** The object `name` of `collection` on each pod (undefined where absent). */
  heldObjects(cnf: Cnf, collection: string, name: string): (Record<string, unknown> | undefined)[] {
    return cnf.pods.map((p) =>
      (p.sim.state().collections[collection] ?? []).find((o) => o["name"] === name),
    );
  }

  /** Object writes (POST/PUT/DELETE) each pod handled since the last reset. */
  cnfWrites(cnf: Cnf): number[] {
    return cnf.pods.map((p) => totalWrites(p.sim.counters()));
  }

  /** Service restarts each pod handled since the last reset, e.g. [["mwan3"], ["mwan3"]]. */
  restarts(cnf: Cnf): string[][] {
    return cnf.pods.map((p) => p.sim.serviceActions().map((a) => a.service));
  }

  /** Zeroes the sims' counters and the API/CNF call counts, to measure what comes next. */
  resetObservations(): void {
    for (const sim of this.sims) sim.resetCounters();
    this.calls.api = 0;
    this.calls.cnf = 0;
  }

  get onDeploymentReady(): EventFunction {
    return createOnDeploymentReady({ kube: () => this.kube, env: this.env });
  }

  /** Delivers a Deployment or Pod event (Reference mode, or Resource mode with `object`). */
  async cnfObjectEvent(
    kind: "Deployment" | "Pod",
    name: string,
    options: { action?: WatchAction; object?: Record<string, unknown> } = {},
  ): Promise<Outcome> {
    const event: IntakeEvent = {
      type: "object",
      id: randomBytes(8).toString("hex"),
      action: options.action ?? "update",
      ref: {
        apiVersion: kind === "Deployment" ? "apps/v1" : "v1",
        kind,
        namespace: this.namespace,
        name,
      },
      ...(options.object === undefined ? {} : { object: options.object }),
    };
    return this.onDeploymentReady.handle(event, this.context());
  }

  /** "The CNF Deployment changed": one on-deployment-ready call for the whole CNF. */
  async syncCnf(cnf: Cnf): Promise<Outcome> {
    return this.cnfObjectEvent("Deployment", cnf.name);
  }

  /** A resync event; default scope: this test's namespace (other tests share the cluster). */
  async resyncCnfs(scope: ResyncScope = { namespace: this.namespace }): Promise<Outcome> {
    const event: IntakeEvent = { type: "resync", id: randomBytes(8).toString("hex"), scope };
    return this.onDeploymentReady.handle(event, this.context());
  }

  /** Merges `annotations` into the CNF Deployment's metadata (e.g. the prune opt-in). */
  async annotateCnf(cnf: Cnf, annotations: Record<string, string | null>): Promise<void> {
    const key = { namespace: this.namespace, name: cnf.name };
    await this.kube.mergePatch(DEPLOYMENTS, key, { metadata: { annotations } });
  }

  /** A client of one pod's CNF REST API, as an operator changing the CNF by hand would use. */
  cnfClient(pod: CnfPod): CnfClient {
    return new CnfClient({
      baseUrl: pod.sim.url,
      credentials: cnfCredentialsFromEnv({}),
      sessions: new CnfSessionCache(),
    });
  }

  /** Deletes a rule CR without cleanup (its finalizer stripped first): the CNF keeps its object. */
  async forceDeleteRule(kind: string, name: string): Promise<void> {
    const key = { namespace: this.namespace, name };
    await this.kube.removeFinalizer(this.ruleType(kind), key, requireKind(kind).finalizer);
    await this.kube.delete(this.ruleType(kind), key);
  }

  async close(): Promise<void> {
    await Promise.all(this.sims.map((s) => s.close()));
  }
}
