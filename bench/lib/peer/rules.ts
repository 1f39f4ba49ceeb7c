/**
 * The rule set the peer rows give both controllers: Mwan3Policies and Mwan3Rules (one policy per
 * ten rules), every field set so that the upstream CRDs (which require src_port and timeout) and
 * ours both accept the same objects, and the CNF simulator accepts what each controller sends.
 * Mwan3 is the family both controllers implement the same way (one object per CR, restart of
 * mwan3 after each change upstream) and the one where order matters: a rule needs its policy.
 */
import { PURPOSE_LABEL, RULE_API_VERSION } from "../../../shared/kinds/index.js";

export interface PeerRule {
  readonly kind: "Mwan3Policy" | "Mwan3Rule";
  readonly plural: "mwan3policies" | "mwan3rules";
  /** The CNF collection, as the simulator's state names it. */
  readonly collection: "mwan3/policies" | "mwan3/rules";
  readonly name: string;
  readonly spec: Record<string, unknown>;
}

export const PEER_KINDS = [
  { kind: "Mwan3Policy", plural: "mwan3policies", collection: "mwan3/policies" },
  { kind: "Mwan3Rule", plural: "mwan3rules", collection: "mwan3/rules" },
] as const;

/** The rule whose spec the spec-change row edits. */
export const CHANGED_RULE = "rule0";

export function policySpec(): Record<string, unknown> {
  return {
    members: [
      { network: "ovn-net1", metric: 2, weight: 2 },
      { network: "ovn-net2", metric: 3, weight: 3 },
    ],
  };
}

export function ruleSpec(i: number, policy: string): Record<string, unknown> {
  return {
    policy,
    src_ip: `198.51.${Math.floor(i / 250)}.${(i % 250) + 1}`,
    src_port: "1024",
    dest_ip: "0.0.0.0/0",
    dest_port: String(2000 + i),
    proto: "tcp",
    family: "ipv4",
    sticky: "0",
    timeout: "600",
  };
}

/** `count` objects: a tenth of them (at least one) policies, the rest rules spread over them. */
export function peerRules(count: number): PeerRule[] {
  const policies = Math.max(1, Math.round(count / 10));
  const rules = count - policies;
  return [
    ...Array.from({ length: policies }, (_, i) => ({
      ...PEER_KINDS[0],
      name: `pol${i}`,
      spec: policySpec(),
    })),
    ...Array.from({ length: rules }, (_, i) => ({
      ...PEER_KINDS[1],
      name: `rule${i}`,
      spec: ruleSpec(i, `pol${i % policies}`),
    })),
  ];
}

/** Per collection, the sorted names every pod must hold once `rules` are applied. */
export function expectedHoldings(rules: readonly PeerRule[]): Record<string, string[]> {
  const expected: Record<string, string[]> = {};
  for (const k of PEER_KINDS) expected[k.collection] = [];
  for (const rule of rules) expected[rule.collection]?.push(rule.name);
  for (const names of Object.values(expected)) names.sort();
  return expected;
}

export function rulePath(namespace: string, plural: string, name?: string): string {
  const base = `/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/${namespace}/${plural}`;
  return name === undefined ? base : `${base}/${name}`;
}

export function ruleManifest(rule: PeerRule, purpose: string): Record<string, unknown> {
  return {
    apiVersion: RULE_API_VERSION,
    kind: rule.kind,
    metadata: { name: rule.name, labels: { [PURPOSE_LABEL]: purpose } },
    spec: rule.spec,
  };
}

/** A rule CR as listed: what the convergence checks read. */
export interface ListedRule {
  readonly metadata: {
    readonly name: string;
    readonly generation?: number;
    readonly finalizers?: readonly string[];
  };
  readonly status?: Readonly<Record<string, unknown>>;
}
