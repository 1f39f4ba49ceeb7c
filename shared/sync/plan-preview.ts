/**
 * The plan of a change of rules before it is made (docs/plan.md): what reconcile-rule would
 * write to each ready pod of the CNF, which services it would restart, and which other rules the
 * change affects. Computed by the planners sync itself runs (planRule, withoutCollisions,
 * planPodWrites, servicesToRestart, restartPendingOf, and the restart pacer over a virtual
 * clock), over the CNF as preview.ts read it. Pure: no client, no clock of its own.
 */
import { isDeepStrictEqual } from "node:util";
import { CnfRestartPacer } from "../cnf/restarts.js";
import type { KubeObject } from "../core/objects.js";
import { requireKind, ruleKey, sortForApply, sortForDelete } from "../kinds/index.js";
import type { CnfObservation, CnfScope, ObservedRuleCr } from "./observed.js";
import { referrersOf, planRule, withoutCollisions, type PlannedRule } from "./plan-rules.js";
import { restartPendingOf } from "./plan-status.js";
import {
  planPodWrites,
  servicesToRestart,
  type PlannedWrite,
  type PodHoldings,
  type PodWritePlan,
  type RuleTarget,
  type WriteOp,
} from "./plan-writes.js";

/** One HTTP request to a CNF pod: the method, the collection ("mwan3/policies") and object. */
export interface CnfRequest {
  readonly method: "POST" | "PUT" | "DELETE";
  readonly collection: string;
  readonly name: string;
}

/** What a ready pod was read to hold of the planned objects, or why it could not be read. */
export type PodReading =
  | { readonly pod: string; readonly ok: true; readonly holdings: PodHoldings }
  | { readonly pod: string; readonly ok: false; readonly reason: string };

export interface PreviewInput {
  readonly scope: CnfScope;
  readonly observation: CnfObservation;
  /** The changed rules as the functions would read them once the change is made. */
  readonly rules: readonly ObservedRuleCr[];
  /** Every ready pod's reading, in the observation's pod order. */
  readonly pods: readonly PodReading[];
  /** Rules of the CNF as read, for "who references it" (a changed one counts as in `rules`). */
  readonly others: readonly ObservedRuleCr[];
  /** Per rule key: key material named by reference that the preview did not read. */
  readonly keysUnread?: ReadonlyMap<string, UnreadKeys>;
}

/** Fields whose value is in a Secret the preview did not read, and those Secrets' names. */
export interface UnreadKeys {
  readonly fields: readonly string[];
  readonly secrets: readonly string[];
}

/** One rule on one pod. */
export type RulePodPlan =
  | {
      readonly pod: string;
      readonly change: WriteOp;
      readonly requests: readonly CnfRequest[];
      /** Top-level fields that differ (names only, never values); [] for a create or delete. */
      readonly fields: readonly string[];
      /** The service restarted after it, unless the CNF refuses the write. */
      readonly restart: string | null;
      /** Set on a delete the CNF refuses while these rules' objects use it. */
      readonly refusedWhileUsedBy?: readonly string[];
      /** Set when the write may not be needed: why the preview cannot tell. */
      readonly unsure?: string;
    }
  | {
      readonly pod: string;
      readonly change: "none";
      /**
       * A restart owed though nothing changes (restartPendingOf: the rule's status does not show
       * it paid). The function skips it when its own process restarted the service after the
       * rule's last write (shared/cnf/restarts.ts tickets), which no preview can see.
       */
      readonly restart: string | null;
    }
  | { readonly pod: string; readonly change: "unknown"; readonly reason: string };

export interface RulePlan {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly action: "apply" | "delete";
  /** Its object on the CNF, when it has one. */
  readonly object?: {
    readonly collection: string;
    readonly name: string;
    readonly service: string | null;
  };
  /** Why the functions would write nothing for it (no CNF, a spec the CNF cannot take, ...). */
  readonly problem?: { readonly code: string; readonly message: string };
  /** Rules of the CNF that reference it ("Kind name"): a change of it changes what they do. */
  readonly dependents: readonly string[];
  /** Per ready pod, in pod order; [] when no CNF state is shown or nothing is written. */
  readonly pods: readonly RulePodPlan[];
}

