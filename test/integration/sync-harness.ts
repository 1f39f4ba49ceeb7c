// The world of the rule-sync integration tests: dev/world's CNFs (Deployments, ReplicaSets, Pods
// with kubelet-like status, one CNF simulator per pod) in a namespace of its own, reconcile-rule
// and on-deployment-ready called directly with the admin client, and rule CRs as an operator
// sees them. Pods never run (no kubelet): readiness is whatever the test writes into status.
import { randomBytes } from "node:crypto";
import { AppsV1Api, CustomObjectsApi } from "@kubernetes/client-node";
import { CnfFleet, sampleRule, type Cnf, type SampleRule } from "../../dev/world/index.js";
import { createOnDeploymentReady } from "../../functions/on-deployment-ready/index.js";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import type { IntakeEvent, ResyncScope, WatchAction } from "../../shared/events/types.js";
import { createKubeClient, DEPLOYMENTS, PODS, ruleResource } from "../../shared/kube/index.js";
import {
  ALL_RULE_KINDS,
  RULE_GROUP,
  RULE_VERSION,
  requireKind,
  type RuleCondition,
  type RuleStatus,
} from "../../shared/kinds/index.js";
import type { CallCounters } from "../../shared/core/context.js";
import type { EventFunction, HandlerContext } from "../../shared/runtime/function.js";
import type { Outcome } from "../../shared/core/outcome.js";
import { processOwnWrites } from "../../shared/sync/index.js";
import { adminKubeConfig, newNamespace } from "./support/cluster.js";

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

/** dev/world's CNF fleet in a namespace of its own, with the functions and the rule CRs. */
export class SyncWorld extends CnfFleet {
  readonly apps = adminKubeConfig().makeApiClient(AppsV1Api);
  readonly custom = adminKubeConfig().makeApiClient(CustomObjectsApi);
  readonly log = new CapturedLog();
  readonly calls: CallCounters = { api: 0, cnf: 0 };
  readonly env: Record<string, string | undefined>;

  private constructor(readonly namespace: string) {
    super(createKubeClient(adminKubeConfig()), { namespace });
    // Prune ledgers in the world's own namespace: tests share one API server.
    this.env = {
      CNF_TIMEOUT_MS: String(CNF_TEST_TIMEOUT_MS),
      PRUNE_LEDGER_NAMESPACE: namespace,
      // These tests deliver one event after another with no delivery layer to redeliver a
      // deferred restart: pacing stays off (the default), and is proven where a real connector
      // redelivers (test/e2e/rule-sync.test.ts) and in test/unit/cnf/restarts.test.ts.
      CNF_RESTART_MIN_INTERVAL_MS: "0",
    };
  }

  /** In a new namespace, or in `namespace` (e.g. one the admission harness covers). */
  static async create(namespace?: string): Promise<SyncWorld> {
    return new SyncWorld(namespace ?? (await newNamespace()));
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

  async createRule(
    kind: string,
    name: string,
    purpose: string,
    spec: Record<string, unknown>,
    labels: Readonly<Record<string, string>> = {},
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
        metadata: { name, labels: { ...labels, sdewanPurpose: purpose } },
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
    // A controller that comes up is a new process: it remembers none of its own status writes.
    processOwnWrites.clear();
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

  /** Zeroes the simulators' counters and the API/CNF call counts, to measure what comes next. */
  resetObservations(): void {
    this.resetCounters();
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

  /** Deletes a rule CR without cleanup (its finalizer stripped first): the CNF keeps its object. */
  async forceDeleteRule(kind: string, name: string): Promise<void> {
    const key = { namespace: this.namespace, name };
    await this.kube.removeFinalizer(this.ruleType(kind), key, requireKind(kind).finalizer);
    await this.kube.delete(this.ruleType(kind), key);
  }
}
