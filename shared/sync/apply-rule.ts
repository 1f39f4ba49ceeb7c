/**
 * The rule's side of sync on the API server: claiming a rule (its finalizer) before anything is
 * written for it on a CNF (ADR 0003), and executing a RuleDecision afterwards (the status through
 * the status subresource, then the finalizer's release). Kubernetes failures become outcomes
 * here: conflicts and outages retry, a rule deleted meanwhile is done.
 */
import {
  isKubeError,
  kubeFailureOutcome,
  retryOnConflict,
  ruleResource,
  type KnownFinalizers,
  type KubeError,
  type KubeObject,
} from "../kube/index.js";
import { requireKind, ruleKey, type RuleKey, type RuleStatus } from "../kinds/index.js";
import { done, retryLater, type Outcome } from "../core/outcome.js";
import { echoBasisOf, processOwnWrites } from "./own-writes.js";
import { SharedReadBacks } from "./read-back-batches.js";
import { observedRule, type RuleIdentity } from "./plan-rules.js";
import {
  planRewrite,
  planSuperseded,
  type ClaimFailure,
  type ObservedRule,
  type RuleAfterWrite,
  type RuleDecision,
} from "./plan-status.js";
import type { SyncStore } from "./store.js";

const now = (): string => new Date().toISOString();

export type { RuleIdentity } from "./plan-rules.js";

/**
 * A JSON merge patch that turns `old` into `next`: fields `next` drops are set to null, so
 * clearing appliedVersion really clears it.
 */
export function statusMergePatch(
  old: RuleStatus | undefined,
  next: RuleStatus,
): Record<string, unknown> {
  const patch: Record<string, unknown> = { ...next };
  for (const key of Object.keys(old ?? {})) {
    if (!(key in next)) patch[key] = null;
  }
  return patch;
}

export type ClaimResult =
  /** `resourceVersion`: the rule's version after the claim, when this claim wrote it. */
  | { readonly claimed: true; readonly resourceVersion?: string }
  | {
      readonly claimed: false;
      readonly outcome: Outcome;
      /** Set when the rule should say why in its status (planClaimFailure). */
      readonly failure?: ClaimFailure;
    };

/**
 * Adds the rule's finalizer, so a rule whose objects reach a CNF can never be deleted without
 * their cleanup, however the writes that follow end.
 */
export async function claimRule(
  store: SyncStore,
  rule: RuleIdentity,
  observed: KnownFinalizers & { readonly echoBasis: string },
): Promise<ClaimResult> {
  const entry = requireKind(rule.kind);
  const key = { namespace: rule.namespace, name: rule.name };
  // This delivery answers for the version its claim writes: that echo is skipped (own-writes.ts).
  let resourceVersion: string | undefined;
  const written = (object: KubeObject) => {
    processOwnWrites.recordWrite(observed.echoBasis, object.metadata);
    resourceVersion = object.metadata.resourceVersion;
  };
  try {
    const type = ruleResource(entry);
    const result = await store.addRuleFinalizer(type, key, entry.finalizer, observed, written);
    if (result === "gone") return { claimed: false, outcome: done("gone") };
    return resourceVersion === undefined ? { claimed: true } : { claimed: true, resourceVersion };
  } catch (error) {
    if (!isKubeError(error)) throw error;
    return claimFailed(store, rule, entry.finalizer, error);
  }
}

/**
 * Nothing was written yet, so a conflict just waits for the next delivery, and so does a refusal
 * of a rule whose deletion has begun (the API server takes no new finalizers then, and the
 * deletion's own event follows). Any other refusal (invalid, forbidden: an admission policy,
 * RBAC, the object's size) is reported in the rule's status, and so is an outage.
 */
async function claimFailed(
  store: SyncStore,
  rule: RuleIdentity,
  finalizer: string,
  error: KubeError,
): Promise<ClaimResult> {
  const outcome = retryLater(`finalizer write failed: ${error.message}`, 2);
  if (error.code === "notFound") return { claimed: false, outcome: done("gone") };
  if (error.code === "conflict") return { claimed: false, outcome };
  if (error.code === "invalid" || error.code === "forbidden") {
    const now = await store
      .getRule(ruleResource(requireKind(rule.kind)), { namespace: rule.namespace, name: rule.name })
      .catch(() => null);
    if (now === undefined) return { claimed: false, outcome: done("gone") };
    if (now?.metadata.deletionTimestamp !== undefined) return { claimed: false, outcome };
    return {
      claimed: false,
      outcome,
      failure: { kind: "refused", finalizer, message: error.message },
    };
  }
  return {
    claimed: false,
    outcome,
    failure: { kind: "unavailable", finalizer, message: error.message },
  };
}

/** The precondition of a write over the rule as read at `resourceVersion` ("" when unknown). */
const asRead = (resourceVersion: string): { readonly resourceVersion?: string } =>
  resourceVersion === "" ? {} : { resourceVersion };