/** One pod's requests and restarts for the whole change, in the order they are made. */
export interface PodPlan {
  readonly pod: string;
  /** Every request for the change, in order; undefined when the pod could not be read. */
  readonly requests: readonly (CnfRequest & { readonly rule: string })[] | undefined;
  readonly unknown?: string;
  /** Restarts per service for the change as one burst, under the given pacing (at most). */
  readonly restarts: Readonly<Record<string, number>>;
}

export interface CnfPlan {
  readonly namespace: string;
  readonly purpose: string;
  /** The CNF Deployment, when exactly one was found. */
  readonly deployment: string | undefined;
  /** Ready pods now, and how many make the CNF complete. */
  readonly readyPods: number;
  readonly expectedPods: number;
  /** Why no CNF state is shown, when it is not. */
  readonly withheld?: string;
  /** The rules in the order the functions apply them (applies by rank, then deletes). */
  readonly rules: readonly RulePlan[];
  readonly pods: readonly PodPlan[];
}

/** A changed object the functions would not act on, and why. */
export interface Skipped {
  readonly kind: string;
  readonly namespace: string;
  readonly name: string;
  readonly why: string;
}

/** A whole preview: a plan per CNF the change concerns, and the objects no function acts on. */
export interface PreviewReport {
  readonly cnfs: readonly CnfPlan[];
  readonly skipped: readonly Skipped[];
}

/** How a burst's restarts are paced (shared/cnf/restarts.ts; CNF_RESTART_* settings). */
export interface PacingSettings {
  readonly minIntervalMs: number;
  readonly quietMs: number;
}

/**
 * The HTTP requests a planned write makes (apply-pod.ts executeWrite through CnfClient): a
 * collection with PUT takes a PUT for create and update, one without takes POST and
 * DELETE-then-POST.
 */
export function cnfRequestsOf(
  write: Pick<PlannedWrite, "op" | "collection" | "objectName">,
  update: "put" | "delete-then-create",
): CnfRequest[] {
  const at = (method: CnfRequest["method"]): CnfRequest => ({
    method,
    collection: write.collection,
    name: write.objectName,
  });
  switch (write.op) {
    case "create":
      return [at(update === "put" ? "PUT" : "POST")];
    case "update":
      return [at("PUT")];
    case "recreate":
      return [at("DELETE"), at("POST")];
    case "delete":
      return [at("DELETE")];
  }
}

/** The rule's target as sync hands it to apply-pod (sync.ts syncRules). */
function targetOf(rule: PlannedRule): RuleTarget | undefined {
  if (rule.target === undefined) return undefined;
  return { ...rule.target, restartPending: restartPendingOf(rule.observed) };
}

function situationProblem(observation: CnfObservation, scope: CnfScope): RulePlan["problem"] {
  const { situation } = observation;
  if (situation.kind === "none") {
    return {
      code: "NoCnf",
      message: `no CNF Deployment labelled sdewanPurpose=${scope.purpose} in namespace ${scope.namespace}: nothing is written until one exists`,
    };
  }
  if (situation.kind === "conflict") {
    return {
      code: "CnfConflict",
      message: `several CNF Deployments have sdewanPurpose=${scope.purpose}: ${situation.deployments.join(", ")}; nothing is written`,
    };
  }
  if (observation.pods.ready.length === 0) {
    return {
      code: "NoReadyPod",
      message: "the CNF has no ready pod: each pod gets the rule when it turns Ready",
    };
  }
  return undefined;
}

function identityOf(rule: ObservedRuleCr): { kind: string; name: string; deleting: boolean } {
  const obj = rule.ok ? rule.cr : rule.raw;
  return {
    kind: obj.kind,
    name: obj.metadata.name,
    deleting: obj.metadata.deletionTimestamp !== undefined,
  };
}

/** The rules (after the change) that reference `rule`, those deleted by the change left out. */
function dependentsOf(rule: PlannedRule, input: PreviewInput): string[] {
  const changed = new Map(input.rules.map((r) => [ruleKey(identityOf(r)), r]));
  const candidates = input.others
    .filter((r) => !changed.has(ruleKey(identityOf(r))))
    .concat(input.rules.filter((r) => !identityOf(r).deleting))
    .flatMap((r) => (r.ok ? [{ kind: r.cr.kind, name: r.cr.metadata.name, spec: r.cr.spec }] : []));
  return referrersOf(candidates, rule.identity);
}

