/**
 * shared/sync: brings SDEWAN rules in sync on every ready pod of their CNF and records the result
 * on each rule's status. Entries (on-event.ts): syncRuleEvent for reconcile-rule, syncCnfEvent for
 * on-deployment-ready and the resync. The API only through the SyncStore (store.ts; kube-store.ts
 * built by the entries); reads in observe.ts; pure plan-*.ts (scope, targets, writes, status,
 * prune, preview); shells apply-pod, apply-rule, sync (syncRules), resync (runCnfWork),
 * prune-ledger. preview.ts serves dry runs and `npm run plan`.
 * Does not: parse events, speak HTTP, name a rule kind, or keep anything between events.
 * Each module's part: docs/code-notes.md (sync); the resync: docs/resync.md.
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
export type { CnfEventContext, SyncEntryContext } from "./on-event.js";
export { kubeSyncStore } from "./kube-store.js";
export type { SyncStore } from "./store.js";
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
