/**
 * The registry: every rule kind in apply order, and lookups. Nothing outside shared/kinds
 * switches on a kind name; it looks the entry up here and reads data or calls its functions.
 */
import { UnknownRuleKindError } from "./errors.js";
import { RULE_KIND_NAMES, type RuleKindEntry, type RuleKindName } from "./entry.js";
import { cnfService } from "./rules/cnf-service.js";
import {
  firewallDnat,
  firewallForwarding,
  firewallRule,
  firewallSnat,
  firewallZone,
} from "./rules/firewall.js";
import { ipsecHost, ipsecProposal, ipsecSite } from "./rules/ipsec.js";
import { mwan3Policy, mwan3Rule } from "./rules/mwan3.js";

const ENTRIES: readonly RuleKindEntry[] = [
  mwan3Policy,
  mwan3Rule,
  firewallZone,
  firewallSnat,
  firewallDnat,
  firewallForwarding,
  firewallRule,
  ipsecProposal,
  ipsecSite,
  ipsecHost,
  cnfService,
];

const kindRank = new Map<RuleKindName, number>(ENTRIES.map((e) => [e.kind, e.applyRank]));
const declarationIndex = new Map<RuleKindName, number>(ENTRIES.map((e, i) => [e.kind, i]));

function compareKinds(a: RuleKindName, b: RuleKindName): number {
  const byRank = (kindRank.get(a) ?? 0) - (kindRank.get(b) ?? 0);
  return byRank !== 0 ? byRank : (declarationIndex.get(a) ?? 0) - (declarationIndex.get(b) ?? 0);
}

/** Every rule kind, in apply order (dependencies first). */
export const ALL_RULE_KINDS: readonly RuleKindEntry[] = [...ENTRIES].sort((a, b) =>
  compareKinds(a.kind, b.kind),
);

const byKindMap = new Map<string, RuleKindEntry>(ENTRIES.map((e) => [e.kind, e]));
const byPluralMap = new Map<string, RuleKindEntry>(ENTRIES.map((e) => [e.plural, e]));

export function isRuleKind(kind: string): kind is RuleKindName {
  return (RULE_KIND_NAMES as readonly string[]).includes(kind);
}

/** The entry of a kind (`Mwan3Rule`), or undefined. */
export function byKind(kind: string): RuleKindEntry | undefined {
  return byKindMap.get(kind);
}

/** The entry of a resource plural (`mwan3rules`), as AdmissionReview and RBAC name it, or undefined. */
export function byPlural(plural: string): RuleKindEntry | undefined {
  return byPluralMap.get(plural);
}

/** The entry of a kind, or an UnknownRuleKindError that lists the supported kinds. */
export function requireKind(kind: string): RuleKindEntry {
  const entry = byKindMap.get(kind);
  if (entry === undefined) throw new UnknownRuleKindError(kind, RULE_KIND_NAMES);
  return entry;
}

/** Orders kinds for applying: referenced kinds before the kinds that reference them. */
export function compareApplyOrder(a: RuleKindName, b: RuleKindName): number {
  return compareKinds(a, b);
}

/** A copy of `items` sorted for applying (stable within a kind). */
export function sortForApply<T extends { readonly kind: RuleKindName }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => compareKinds(a.kind, b.kind));
}

/** A copy of `items` sorted for deleting: referring kinds before the kinds they refer to. */
export function sortForDelete<T extends { readonly kind: RuleKindName }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => compareKinds(b.kind, a.kind));
}

/** Kinds whose CRs can reference a CR of `kind` (for "still in use" checks on delete). */
export function kindsReferencing(kind: RuleKindName): RuleKindEntry[] {
  return ALL_RULE_KINDS.filter((e) => e.dependsOn.includes(kind));
}

/** Kinds that store their objects in the same CNF collection as `kind` (names must not collide). */
export function kindsSharingCollection(kind: RuleKindName): RuleKindEntry[] {
  const entry = requireKind(kind);
  return ALL_RULE_KINDS.filter((e) => e.kind !== kind && e.cnf.path === entry.cnf.path);
}
