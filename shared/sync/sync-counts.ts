/**
 * How many rules of each CNF a CNF-wide sync left out of sync: the value of the
 * sdewan_rules_not_in_sync gauge (set by the runtime through SyncContext.onCnfsSynced).
 *
 * A rule is out of sync when its outcome is not done (a retry: the CNF rejected it for now, is
 * unreachable or failing; permanent: Stalled), or when it is done only because its CNF has no
 * ready pod (the resync answers "waiting for CNF" so as not to be redelivered), or when its CNF
 * keeps losing it after it is written back (RepeatedDrift, also counted on its own). A scope whose
 * reads failed says nothing about its rules and is left out; so is pruning, which is no rule.
 */
import type { Outcome } from "../core/outcome.js";
import { REPEATED_DRIFT, WAITING_FOR_CNF } from "./plan-status.js";

/** One CNF's rules after a sync of it. */
export interface CnfRuleCount {
  readonly namespace: string;
  /** The CNF's sdewanPurpose label. */
  readonly cnf: string;
  readonly notInSync: number;
  /** Of those, the rules the CNF keeps losing after they are written back (RepeatedDrift). */
  readonly repeatedDrift: number;
}

/** What the counts read of a CNF-wide sync's report (resync.ts's CnfBatchReport). */
interface CountedReport {
  readonly scopes: readonly {
    readonly situation: string;
    readonly scope: { readonly namespace: string; readonly purpose: string };
    readonly sync?: { readonly rules: readonly { readonly outcome: Outcome }[] } | undefined;
  }[];
}

export function isOutOfSync(outcome: Outcome): boolean {
  return outcome.kind !== "done" || outcome.result === WAITING_FOR_CNF || isRepeatedDrift(outcome);
}

/** A rule its CNF keeps losing after it is written back (plan-status.ts, RepeatedDrift). */
export function isRepeatedDrift(outcome: Outcome): boolean {
  return outcome.kind === "done" && outcome.result === REPEATED_DRIFT;
}

export function notInSyncCounts(report: CountedReport): CnfRuleCount[] {
  return report.scopes
    .filter((scope) => scope.situation !== "failed")
    .map((scope) => ({
      namespace: scope.scope.namespace,
      cnf: scope.scope.purpose,
      notInSync: (scope.sync?.rules ?? []).filter((rule) => isOutOfSync(rule.outcome)).length,
      repeatedDrift: (scope.sync?.rules ?? []).filter((rule) => isRepeatedDrift(rule.outcome))
        .length,
    }));
}

/** Whether the counts cover every CNF of the cluster: a cluster-wide sync where no scope failed. */
export function coversCluster(workKind: string, report: CountedReport): boolean {
  return workKind === "all" && report.scopes.every((scope) => scope.situation !== "failed");
}
