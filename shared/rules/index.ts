/**
 * shared/rules: the one registry of SDEWAN rule kinds (group batch.sdewan.akraino.org/v1alpha1).
 *
 * Owns, per kind, as data and pure functions: spec/CR/status zod schemas, plural and short
 * names, finalizer, CNF module/collection and the service restarted after a change, references
 * to other kinds and the apply order they imply, CR -> CNF conversion, normalised comparison
 * with what the CNF returns, and the zod schemas of CNF replies. Also the EgressGroup and
 * Antrea Egress schemas, ClusterLink's kinds (clusterlink-kinds.ts, which shared/clusterlink
 * re-exports and gives meaning to), and the CRD manifests generated from all of these.
 *
 * Does not do I/O: no Kubernetes client, no HTTP, no express. Callers read objects, then ask
 * the registry what they mean.
 *
 * Example:
 *   const entry = requireKind(cr.kind);                  // UnknownRuleKindError lists the kinds
 *   const parsed = entry.parseCr(cr);                     // { ok, value } | { ok:false, message }
 *   const networks = networkMapOfDeployment(deployment);  // from the nfn-network annotation
 *   const body = entry.toCnf(parsed.value, { networks }); // POST/PUT body for entry.cnf.path
 *   if (!entry.cnfEqual(body, cnfGetReply)) ...           // write only when different
 */
export {
  RULE_GROUP,
  RULE_VERSION,
  RULE_API_VERSION,
  PURPOSE_LABEL,
  BUCKET_TYPE_LABEL,
  RULE_CONDITION_TYPES,
  ruleLabelsSchema,
  ruleMetadataSchema,
  ruleConditionSchema,
  ruleStatusSchema,
  issuesFromZod,
  PARSE_OPTIONS,
  RULE_SPEC_MAX_BYTES,
  specSizeProblem,
  type RuleMetadata,
  type RuleCondition,
  type RuleConditionType,
  type RuleStatus,
} from "./common.js";
export { ruleKey, type RuleKey } from "./rule-key.js";
export { FIELD_LIMITS } from "./kinds/fields.js";
export {
  RuleError,
  InvalidRuleSpecError,
  NetworkNotMappedError,
  UnknownRuleKindError,
  type RuleErrorCode,
  type SpecIssue,
} from "./errors.js";
export {
  NFN_NETWORK_ANNOTATION,
  EMPTY_NETWORK_MAP,
  parseNfnNetworkAnnotation,
  networkMapOfDeployment,
  type NetworkInterfaceMap,
  type DeploymentWithTemplateAnnotations,
} from "./network-map.js";
export {
  normaliseCnfObject,
  diffCnfObjects,
  type CnfShape,
  type CnfRecordListShape,
  type CnfObject,
  type CnfRecord,
  type CnfValue,
  type NormalisedRecord,
  type NormalisedValue,
} from "./cnf-shape.js";
export {
  RULE_KIND_NAMES,
  type RuleKindName,
  type RuleKindEntry,
  type RuleCr,
  type RuleCrInput,
  type RuleReference,
  type NetworkUse,
  type ConversionContext,
  type CnfCollection,
  type CnfModule,
  type CnfServiceName,
  type NameRule,
  type ParseResult,
  type RuleExample,
  type ExampleRef,
  type SecretKeyRefUse,
  type CnfUniqueName,
} from "./entry.js";
export {
  ALL_RULE_KINDS,
  byKind,
  byPlural,
  requireKind,
  isRuleKind,
  compareApplyOrder,
  sortForApply,
  sortForDelete,
  kindsReferencing,
  kindsSharingCollection,
} from "./registry.js";
export {
  exampleCounts,
  exampleName,
  exampleRule,
  exampleRules,
  type ExampleRule,
} from "./examples.js";
export type { Mwan3PolicySpec, Mwan3RuleSpec } from "./kinds/mwan3.js";
export type {
  FirewallZoneSpec,
  FirewallSnatSpec,
  FirewallDnatSpec,
  FirewallForwardingSpec,
  FirewallRuleSpec,
} from "./kinds/firewall.js";
export type { IpsecProposalSpec, IpsecSiteSpec, IpsecHostSpec } from "./kinds/ipsec.js";
export type { CnfServiceSpec } from "./kinds/cnf-service.js";
export {
  EGRESS_API_GROUP,
  EGRESS_VERSION,
  EGRESS_API_VERSION,
  EGRESS_KIND,
  EGRESS_PLURAL,
  EGRESS_GROUP_API_GROUP,
  EGRESS_GROUP_VERSION,
  EGRESS_GROUP_API_VERSION,
  EGRESS_GROUP_KIND,
  EGRESS_GROUP_PLURAL,
  labelSelectorSchema,
  labelSelectorRequirementSchema,
  egressSpecSchema,
  egressStatusSchema,
  egressConditionSchema,
  egressSchema,
  egressGroupMemberSchema,
  egressGroupConditionSchema,
  egressGroupStatusSchema,
  egressGroupSchema,
  type LabelSelector,
  type Egress,
  type EgressSpec,
  type EgressGroup,
  type EgressGroupMember,
  type EgressGroupStatus,
} from "./egress-kinds.js";
export * from "./netpol-kinds.js";
