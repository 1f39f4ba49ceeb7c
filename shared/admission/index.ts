/**
 * shared/admission: everything validate-admission decides. The pipeline: parseAdmissionReview
 * (review.ts) -> planObservation (plan-scope.ts: what to read) -> observeAdmission (observe.ts,
 * over the one I/O module kube-reader.ts) -> planAdmission (the pure plan-*.ts policies over
 * snapshot.ts) -> buildAdmissionResponse (verdict.ts); on-review.ts (admit) runs it from body to
 * reply. webhook-config.ts builds the ValidatingWebhookConfiguration from the rule registry.
 * Does not: serve HTTP or TLS, name a rule kind, write to the API server, or call a CNF.
 * The policies in order: manifests/webhook/README.md; more: docs/code-notes.md (admission).
 */
export {
  ADMISSION_API_VERSION,
  parseAdmissionReview,
  type AdmissionOperation,
  type AdmissionRequest,
  type KubeObject,
  type ParsedReview,
} from "./review.js";
export {
  POLICY,
  WARNING_TOTAL_RUNES,
  buildAdmissionResponse,
  denialMessage,
  type AdmissionResponseBody,
  type Allowance,
  type Denial,
  type PolicyName,
  type Verdict,
} from "./verdict.js";
export {
  classifyRequest,
  planAdmission,
  planObservation,
  type AdmissionSubject,
  type ObservationPlan,
} from "./plan-admission.js";
export {
  EMPTY_SNAPSHOT,
  type AdmissionSnapshot,
  type ObservedCnf,
  type ObservedRule,
  type RbacSnapshot,
  type SecretAccess,
} from "./snapshot.js";
export {
  BUCKET_LABEL,
  BUCKET_PERMISSION_ANNOTATION,
  CLUSTER_ADMIN_GROUP,
  bindingsForUser,
  rolesGrantedBy,
  type AnnotatedRole,
  type Binding,
  type RoleKey,
} from "./rbac.js";
export { ruleKinds, type AdmissionKinds, type AdmissionRuleKind } from "./kinds.js";
export {
  IN_CLUSTER,
  buildWebhookConfiguration,
  renderWebhookManifest,
  type WebhookClientConfig,
} from "./webhook-config.js";
export { admit, type AdmissionReply, type AdmitContext } from "./on-review.js";
export { type CnfStateAccess, type DryRunPlanner } from "./dry-run.js";
export { kubeAdmissionReader } from "./kube-reader.js";
export {
  countingReader,
  decideAdmission,
  readsNothing,
  type AdmissionReader,
  type ReadConsistency,
  type ReviewedUser,
} from "./observe.js";
