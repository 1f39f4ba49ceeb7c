/**
 * The view of the rule registry (shared/kinds) that admission needs. Admission never names a rule
 * kind: plural, spec schema, name rule, references and network names all come from the registry.
 */
import {
  ALL_RULE_KINDS,
  RULE_GROUP,
  isRuleKind,
  parseNfnNetworkAnnotation,
  type NetworkInterfaceMap,
  type NetworkUse,
  type CnfUniqueName,
  type RuleKindEntry,
  type RuleReference,
  type SpecIssue,
} from "../kinds/index.js";
import { messageOf } from "../core/error-message.js";

export type { CnfUniqueName, NetworkUse, RuleReference } from "../kinds/index.js";

export type ParsedSpec =
  | { readonly ok: true; readonly spec: unknown }
  | { readonly ok: false; readonly issues: readonly SpecIssue[] };

export interface AdmissionRuleKind {
  readonly kind: string;
  readonly plural: string;
  parseSpec(spec: unknown): ParsedSpec;
  /** Null when metadata.name is acceptable to the CNF, else why not. */
  checkName(name: string): string | null;
  /** References to other rules of a spec that parsed. */
  references(spec: unknown): readonly RuleReference[];
  /** Networks a spec that parsed names; each must be attached to the CNF. */
  networks(spec: unknown): readonly NetworkUse[];
  /** Names a spec that parsed gives that must be unique on its CNF. */
  cnfUniqueNames(spec: unknown): readonly CnfUniqueName[];
  /** The Secrets a spec that parsed names ({name, key} and the field naming them). */
  secretRefs(
    spec: unknown,
  ): readonly { readonly refField: string; readonly name: string; readonly key: string }[];
  /** Key material a spec gives in plain text where a Secret reference could be used. */
  plainSecretFields(
    spec: unknown,
  ): readonly { readonly field: string; readonly refField: string }[];
}

export type ParsedNetworks =
  | { readonly ok: true; readonly networks: NetworkInterfaceMap }
  | { readonly ok: false; readonly problem: string };

export interface AdmissionKinds {
  /** API group of every rule kind. */
  readonly group: string;
  readonly kinds: readonly AdmissionRuleKind[];
  find(kind: string): AdmissionRuleKind | undefined;
  /** The network map from a CNF Deployment's `k8s.plugin.opnfv.org/nfn-network` annotation. */
  parseNfnNetworks(annotation: string | undefined): ParsedNetworks;
  /** Kinds whose cnfUniqueNames share one namespace on the CNF with `kind`'s (itself included). */
  uniqueNameKindsOf(kind: string): readonly AdmissionRuleKind[];
}

function viewOf(entry: RuleKindEntry): AdmissionRuleKind {
  return {
    kind: entry.kind,
    plural: entry.plural,
    parseSpec: (spec) => {
      const parsed = entry.parseSpec(spec);
      return parsed.ok ? { ok: true, spec: parsed.value } : { ok: false, issues: parsed.issues };
    },
    checkName: (name) => entry.checkName(name),
    references: (spec) => entry.references(spec),
    networks: (spec) => entry.networks(spec),
    cnfUniqueNames: (spec) => entry.cnfUniqueNames(spec),
    secretRefs: (spec) => entry.secretRefs(spec),
    plainSecretFields: (spec) => entry.plainSecretFields(spec),
  };
}

const VIEWS = new Map(ALL_RULE_KINDS.map((entry) => [entry.kind, viewOf(entry)]));

export const ruleKinds: AdmissionKinds = {
  group: RULE_GROUP,
  kinds: [...VIEWS.values()],
  find: (kind) => (isRuleKind(kind) ? VIEWS.get(kind) : undefined),
  parseNfnNetworks: (annotation) => {
    try {
      return { ok: true, networks: parseNfnNetworkAnnotation(annotation) };
    } catch (error) {
      return { ok: false, problem: messageOf(error) };
    }
  },
  uniqueNameKindsOf: (kind) => {
    const scope = ALL_RULE_KINDS.find((entry) => entry.kind === kind)?.uniqueNameScope ?? null;
    if (scope === null) return [];
    return ALL_RULE_KINDS.filter((entry) => entry.uniqueNameScope === scope).flatMap(
      (entry) => VIEWS.get(entry.kind) ?? [],
    );
  },
};
