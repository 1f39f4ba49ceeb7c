/**
 * The view of the rule registry (shared/rules) that admission needs. Admission never names a rule
 * kind: everything kind-specific (plural, spec schema, references, network names) comes from here.
 */
import type { z } from "zod";

/** A rule field that names another rule object in the same namespace, e.g. Mwan3Rule spec.policy. */
export interface RuleReference {
  readonly kind: string;
  readonly name: string;
  /** Where in the spec, for messages: "spec.policy", "spec.connections[0].crypto_proposal[1]". */
  readonly field: string;
}

/** A rule field that names a k8s network the CNF must attach, e.g. FirewallZone spec.network[0]. */
export interface NetworkReference {
  readonly network: string;
  readonly field: string;
}

export interface AdmissionRuleKind {
  readonly kind: string;
  readonly plural: string;
  readonly specSchema: z.ZodType;
  references(spec: unknown): readonly RuleReference[];
  networks(spec: unknown): readonly NetworkReference[];
}

export type ParsedNetworks =
  | { readonly ok: true; readonly networks: readonly string[] }
  | { readonly ok: false; readonly problem: string };

export interface AdmissionKinds {
  /** API group of every rule kind. */
  readonly group: string;
  readonly kinds: readonly AdmissionRuleKind[];
  find(kind: string): AdmissionRuleKind | undefined;
  /** Network names from a CNF Deployment's `k8s.plugin.opnfv.org/nfn-network` annotation. */
  parseNfnNetworks(annotation: string): ParsedNetworks;
  /** Kinds whose specs can reference `kind`: the only ones listed when such an object is deleted. */
  referrerKindsOf(kind: string): readonly AdmissionRuleKind[];
}