/**
 * Writes `status` (planApplying) before the CNF writes, over the rule as read. A failure
 * (a conflict included) is left to the status write after them, which says what happened
 * either way. Returns the rule's version after the write, when it was written.
 */
export async function markApplying(
  store: SyncStore,
  rule: RuleIdentity,
  oldStatus: RuleStatus | undefined,
  status: RuleStatus,
  read: { readonly echoBasis: string; readonly resourceVersion: string },
): Promise<string | undefined> {
  const type = ruleResource(requireKind(rule.kind));
  const key = { namespace: rule.namespace, name: rule.name };
  try {
    const { metadata } = await store.patchRuleStatus(
      type,
      key,
      statusMergePatch(oldStatus, status),
      asRead(read.resourceVersion),
    );
    processOwnWrites.recordWrite(read.echoBasis, metadata);
    return metadata.resourceVersion;
  } catch (error) {
    if (!isKubeError(error)) throw error;
    return undefined;
  }
}

/** Status writes refused with 409 are re-read and re-planned this many times in all. */
const STATUS_WRITE_ATTEMPTS = 4;

export interface DecisionResult {
  readonly outcome: Outcome;
  /** The rule as the status write answered (or "gone"); undefined when nothing was written. */
  readonly after: RuleAfterWrite | undefined;
  /** Set when the finalizer's release failed other than by a conflict: the status should say why. */
  readonly finalizerFailure?: ClaimFailure;
  /** The decision as finally written (re-planned after a 409), for the rule's Event. */
  readonly decision: RuleDecision;
  /**
   * Set when the rule changed since it was read into one the decision is not about (planRewrite):
   * nothing was written; the rule as re-read.
   */
  readonly stale?: { readonly raw: KubeObject; readonly observed: ObservedRule };
}

/**
 * The status write, over the rule as read (a precondition on its resourceVersion): a rule
 * changed since is re-read and the decision re-planned from it (`replan`), so a status is never
 * written from a stale read over a newer one. When the re-read rule is not the one the decision
 * is about (`replan` answers null: another generation, a deletion begun), nothing is written and
 * the result says so (`stale`). Otherwise its echo is our own (own-writes.ts).
 */
async function writeStatus(
  store: SyncStore,
  rule: RuleIdentity,
  first: RuleDecision,
  read: {
    readonly status: RuleStatus | undefined;
    readonly echoBasis?: string;
    readonly resourceVersion: string;
    readonly replan?: Replan;
  },
): Promise<Omit<DecisionResult, "outcome"> & { readonly decision: RuleDecision }> {
  const type = ruleResource(requireKind(rule.kind));
  const key = { namespace: rule.namespace, name: rule.name };
  let decision = first;
  let base: { status: RuleStatus | undefined; echoBasis?: string; resourceVersion: string } = read;
  return retryOnConflict({ attempts: STATUS_WRITE_ATTEMPTS }, async (attempt) => {
    if (attempt > 1) {
      const raw = await store.getRule(type, key);
      if (raw === undefined) return { decision, after: "gone" as const };
      const after = {
        uid: raw.metadata.uid,
        deleting: raw.metadata.deletionTimestamp !== undefined,
      };
      const fresh = observedRule(raw.metadata, rule.kind, raw["status"]);
      const next = read.replan?.(fresh, raw.metadata.uid) ?? null;
      if (next === null) return { decision, after, stale: { raw, observed: fresh } };
      decision = next;
      base = {
        status: fresh.status,
        echoBasis: echoBasisOf(raw.metadata),
        resourceVersion: fresh.resourceVersion,
      };
    }
    const status = decision.status;
    if (status === null) return { decision, after: undefined };
    const { metadata } = await store.patchRuleStatus(
      type,
      key,
      statusMergePatch(base.status, status),
      asRead(base.resourceVersion),
    );
    const superseded = planSuperseded(status, metadata.generation, now());
    if (superseded !== null) {
      await store.patchRuleStatus(type, key, statusMergePatch(status, superseded));
    } else if (base.echoBasis !== undefined) {
      processOwnWrites.recordWrite(base.echoBasis, metadata, status.inSync === true);
    }
    const after = { uid: metadata.uid, deleting: metadata.deletionTimestamp !== undefined };
    return { decision, after };
  });
}

/**
 * The decision again, for the rule as re-read after a 409; null when the pod results it was made
 * from are not about that rule (plan-status.ts planRewrite).
 */
export type Replan = (fresh: ObservedRule, uid: string | undefined) => RuleDecision | null;

/**
 * A Replan from a planner of the decision for a rule, as first read (`planned`, `uid`); a rule
 * replaced by a new one of the same name is never re-planned for.
 */
export function replanWith(
  planned: ObservedRule,
  uid: string | undefined,
  plan: (rule: ObservedRule) => RuleDecision,
): Replan {
  return (fresh, freshUid) =>
    freshUid === uid && planRewrite(planned, fresh) === "replan" ? plan(fresh) : null;
}

