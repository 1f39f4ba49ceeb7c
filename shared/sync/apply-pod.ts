/**
 * The effectful half of a pod's sync: read what the pod holds, run planPodWrites, execute the
 * writes in order, restart each touched service once, and report per rule what happened.
 * A failure on one object does not stop the others: the CNF itself rejects a dependent write
 * whose dependency failed, and that rule is retried by redelivery.
 */
import type { CnfClient, CnfRestartPacer, RestartOptions } from "../cnf/index.js";
import {
  CnfHttpError,
  classifyCnfFailure,
  isCnfError,
  type CnfCollectionRef,
  type CnfReplySchemas,
} from "../cnf/index.js";
import { requireKind, type CnfServiceName } from "../kinds/index.js";
import type { FailureClass, PodRuleResult, PodSyncResult } from "./plan-status.js";

export type { PodSyncResult } from "./plan-status.js";
import {
  planPodWrites,
  servicesToRestart,
  type HeldObject,
  type PlannedWrite,
  type RuleTarget,
  type ServiceTouch,
} from "./plan-writes.js";
import { holdingsOf } from "./plan-targets.js";
import { messageOf } from "../core/error-message.js";

/** How a pod's current holdings are read. */
export type ReadMode =
  /** GET each target's object by name: cheapest for one rule. */
  | "items"
  /** GET each collection once: a whole CNF in a handful of reads. */
  | "collections";

interface CollectionAccess {
  readonly ref: CnfCollectionRef;
  readonly schemas: CnfReplySchemas;
}

function accessOf(target: RuleTarget): CollectionAccess {
  const entry = requireKind(target.kind);
  return {
    ref: entry.cnf,
    schemas: { item: entry.cnfObjectSchema, list: entry.cnfListSchema },
  };
}

function failureClass(error: unknown): FailureClass {
  const cls = classifyCnfFailure(error);
  return cls === "permanent" ? "invalid" : cls;
}

/** What the pod holds of `targets`' objects, by collection id (reads only). */
export async function readHoldings(
  client: Pick<CnfClient, "get" | "list">,
  targets: readonly RuleTarget[],
  mode: ReadMode,
): Promise<Map<string, HeldObject[]>> {
  const held = new Map<string, HeldObject[]>();
  if (mode === "collections") {
    const byCollection = new Map(targets.map((t) => [t.collection, accessOf(t)]));
    for (const [collection, access] of byCollection) {
      held.set(collection, await client.list(access.ref, access.schemas));
    }
    return held;
  }
  for (const target of targets) {
    const access = accessOf(target);
    const found = await client.get(access.ref, target.objectName, access.schemas);
    const list = held.get(target.collection) ?? [];
    if (found !== undefined) list.push(found);
    held.set(target.collection, list);
  }
  return held;
}

async function executeWrite(
  client: CnfClient,
  write: PlannedWrite,
  target: RuleTarget,
): Promise<void> {
  const { ref, schemas } = accessOf(target);
  if (write.op === "delete") {
    await client.delete(ref, write.objectName);
    return;
  }
  const body = write.body as NonNullable<PlannedWrite["body"]>;
  // POST on a collection with PUT would duplicate firewall objects (anonymous UCI sections):
  // PUT is an upsert there. Only collections without PUT create with POST.
  if (write.op === "create" && ref.update === "delete-then-create") {
    await client.create(ref, body, schemas);
    return;
  }
  await client.update(ref, body, schemas);
}

/**
 * A POST answered 409 means the object appeared since we read (a concurrent delivery of the
 * same event): if it now holds what we want, the rule is held and nothing needs retrying.
 */
async function heldAfterConflict(
  client: CnfClient,
  write: PlannedWrite,
  target: RuleTarget,
  error: unknown,
): Promise<boolean> {
  if (write.op !== "create" || !(error instanceof CnfHttpError) || error.rejection !== "conflict") {
    return false;
  }
  const { ref, schemas } = accessOf(target);
  try {
    const actual = await client.get(ref, write.objectName, schemas);
    return actual !== undefined && target.matches(actual);
  } catch {
    return false;
  }
}