/** The top-level fields an update changes (names only): what the CNF holds against the target. */
function changedFields(target: RuleTarget, write: PlannedWrite, holdings: PodHoldings): string[] {
  if (write.op !== "update" && write.op !== "recreate") return [];
  const held = holdings.get(target.collection)?.get(target.objectName);
  if (target.desired === null || held === undefined) return [];
  return requireKind(target.kind).cnfDiff(target.desired, held);
}

/** Only unread key material differs, as far as the preview can see: the CNF may hold it already. */
function unsureOf(fields: readonly string[], unread: UnreadKeys | undefined): string | undefined {
  if (unread === undefined || fields.length === 0) return undefined;
  if (!fields.every((f) => unread.fields.includes(f))) return undefined;
  return `the key from Secret ${unread.secrets.join(", ")} was not read: the CNF may hold it already`;
}

function podPlanOf(
  rule: PlannedRule,
  target: RuleTarget,
  reading: PodReading,
  plan: PodWritePlan | undefined,
  context: { dependents: readonly string[]; keysUnread: UnreadKeys | undefined },
): RulePodPlan {
  if (!reading.ok || plan === undefined) {
    return {
      pod: reading.pod,
      change: "unknown",
      reason: reading.ok ? "not read" : reading.reason,
    };
  }
  const write = plan.writes.find((w) => w.ruleKey === target.key);
  if (write === undefined) {
    const owed = plan.restartOnly.some((t) => t.ruleKey === target.key);
    return { pod: reading.pod, change: "none", restart: owed ? target.service : null };
  }
  const entry = requireKind(target.kind);
  const fields = changedFields(target, write, reading.holdings);
  const refused = write.op === "delete" && rule.observed.deleting && context.dependents.length > 0;
  const unsure = unsureOf(fields, context.keysUnread);
  return {
    pod: reading.pod,
    change: write.op,
    requests: cnfRequestsOf(write, entry.cnf.update),
    fields,
    restart: refused ? null : target.service,
    ...(refused ? { refusedWhileUsedBy: context.dependents } : {}),
    ...(unsure === undefined ? {} : { unsure }),
  };
}

/**
 * What sync would plan for `rules` on the observed CNF (planRule, then withoutCollisions), each
 * target as apply-pod gets it: the objects the preview reads on each pod.
 */
export function previewTargets(
  rules: readonly ObservedRuleCr[],
  observation: CnfObservation,
): RuleTarget[] {
  return withoutCollisions(rules.map((rule) => planRule(rule, observation))).flatMap((p) => {
    const target = targetOf(p);
    return target === undefined ? [] : [target];
  });
}

/** `items` in the order the functions apply them: applies by rank, then deletes in reverse. */
function applyOrderOf<T extends { readonly kind: string; readonly deleting: boolean }>(
  items: readonly T[],
): T[] {
  const withKind = items.map((item) => ({ kind: requireKind(item.kind).kind, item }));
  const applies = sortForApply(withKind.filter((x) => !x.item.deleting));
  const deletes = sortForDelete(withKind.filter((x) => x.item.deleting));
  return [...applies, ...deletes].map((x) => x.item);
}

function applyOrder(planned: readonly PlannedRule[]): PlannedRule[] {
  const items = planned.map((p) => ({ p, kind: p.identity.kind, deleting: p.observed.deleting }));
  return applyOrderOf(items).map((x) => x.p);
}

const objectOf = (t: RuleTarget): NonNullable<RulePlan["object"]> => ({
  collection: t.collection,
  name: t.objectName,
  service: t.service,
});

/** One rule's plan: why nothing is written, or what each pod gets. */
function rulePlanOf(
  rule: PlannedRule,
  input: PreviewInput,
  problem: RulePlan["problem"],
  podPlans: readonly (PodWritePlan | undefined)[],
): RulePlan {
  const target = targetOf(rule);
  const dependents = dependentsOf(rule, input);
  const base = {
    ...rule.identity,
    action: rule.observed.deleting ? ("delete" as const) : ("apply" as const),
    dependents,
  };
  const why = rule.unappliable ?? problem;
  if (target === undefined || why !== undefined) {
    return {
      ...base,
      ...(target === undefined ? {} : { object: objectOf(target) }),
      ...(why === undefined ? {} : { problem: why }),
      pods: [],
    };
  }
  const context = { dependents, keysUnread: input.keysUnread?.get(target.key) };
  return {
    ...base,
    object: objectOf(target),
    pods: input.pods.map((reading, i) => podPlanOf(rule, target, reading, podPlans[i], context)),
  };
}

