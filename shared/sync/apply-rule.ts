/**
 * The rule's side of sync on the API server: claiming a rule (its finalizer) before anything is
 * written for it on a CNF (ADR 0003), and executing a RuleDecision afterwards (the status through
 * the status subresource, then the finalizer's release). Kubernetes failures become outcomes
 * here: conflicts and outages retry, a rule deleted meanwhile is done.
 */
import {
  isKubeError,
  kubeFailureOutcome,
  ruleResource,
  type KnownFinalizers,
  type KubeClient,
  type KubeError,
  type KubeObject,
} from "../kube/index.js";
import { requireKind, ruleKey, type RuleKey, type RuleStatus } from "../rules/index.js";
import { done, retryLater, type Outcome } from "../core/outcome.js";
import { processOwnWrites } from "./own-writes.js";
import type { RuleIdentity } from "./plan-rules.js";
import {
  planSuperseded,
  type ClaimFailure,
  type RuleAfterWrite,
  type RuleDecision,
} from "./plan-status.js";

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
  | { readonly claimed: true }
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
  kube: KubeClient,
  rule: RuleIdentity,
  observed: KnownFinalizers & { readonly echoBasis: string },
): Promise<ClaimResult> {
  const entry = requireKind(rule.kind);
  const key = { namespace: rule.namespace, name: rule.name };
  // This delivery answers for the version its claim writes: that echo is skipped (own-writes.ts).
  const written = (object: KubeObject) =>
    processOwnWrites.recordWrite(observed.echoBasis, object.metadata);
  try {
    const type = ruleResource(entry);
    const result = await kube.addFinalizer(type, key, entry.finalizer, observed, written);
    return result === "gone" ? { claimed: false, outcome: done("gone") } : { claimed: true };
  } catch (error) {
    if (!isKubeError(error)) throw error;
    return claimFailed(kube, rule, entry.finalizer, error);
  }
}

/**
 * Nothing was written yet, so a conflict just waits for the next delivery, and so does a refusal
 * of a rule whose deletion has begun (the API server takes no new finalizers then, and the
 * deletion's own event follows). Any other refusal (invalid, forbidden: an admission policy,
 * RBAC, the object's size) is reported in the rule's status, and so is an outage.
 */
