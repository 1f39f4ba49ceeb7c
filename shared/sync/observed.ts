/**
 * What observation hands the planners: a CNF's scope and what was found for it, and each rule CR
 * as read (parsed, or raw with the reason it does not parse). Pure, so plan-* modules can name
 * these without reaching the API client.
 */
import type { OutcomeCode } from "../core/outcome.js";
import {
  PURPOSE_LABEL,
  requireKind,
  type NetworkInterfaceMap,
  type RuleCr,
  type RuleError,
} from "../kinds/index.js";
import type { Deployment, KubeObject } from "../core/objects.js";
import type { CnfPods } from "./plan-pods.js";
import type { CnfSituation } from "./plan-status.js";

/**
 * On on-deployment-ready's own state objects (prune ledgers, CNF sync Leases): the namespace of
 * the CNF they belong to, so `kubectl get -l` finds a CNF's.
 */
export const CNF_NAMESPACE_LABEL = "sdewan.akraino.org/cnf-namespace";

/** Where a set of rules belongs: the CNF Deployment labelled with `purpose` in `namespace`. */
export interface CnfScope {
  readonly namespace: string;
  readonly purpose: string;
}

export interface CnfObservation {
  readonly situation: CnfSituation;
  readonly deployment: Deployment | undefined;
  readonly pods: CnfPods;
  /** The nfn-network map, or why the annotation could not be read. */
  readonly networks: NetworkInterfaceMap | RuleError;
}

/** A rule CR read from the API server: parsed, or kept raw with why it does not parse. */
export type ObservedRuleCr =
  | { readonly ok: true; readonly cr: RuleCr }
  | {
      readonly ok: false;
      readonly raw: KubeObject;
      readonly code: OutcomeCode;
      readonly message: string;
    };

export function parseRuleObject(raw: KubeObject): ObservedRuleCr {
  const parsed = requireKind(raw.kind).parseCr(raw);
  if (!parsed.ok) return { ok: false, raw, code: "InvalidSpec", message: parsed.message };
  if (parsed.value.metadata.labels?.[PURPOSE_LABEL] === undefined) {
    const message = `label ${PURPOSE_LABEL} is missing: set it to the purpose of the CNF Deployment this rule belongs to`;
    return { ok: false, raw, code: "MissingPurpose", message };
  }
  return { ok: true, cr: parsed.value };
}