/** Every request of the change on one pod, in the order apply-pod makes them. */
function podRequestsOf(
  reading: PodReading,
  plan: PodWritePlan | undefined,
  targets: readonly RuleTarget[],
): Omit<PodPlan, "restarts"> {
  if (!reading.ok || plan === undefined) {
    return {
      pod: reading.pod,
      requests: undefined,
      unknown: reading.ok ? "not read" : reading.reason,
    };
  }
  const requests = plan.writes.flatMap((w) =>
    cnfRequestsOf(w, requireKind(kindOfKey(targets, w.ruleKey)).cnf.update).map((r) => ({
      ...r,
      rule: w.ruleKey,
    })),
  );
  return { pod: reading.pod, requests };
}

/**
 * The plan of `input.rules` on their CNF: per rule and pod the change (the requests, the fields
 * that differ, the restart), and per pod every request in order. Restarts of the whole change are
 * added by planBurstRestarts.
 */
export function planPreview(input: PreviewInput): Omit<CnfPlan, "pods"> & {
  readonly pods: readonly Omit<PodPlan, "restarts">[];
} {
  const { observation, scope } = input;
  const planned = applyOrder(
    withoutCollisions(input.rules.map((rule) => planRule(rule, observation))),
  );
  const problem = situationProblem(observation, scope);
  const targets = planned.flatMap((p) => {
    const target = targetOf(p);
    return target === undefined ? [] : [target];
  });
  const podPlans = input.pods.map((reading) =>
    reading.ok ? planPodWrites(targets, reading.holdings) : undefined,
  );
  return {
    namespace: scope.namespace,
    purpose: scope.purpose,
    deployment:
      observation.situation.kind === "found" ? observation.situation.deployment : undefined,
    readyPods: observation.pods.ready.length,
    expectedPods: observation.pods.expected,
    rules: planned.map((rule) => rulePlanOf(rule, input, problem, podPlans)),
    pods: input.pods.map((reading, i) => podRequestsOf(reading, podPlans[i], targets)),
  };
}

function kindOfKey(targets: readonly RuleTarget[], key: string): string {
  const target = targets.find((t) => t.key === key);
  if (target === undefined) throw new Error(`no target for ${key}`);
  return target.kind;
}

/** One rule event on one pod: what it wrote and what it owes a restart for. */
interface PodEvent {
  readonly rule: string;
  /** Services of its writes the CNF accepts. */
  readonly wrote: readonly string[];
  /** Services restarted though nothing was written (a restart still owed). */
  readonly owed: readonly string[];
}

/**
 * The restarts the change costs on each pod when its rule events arrive together (a `kubectl
 * apply -f dir/`), one event per rule in apply order: the process's own restart pacer
 * (shared/cnf/restarts.ts, ADR 0007) on a virtual clock, a deferred event delivered again when the
 * pacer says it is due. All writes are assumed to land within the pacing interval; a longer
 * burst restarts once more per interval.
 */
export async function planBurstRestarts(
  plan: ReturnType<typeof planPreview>,
  pacing: PacingSettings,
): Promise<CnfPlan> {
  const pods = await Promise.all(
    plan.pods.map(async (pod): Promise<PodPlan> => {
      const events = plan.rules.flatMap((rule): PodEvent[] => {
        const step = rule.pods.find((p) => p.pod === pod.pod);
        if (step === undefined || step.change === "unknown" || step.restart === null) return [];
        const key = ruleKey(rule);
        return step.change === "none"
          ? [{ rule: key, wrote: [], owed: [step.restart] }]
          : [{ rule: key, wrote: [step.restart], owed: [] }];
      });
      return { ...pod, restarts: await restartsOnPod(pod.pod, events, pacing) };
    }),
  );
  return { ...plan, pods };
}