/**
 * A failed read told the same whether the pod was read item by item (a rule event) or by
 * collection (a CNF-wide sync): otherwise each rewrites the rule's status the other wrote, and
 * each write is an event, for as long as the CNF keeps failing.
 */
function readFailureMessage(error: unknown): string {
  if (!isCnfError(error)) return messageOf(error);
  const detail = error.message.slice(`CNF ${error.endpoint} ${error.operation}: `.length);
  return `CNF ${error.endpoint} could not be read: ${detail}`;
}

function failAll(
  pod: string,
  targets: readonly RuleTarget[],
  error: unknown,
): Map<string, PodRuleResult> {
  const failure = { class: failureClass(error), pod, message: readFailureMessage(error) };
  return new Map(targets.map((t) => [t.key, { kind: "failed", failure } as const]));
}

/** How a pod's service restarts are paced (shared/cnf/restarts.ts). */
export interface RestartPacing extends RestartOptions {
  readonly pacer: CnfRestartPacer;
}

/** Syncs `targets` onto one pod. Never throws for CNF failures; they land in the results. */
export async function syncPod(
  client: CnfClient,
  pod: string,
  targets: readonly RuleTarget[],
  mode: ReadMode,
  pacing: RestartPacing,
): Promise<PodSyncResult> {
  let holdings;
  try {
    holdings = holdingsOf(await readHoldings(client, targets, mode));
  } catch (error) {
    return { pod, results: failAll(pod, targets, error), writes: [], restarted: [] };
  }
  const plan = planPodWrites(targets, holdings);
  const byKey = new Map(targets.map((t) => [t.key, t]));
  const results = new Map<string, PodRuleResult>(
    plan.unchanged.map((key) => [key, { kind: "held", changed: false }]),
  );
  const done: PlannedWrite[] = [];
  for (const write of plan.writes) {
    const target = byKey.get(write.ruleKey) as RuleTarget;
    try {
      await executeWrite(client, write, target);
      if (write.service !== null) pacing.pacer.wrote(client.baseUrl, write.service, write.ruleKey);
      done.push(write);
      results.set(write.ruleKey, { kind: "held", changed: true });
    } catch (error) {
      if (await heldAfterConflict(client, write, target, error)) {
        results.set(write.ruleKey, { kind: "held", changed: false });
        continue;
      }
      const failure = { class: failureClass(error), pod, message: messageOf(error) };
      results.set(write.ruleKey, { kind: "failed", failure });
    }
  }
  const touched = [...done, ...plan.restartOnly];
  const restarted = await restartTouched(client, pod, touched, results, pacing);
  return { pod, results, writes: done, restarted };
}

/**
 * Restarts each touched service once, or not at all when a restart begun after the writes already
 * loaded them, or later when pacing defers it (the rules it covers report it as owed, class
 * "deferred", and are redelivered). A failed restart fails the rules it covered with class
 * "restart": their objects are on the pod, so the status must remember that the restart is still
 * owed (plan-status.ts), or the next delivery would find them held and never restart.
 */
async function restartTouched(
  client: CnfClient,
  pod: string,
  touched: readonly ServiceTouch[],
  results: Map<string, PodRuleResult>,
  pacing: RestartPacing,
): Promise<string[]> {
  const restarted: string[] = [];
  for (const service of servicesToRestart(touched)) {
    const covered = touched.filter((t) => t.service === service).map((t) => t.ruleKey);
    const verdict = await pacing.pacer.settle(client.baseUrl, service, covered, pacing, () =>
      client.restartService(service as CnfServiceName),
    );
    if (verdict.kind === "paid") {
      if (verdict.restarted) restarted.push(service);
      continue;
    }
    const failure =
      verdict.kind === "deferred"
        ? {
            class: "deferred" as const,
            pod,
            message: `restart of ${service} deferred to batch a burst of changes (due in ${verdict.dueInMs} ms)`,
            dueInMs: verdict.dueInMs,
          }
        : {
            class: "restart" as const,
            pod,
            message: `restarting ${service} failed: ${messageOf(verdict.error)}`,
          };
    for (const key of covered) results.set(key, { kind: "failed", failure });
  }
  return restarted;
}
