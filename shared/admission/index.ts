/**
 * shared/admission: everything validate-admission decides: pure policies, and the thin shells
 * that read for them and run one review.
 *
 * Owns: AdmissionReview v1 parsing (review.ts), the response format (verdict.ts), the policies
 * (plan-*.ts) over an observed-state snapshot (snapshot.ts), what must be observed for a request
 * (planObservation), the read-only observation shell (observe.ts), and the
 * ValidatingWebhookConfiguration built from the rule registry (webhook-config.ts).
 *
 * The one I/O module is kube-reader.ts (the AdmissionReader over shared/kube); admit.ts runs a
 * review from body to reply.
 *
 * Does not: serve HTTP or TLS (functions/validate-admission), know any rule kind by name (the
 * registry in shared/rules answers), write to the API server, or call a CNF (a dry run's plan,
 * dry-run.ts, comes from the DryRunPlanner the function wires: shared/sync's preview).
 *
 * Policies, in the order they run (first denial wins):
 *   rules:       bucket-permission, immutable-purpose, rule-spec, rule-dependencies,
 *                secret-access, cnf-networks, cnf-unique-names (a DELETE is reviewed for its
 *                bucket only, ADR 0010)
 *   Deployments: immutable-purpose, one-cnf-per-purpose
 * Objects without the `sdewan-bucket-type` label are governed by RBAC alone.
 *
 * Example:
 *   const parsed = parseAdmissionReview(body);               // 400 when !parsed.ok
 *   const needs = planObservation(parsed.request);           // what to read, nothing more
 *   const verdict = planAdmission(parsed.request, snapshot); // pure
 *   return buildAdmissionResponse(parsed.request.uid, verdict);
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
export { admit, type AdmissionReply, type AdmitContext } from "./admit.js";
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