export async function applyRuleDecision(
  store: SyncStore,
  rule: RuleIdentity,
  oldStatus: RuleStatus | undefined,
  given: RuleDecision,
  /**
   * As read, with echoBasisOf the rule decided on (own-writes.ts), to know our write's echo, and
   * how to decide again when the rule changed since it was read (without it, nothing is).
   */
  observed: KnownFinalizers & { readonly echoBasis?: string; readonly replan?: Replan },
): Promise<DecisionResult> {
  const entry = requireKind(rule.kind);
  const type = ruleResource(entry);
  const key = { namespace: rule.namespace, name: rule.name };
  let after: RuleAfterWrite | undefined;
  let decision = given;
  try {
    if (decision.status !== null) {
      const read = { ...observed, status: oldStatus };
      const written = await writeStatus(store, rule, decision, read);
      if (written.stale !== undefined) {
        const outcome = done("the rule changed while it was applied");
        return { outcome, after: written.after, stale: written.stale, decision };
      }
      after = written.after;
      decision = written.decision;
    }
  } catch (error) {
    if (isKubeError(error, "notFound")) return { outcome: done("gone"), after: "gone", decision };
    return { outcome: kubeFailureOutcome(error, "status write"), after, decision };
  }
  if (after === "gone") return { outcome: done("gone"), after, decision };
  if (decision.finalizer === "remove") {
    try {
      // A rule on its way out got no status write (planRuleDecision), so `observed` is current
      // unless someone else wrote meanwhile.
      await store.removeRuleFinalizer(type, key, entry.finalizer, observed);
    } catch (error) {
      if (isKubeError(error, "notFound")) {
        return { outcome: done("gone"), after: "gone", decision };
      }
      const outcome = kubeFailureOutcome(error, "finalizer write");
      if (!isKubeError(error) || error.code === "conflict") return { outcome, after, decision };
      // Refused or failing: the rule stays Terminating, so its status must say why (issue 17).
      const kind = error.code === "unavailable" ? "unavailable" : "refused";
      const failure: ClaimFailure = {
        kind,
        change: "remove",
        finalizer: entry.finalizer,
        message: error.message,
      };
      return { outcome, after, finalizerFailure: failure, decision };
    }
  }
  return { outcome: decision.outcome, after, decision };
}

/** How long a lone rule's read-back waits for others of a burst to share its read (ADR 0021). */
const SHARED_READ_BACK_DELAY_MS = 200;

const sharedReadBacks = new SharedReadBacks<Exclude<RuleAfterWrite, "gone">>();

/** The rules named `names` of one kind and namespace: a GET for one, a LIST of the namespace else. */
async function readBack(
  store: SyncStore,
  kind: string,
  namespace: string,
  names: readonly string[],
): Promise<Map<string, Exclude<RuleAfterWrite, "gone">>> {
  const type = ruleResource(requireKind(kind));
  const [only] = names;
  const objects =
    names.length === 1 && only !== undefined
      ? [await store.getRule(type, { namespace, name: only })]
      : await store.listRules(type, { namespace });
  const found = new Map<string, Exclude<RuleAfterWrite, "gone">>();
  for (const object of objects) {
    if (object === undefined) continue;
    const { metadata } = object;
    found.set(metadata.name, {
      uid: metadata.uid,
      deleting: metadata.deletionTimestamp !== undefined,
    });
  }
  return found;
}

/**
 * The rules read back (those whose status write did not answer already): one LIST of the
 * namespace for several of a kind, so a CNF-wide sync costs at most one request per kind; a lone
 * rule's read is shared with the burst's others (SharedReadBacks). A rule not found is "gone".
 */
export async function readRulesAfterWrite(
  store: SyncStore,
  rules: readonly RuleIdentity[],
): Promise<Map<RuleKey, RuleAfterWrite>> {
  const found = new Map<RuleKey, RuleAfterWrite>();
  const byKind = Map.groupBy(rules, (r) => `${r.kind}/${r.namespace}`);
  await Promise.all(
    [...byKind.entries()].map(async ([group, members]) => {
      const first = members[0];
      if (first === undefined) return;
      const { kind, namespace } = first;
      if (members.length === 1) {
        const one = await sharedReadBacks.read(
          group,
          first.name,
          SHARED_READ_BACK_DELAY_MS,
          (names) => readBack(store, kind, namespace, names),
        );
        if (one !== undefined) found.set(ruleKey(first), one);
        return;
      }
      const many = await readBack(
        store,
        kind,
        namespace,
        members.map((m) => m.name),
      );
      for (const [name, after] of many) found.set(ruleKey({ kind, name }), after);
    }),
  );
  return new Map(
    rules.map((r) => {
      const key = ruleKey(r);
      return [key, found.get(key) ?? "gone"];
    }),
  );
}
