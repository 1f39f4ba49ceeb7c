/**
 * shared/sync: brings SDEWAN rules in sync on every ready pod of their CNF and records the result
 * on each rule's status. reconcile-rule syncs one rule (syncRules), on-deployment-ready and the
 * resync a whole CNF or many (runCnfWork).
 *
 * Owns: reading a CNF's Deployment, Pods and rules (observe.ts; the types in observed.ts); the
 * pure plans: which CNF an event concerns (plan-scope), each rule's target and collisions
 * (plan-rules, plan-targets), the writes per pod (plan-writes), the status and finalizer decision
 * (plan-status), pruning (plan-prune, plan-pods); and the shells that execute them on a pod
 * (apply-pod), on a rule (apply-rule) and on a CNF (sync, resync, prune-ledger). The preview of
 * a change before it is made (preview.ts reads, plan-preview decides with the same planners,
 * plan-preview-text words it): `kubectl apply --dry-run=server` and `npm run plan`.
 *
 * Does not: parse events (shared/events), speak HTTP (shared/runtime), know a rule kind by name
 * (shared/rules answers for each kind), or keep anything between events.
 *
 * Example:
 *   const { rule, cnf } = await observeRuleAndCnf(kube, key);
 *   const report = await syncRules(ctx, { observation: cnf, rules: [parseRuleObject(rule)],
 *     readMode: "items" });
 */
export { syncRules } from "./sync.js";
export type { CnfRuleCount, RuleReport, SyncContext, SyncReport, SyncRequest } from "./sync.js";
export { isOutOfSync, notInSyncCounts } from "./sync-counts.js";
export { runCnfWork } from "./resync.js";
export type { CnfBatchReport, CnfSyncOptions, ScopeReport } from "./resync.js";
export { observeCnf, observeCnfOf, observeRuleAndCnf, listRulesOfScope } from "./observe.js";
export type { RuleAndCnf } from "./observe.js";
export { parseRuleObject } from "./observed.js";
export type { CnfObservation, CnfScope, ObservedRuleCr } from "./observed.js";
export type { RuleIdentity } from "./plan-rules.js";
export {
  cnfObjectKind,
  planObjectWork,
  planResyncWork,
  type CnfObjectKind,
  type CnfWork,
  type ObjectWorkInput,
} from "./plan-scope.js";
export {
  DEFAULT_LEDGER_NAMESPACE,
  LEDGER_ANNOTATION,
  LEDGER_KEY,
  ledgerName,
  ledgerNamespace,
} from "./prune-ledger.js";
export { PRUNE_ANNOTATION } from "./plan-prune.js";
export { syncCnfEvent, syncRuleEvent } from "./on-event.js";
export type { CnfEventContext } from "./on-event.js";
export { processOwnWrites } from "./own-writes.js";
export {
  DEFAULT_CNF_CREDENTIALS_SECRET,
  cnfCredentialsSecret,
  previewChanges,
  previewReviewWarnings,
  readCnfCredentials,
  type PreviewContext,
  type PreviewReport,
  type ReviewPreviewContext,
  type RuleChange,
  type SecretName,
  type Skipped,
} from "./preview.js";
export {
  ruleAfterApply,
  ruleAfterDelete,
  type CnfPlan,
  type CnfRequest,
  type PacingSettings,
  type PodPlan,
  type RulePlan,
  type RulePodPlan,
} from "./plan-preview.js";
export { WARNING_LINE_CHARS, planTable, planWarnings } from "./plan-preview-text.js";