async function claimFailed(
  kube: KubeClient,
  rule: RuleIdentity,
  finalizer: string,
  error: KubeError,
): Promise<ClaimResult> {
  const outcome = retryLater(`finalizer write failed: ${error.message}`, 2);
  if (error.code === "notFound") return { claimed: false, outcome: done("gone") };
  if (error.code === "conflict") return { claimed: false, outcome };
  if (error.code === "invalid" || error.code === "forbidden") {
    const now = await kube
      .get(ruleResource(requireKind(rule.kind)), { namespace: rule.namespace, name: rule.name })
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

/**
 * Writes `status` (planApplying) before the CNF writes. A failure is left to the status write
 * after them, which says what happened either way.
 */
export async function markApplying(
  kube: KubeClient,
  rule: RuleIdentity,
  oldStatus: RuleStatus | undefined,
  status: RuleStatus,
  echoBasis: string,
): Promise<void> {
  const type = ruleResource(requireKind(rule.kind));
  const key = { namespace: rule.namespace, name: rule.name };
  try {
    const { metadata } = await kube.patchStatus(type, key, statusMergePatch(oldStatus, status));
    processOwnWrites.recordWrite(echoBasis, metadata);
  } catch (error) {
    if (!isKubeError(error)) throw error;
  }
}

export interface DecisionResult {
  readonly outcome: Outcome;
  /** The rule as the status write answered (or "gone"); undefined when nothing was written. */
  readonly after: RuleAfterWrite | undefined;
  /** Set when the finalizer's release failed other than by a conflict: the status should say why. */
  readonly finalizerFailure?: ClaimFailure;
}

/**
 * The status write, corrected at once when its answer shows a newer generation (Superseded).
 * Otherwise its echo is our own (own-writes.ts); an in-sync one may be skipped however read.
 */
async function writeStatus(
  kube: KubeClient,
  rule: RuleIdentity,
  oldStatus: RuleStatus | undefined,
  status: RuleStatus,
  echoBasis: string | undefined,
): Promise<RuleAfterWrite> {
  const type = ruleResource(requireKind(rule.kind));
  const key = { namespace: rule.namespace, name: rule.name };
  const { metadata } = await kube.patchStatus(type, key, statusMergePatch(oldStatus, status));
  const superseded = planSuperseded(status, metadata.generation, now());
  if (superseded !== null) {
    await kube.patchStatus(type, key, statusMergePatch(status, superseded));
  } else if (echoBasis !== undefined) {
    processOwnWrites.recordWrite(echoBasis, metadata, status.inSync === true);
  }
  return { uid: metadata.uid, deleting: metadata.deletionTimestamp !== undefined };
}

export async function applyRuleDecision(
  kube: KubeClient,
  rule: RuleIdentity,
  oldStatus: RuleStatus | undefined,
  decision: RuleDecision,
  /** As read, with echoBasisOf the rule decided on (own-writes.ts), to know our write's echo. */
  observed: KnownFinalizers & { readonly echoBasis?: string },
): Promise<DecisionResult> {
  const entry = requireKind(rule.kind);
  const type = ruleResource(entry);
  const key = { namespace: rule.namespace, name: rule.name };
  let after: RuleAfterWrite | undefined;
  try {
    if (decision.status !== null) {
      after = await writeStatus(kube, rule, oldStatus, decision.status, observed.echoBasis);
    }
  } catch (error) {
    if (isKubeError(error, "notFound")) return { outcome: done("gone"), after: "gone" };
    return { outcome: kubeFailureOutcome(error, "status write"), after };
  }
  if (decision.finalizer === "remove") {
    try {
      // A rule on its way out got no status write (planRuleDecision), so `observed` is current
      // unless someone else wrote meanwhile.
      await kube.removeFinalizer(type, key, entry.finalizer, observed);
    } catch (error) {
      if (isKubeError(error, "notFound")) return { outcome: done("gone"), after: "gone" };
      const outcome = kubeFailureOutcome(error, "finalizer write");
      if (!isKubeError(error) || error.code === "conflict") return { outcome, after };
      // Refused or failing: the rule stays Terminating, so its status must say why (issue 17).
      const kind = error.code === "unavailable" ? "unavailable" : "refused";
      const failure: ClaimFailure = {
        kind,
        change: "remove",
        finalizer: entry.finalizer,
        message: error.message,
      };
      return { outcome, after, finalizerFailure: failure };
    }
  }
  return { outcome: decision.outcome, after };
}

/**
 * The rules read back (those whose status write did not answer already): one GET for a lone
 * rule of a kind, one LIST of the namespace for several, so a CNF-wide sync costs at most one
 * request per kind. A rule absent from the answer is "gone".
 */
export async function readRulesAfterWrite(
  kube: KubeClient,
  rules: readonly RuleIdentity[],
): Promise<Map<RuleKey, RuleAfterWrite>> {
  const found = new Map<RuleKey, RuleAfterWrite>();
  const byKind = Map.groupBy(rules, (r) => `${r.kind}/${r.namespace}`);
  await Promise.all(
    [...byKind.values()].map(async (group) => {
      const first = group[0];
      if (first === undefined) return;
      const type = ruleResource(requireKind(first.kind));
      const objects =
        group.length === 1
          ? [await kube.get(type, { namespace: first.namespace, name: first.name })]
          : await kube.list(type, { namespace: first.namespace });
      for (const object of objects) {
        if (object === undefined) continue;
        const { metadata } = object;
        found.set(ruleKey({ kind: first.kind, name: metadata.name }), {
          uid: metadata.uid,
          deleting: metadata.deletionTimestamp !== undefined,
        });
      }
    }),
  );
  return new Map(
    rules.map((r) => {
      const key = ruleKey(r);
      return [key, found.get(key) ?? "gone"];
    }),
  );
}
