/**
 * shared/kinds: the schema of every kind we define or read, and the CRDs generated from them
 * (crds.ts, converted by structural-schema.ts): Egress and EgressGroup (egress.ts), the netpol
 * tables (netpol.ts), ClusterLink (clusterlink.ts), and the one registry of SDEWAN rule kinds
 * (batch.sdewan.akraino.org/v1alpha1; registry.ts, each kind in rules/): per kind, as data and
 * pure functions, its schemas, names, finalizer, CNF collection and service, references and
 * apply order, CR -> CNF conversion and comparison. No I/O: callers read objects, then ask
 * what they mean. Example: docs/code-notes.md (shared/kinds).
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
export { FIELD_LIMITS } from "./rules/fields.js";
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
export type { Mwan3PolicySpec, Mwan3RuleSpec } from "./rules/mwan3.js";
export type {
  FirewallZoneSpec,
  FirewallSnatSpec,
  FirewallDnatSpec,
  FirewallForwardingSpec,
  FirewallRuleSpec,
} from "./rules/firewall.js";
export type { IpsecProposalSpec, IpsecSiteSpec, IpsecHostSpec } from "./rules/ipsec.js";
export type { CnfServiceSpec } from "./rules/cnf-service.js";
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
} from "./egress.js";
export * from "./netpol.js";
