/**
 * Generated rule sets: `count` rules spread evenly over all 11 kinds, every reference resolvable
 * (rules name existing policies, zones and proposals of the same set), every spec accepted by the
 * registry and the CNF simulator. Shapes follow manifests/samples.
 */
import pLimit from "p-limit";
import type { RawApi } from "./raw-api.js";
import {
  PURPOSE_LABEL,
  RULE_API_VERSION,
  RULE_KIND_NAMES,
  requireKind,
  type RuleKindName,
} from "../../shared/rules/index.js";

export interface GeneratedRule {
  readonly kind: RuleKindName;
  readonly name: string;
  readonly spec: Record<string, unknown>;
}

type Maker = (i: number, counts: Readonly<Record<RuleKindName, number>>) => GeneratedRule;

const policyName = (i: number): string => `pol${i}`;
const zoneName = (i: number): string => `z${i}`;
const proposalName = (i: number): string => `prop${i}`;
const pick = (i: number, n: number): number => (n === 0 ? 0 : i % n);

/** Spec makers, one per kind; `rev` varies a field so an update is a real change. */
export const MAKERS: Readonly<Record<RuleKindName, Maker>> = {
  Mwan3Policy: (i) => ({
    kind: "Mwan3Policy",
    name: policyName(i),
    spec: {
      members: [
        { network: "ovn-net1", metric: 2, weight: 2 },
        { network: "ovn-net2", metric: 3, weight: 3 },
      ],
    },
  }),
  Mwan3Rule: (i, n) => ({
    kind: "Mwan3Rule",
    name: `rule${i}`,
    spec: {
      policy: policyName(pick(i, n.Mwan3Policy)),
      src_ip: `192.168.${(i >> 8) & 255}.${i & 255}`,
      dest_ip: "0.0.0.0/0",
      dest_port: String(1000 + i),
      proto: "tcp",
      family: "ipv4",
      sticky: "0",
    },
  }),
  FirewallZone: (i) => ({
    kind: "FirewallZone",
    name: zoneName(i),
    spec: {
      network: [i % 2 === 0 ? "ovn-net1" : "ovn-net2"],
      input: "ACCEPT",
      output: "ACCEPT",
      forward: i % 2 === 0 ? "ACCEPT" : "REJECT",
    },
  }),
  FirewallSNAT: (i, n) => ({
    kind: "FirewallSNAT",
    name: `snat-${i}`,
    spec: {
      src: zoneName(pick(i, n.FirewallZone)),
      src_ip: `192.168.${(i >> 8) & 255}.${i & 255}`,
      src_dip: `1.2.${(i >> 8) & 255}.${i & 255}`,
      dest: zoneName(pick(i + 1, n.FirewallZone)),
      proto: "icmp",
    },
  }),
  FirewallDNAT: (i, n) => ({
    kind: "FirewallDNAT",
    name: `dnat-${i}`,
    spec: {
      src: zoneName(pick(i, n.FirewallZone)),
      src_dport: String(19_000 + i),
      dest: zoneName(pick(i + 1, n.FirewallZone)),
      dest_ip: `192.168.1.${(i % 250) + 1}`,
      dest_port: "22",
      proto: "tcp",
    },
  }),
  FirewallForwarding: (i, n) => ({
    kind: "FirewallForwarding",
    name: `fwd-${i}`,
    spec: { src: zoneName(pick(i, n.FirewallZone)), dest: zoneName(pick(i + 1, n.FirewallZone)) },
  }),
  FirewallRule: (i, n) => ({
    kind: "FirewallRule",
    name: `fr-${i}`,
    spec: {
      src: zoneName(pick(i, n.FirewallZone)),
      src_ip: `192.168.${(i >> 8) & 255}.${i & 255}`,
      src_port: String(1000 + i),
      proto: "tcp",
      target: "REJECT",
    },
  }),
  IpsecProposal: (i) => ({
    kind: "IpsecProposal",
    name: proposalName(i),
    spec: { encryption_algorithm: "aes128", hash_algorithm: "sha256", dh_group: "modp3072" },
  }),
  IpsecSite: (i, n) => ({
    kind: "IpsecSite",
    name: `site${i}`,
    spec: {
      remote: "%any",
      authentication_method: "psk",
      pre_shared_key: "bench-key",
      crypto_proposal: [proposalName(pick(i, n.IpsecProposal))],
      connections: [
        {
          name: `site${i}conn`,
          conn_type: "tunnel",
          mode: "start",
          local_subnet: `172.${16 + (i % 16)}.${i >> 4}.0/24`,
          remote_sourceip: "172.12.0.30-172.12.0.45",
          crypto_proposal: [proposalName(pick(i, n.IpsecProposal))],
        },
      ],
    },
  }),
  IpsecHost: (i, n) => ({
    kind: "IpsecHost",
    name: `host${i}`,
    spec: {
      remote: `10.10.${(i >> 8) & 255}.${i & 255}`,
      authentication_method: "psk",
      pre_shared_key: "bench-key",
      crypto_proposal: [proposalName(pick(i, n.IpsecProposal))],
      connections: [
        {
          name: `host${i}conn`,
          conn_type: "tunnel",
          mode: "start",
          local_sourceip: "%config",
          remote_subnet: "172.12.0.0/24",
          crypto_proposal: [proposalName(pick(i, n.IpsecProposal))],
        },
      ],
    },
  }),
  CNFService: (i) => ({
    kind: "CNFService",
    name: `svc-${i}`,
    spec: {
      fullname: `svc-${i}.default.svc.cluster.local`,
      port: String(2000 + i),
      dport: "8080",
    },
  }),
};

/** How many rules of each kind `count` rules make when spread evenly over every kind. */
export function kindCounts(count: number): Record<RuleKindName, number> {
  const base = Math.floor(count / RULE_KIND_NAMES.length);
  const extra = count % RULE_KIND_NAMES.length;
  return Object.fromEntries(
    RULE_KIND_NAMES.map((kind, k) => [kind, base + (k < extra ? 1 : 0)]),
  ) as Record<RuleKindName, number>;
}

/** `count` rules over all kinds, in the registry's apply order (referenced kinds first). */
export function generateRules(count: number): GeneratedRule[] {
  const counts = kindCounts(count);
  return [...RULE_KIND_NAMES]
    .sort((a, b) => requireKind(a).applyRank - requireKind(b).applyRank)
    .flatMap((kind) => Array.from({ length: counts[kind] }, (_, i) => MAKERS[kind](i, counts)));
}

/** Creates the rules as CRs labelled for `purpose`, `concurrency` requests at a time. */
export async function createRules(
  raw: RawApi,
  namespace: string,
  purpose: string,
  rules: readonly GeneratedRule[],
  concurrency = 16,
): Promise<void> {
  const limit = pLimit(concurrency);
  await Promise.all(
    rules.map((rule) =>
      limit(() =>
        raw.must(
          "POST",
          `/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/${namespace}/${requireKind(rule.kind).plural}`,
          {
            apiVersion: RULE_API_VERSION,
            kind: rule.kind,
            metadata: { name: rule.name, labels: { [PURPOSE_LABEL]: purpose } },
            spec: rule.spec,
          },
        ),
      ),
    ),
  );
}

/** The distinct CNF collections rules live in ("sdewan/mwan3/v1/policies", ...). */
export function ruleCollections(): string[] {
  return [
    ...new Set(
      RULE_KIND_NAMES.map((k) => `${requireKind(k).cnf.module}/${requireKind(k).cnf.collection}`),
    ),
  ];
}