async function restartsOnPod(
  pod: string,
  events: readonly PodEvent[],
  pacing: PacingSettings,
): Promise<Record<string, number>> {
  let now = 0;
  const pacer = new CnfRestartPacer(() => now);
  const restarts: Record<string, number> = {};
  const queue = events.map((event) => ({ at: 0, event, first: true }));
  while (queue.length > 0) {
    queue.sort((a, b) => a.at - b.at);
    const next = queue.shift();
    if (next === undefined) break;
    now = next.at;
    const { event } = next;
    if (next.first) for (const service of event.wrote) pacer.wrote(pod, service, event.rule);
    const touched = servicesToRestart(
      [...event.wrote, ...event.owed].map((service) => ({ ruleKey: event.rule, service })),
    );
    for (const service of touched) {
      const options = { mode: "coalesce" as const, ...pacing };
      const verdict = await pacer.settle(pod, service, [event.rule], options, () => {
        restarts[service] = (restarts[service] ?? 0) + 1;
        return Promise.resolve();
      });
      if (verdict.kind === "deferred") {
        // Redelivered: the object is held by then, so the event only settles its restart.
        const again = { rule: event.rule, wrote: [], owed: [service] };
        queue.push({ at: now + verdict.dueInMs, event: again, first: false });
      }
    }
  }
  return restarts;
}

/**
 * The plan when the caller is shown no CNF state (it may not read the CNF's credentials): each
 * rule's object and service as the registry names them, nothing read about the CNF.
 */
export function planWithheld(
  scope: CnfScope,
  rules: readonly ObservedRuleCr[],
  why: string,
): CnfPlan {
  const ordered = applyOrderOf(rules.map((rule) => ({ rule, ...identityOf(rule) })));
  return {
    namespace: scope.namespace,
    purpose: scope.purpose,
    deployment: undefined,
    readyPods: 0,
    expectedPods: 0,
    withheld: why,
    rules: ordered.map(({ kind, name, deleting }) => {
      const entry = requireKind(kind);
      return {
        kind,
        namespace: scope.namespace,
        name,
        action: deleting ? "delete" : "apply",
        object: {
          collection: `${entry.cnf.module}/${entry.cnf.collection}`,
          name: entry.cnfObjectName(name),
          service: entry.cnf.restartService,
        },
        dependents: [],
        pods: [],
      };
    }),
    pods: [],
  };
}

/**
 * The rule as the functions read it once a DELETE is accepted: a rule with finalizers turns
 * Terminating (deletionTimestamp set, generation bumped, as the API server does); one without
 * is removed at once, before any function could act (ADR 0003: it was never written to a CNF).
 */
export function ruleAfterDelete(object: KubeObject, now: string): AfterChange {
  const { metadata } = object;
  if ((metadata.finalizers ?? []).length === 0) {
    return { skipped: "never applied (no finalizer): removed at once, no CNF request" };
  }
  if (metadata.deletionTimestamp !== undefined) return { stored: object };
  const generation = metadata.generation;
  const stored = {
    ...object,
    metadata: {
      ...metadata,
      deletionTimestamp: now,
      ...(generation === undefined || generation === 0 ? {} : { generation: generation + 1 }),
    },
  };
  return { stored };
}

/** A rule as stored after a change, or why the functions would not act on the change. */
export type AfterChange = { readonly stored: KubeObject } | { readonly skipped: string };

/** Equal as the API server stores them: as JSON (a key whose value is undefined is no key). */
const sameJson = (a: unknown, b: unknown): boolean =>
  isDeepStrictEqual(JSON.parse(JSON.stringify(a ?? null)), JSON.parse(JSON.stringify(b ?? null)));

/**
 * The rule as the API server would store it after `kubectl apply` of `file`: a new rule at
 * generation 1 without status; an existing one with the file's spec, its labels and annotations
 * merged over the live ones, the generation bumped when the spec changes. An apply that changes
 * nothing causes no event, so nothing to plan.
 */
export function ruleAfterApply(file: KubeObject, live: KubeObject | undefined): AfterChange {
  if (live === undefined) {
    const { status: _status, ...rest } = file;
    const { finalizers: _finalizers, deletionTimestamp: _deleting, ...metadata } = file.metadata;
    return { stored: { ...rest, metadata: { ...metadata, generation: 1 } } };
  }
  const labels = { ...live.metadata.labels, ...file.metadata.labels };
  const annotations = { ...live.metadata.annotations, ...file.metadata.annotations };
  const specChanged = !sameJson(file.spec, live.spec);
  const same =
    !specChanged &&
    sameJson(labels, live.metadata.labels ?? {}) &&
    sameJson(annotations, live.metadata.annotations ?? {});
  if (same) return { skipped: "unchanged: the API server stores nothing, no function runs" };
  const generation = live.metadata.generation ?? 1;
  const stored = {
    ...live,
    metadata: {
      ...live.metadata,
      labels,
      annotations,
      generation: specChanged ? generation + 1 : generation,
    },
    spec: file.spec,
  };
  return { stored };
}
