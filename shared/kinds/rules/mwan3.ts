/**
 * Mwan3Policy and Mwan3Rule (reference 1.1, 2.4): load-balancing policies over pod interfaces,
 * and the traffic rules that use them.
 */
import * as z from "zod";
import { bodyFromShape, type CnfObject, type CnfShape } from "../cnf-shape.js";
import { defineRuleKind, type RuleKindEntry } from "../entry.js";
import {
  FIELD_LIMITS,
  MWAN3_NAME_MAX,
  MWAN3_NAME_RULE,
  bounded,
  uciSectionName,
  exampleOctets,
  examplePort,
  flag,
  interfaceOf,
  ipv4OrCidr,
  port,
  positiveIntText,
} from "./fields.js";

/** mwan3's own ranges for a member (its metric and weight options). */
export const MWAN3_METRIC_MAX = 256;
export const MWAN3_WEIGHT_MAX = 1000;

const RULE_FINALIZER = "rule.finalizers.sdewan.akraino.org";

const mwan3PolicyMemberSchema = () =>
  z
    .strictObject({
      network: bounded(FIELD_LIMITS.kubeName)
        .min(1)
        .describe(
          "Kubernetes network name, translated to the CNF pod interface through the CNF Deployment's k8s.plugin.opnfv.org/nfn-network annotation.",
        ),
      metric: z
        .int()
        .min(1)
        .max(MWAN3_METRIC_MAX)
        .describe(
          `Priority of this member; lower metric is used first. Integer 1-${MWAN3_METRIC_MAX}, as mwan3 takes it.`,
        ),
      weight: z
        .int()
        .min(1)
        .max(MWAN3_WEIGHT_MAX)
        .describe(
          `Share of traffic among members of equal metric. Integer 1-${MWAN3_WEIGHT_MAX}, as mwan3 takes it.`,
        ),
    })
    .describe("One interface of the policy.");

const mwan3PolicySpecSchema = () =>
  z
    .strictObject({
      members: z
        .array(mwan3PolicyMemberSchema())
        .min(1)
        .superRefine((members, ctx) => {
          const seen = new Set<string>();
          members.forEach((m, i) => {
            if (seen.has(m.network)) {
              ctx.addIssue({
                code: "custom",
                path: [i, "network"],
                message: `network ${m.network} is used in more than one member`,
              });
            }
            seen.add(m.network);
          });
        })
        .describe("Interfaces the policy balances over; one member per network."),
    })
    .describe("An mwan3 policy: how traffic is spread over the CNF's interfaces.");
export type Mwan3PolicySpec = z.infer<ReturnType<typeof mwan3PolicySpecSchema>>;

const mwan3MemberShape: CnfShape = { scalars: ["interface", "metric", "weight"] };
const mwan3PolicyShape: CnfShape = {
  scalars: [],
  recordLists: { members: { identity: "interface", shape: mwan3MemberShape } },
};

export const mwan3Policy: RuleKindEntry = defineRuleKind<Mwan3PolicySpec>({
  kind: "Mwan3Policy",
  plural: "mwan3policies",
  shortNames: ["mwpolicy"],
  finalizer: RULE_FINALIZER,
  description:
    "Mwan3Policy is an mwan3 load-balancing policy applied to every pod of the CNF labelled with the same sdewanPurpose.",
  specSchema: mwan3PolicySpecSchema,
  cnf: {
    module: "mwan3",
    collection: "policies",
    restartService: "mwan3",
    update: "put",
    shape: mwan3PolicyShape,
  },
  dependsOn: [],
  applyRank: 0,
  nameRule: MWAN3_NAME_RULE,
  references: () => [],
  networks: (spec) =>
    spec.members.map((m, i) => ({ network: m.network, field: `spec.members[${i}].network` })),
  toCnf: (name, spec, ctx): CnfObject => ({
    name,
    members: spec.members.map((m, i) => ({
      interface: interfaceOf(ctx.networks, m.network, `spec.members[${i}].network`),
      metric: String(m.metric),
      weight: String(m.weight),
    })),
  }),
  example: {
    namePrefix: "pol",
    spec: () => ({
      members: [
        { network: "ovn-net1", metric: 2, weight: 2 },
        { network: "ovn-net2", metric: 3, weight: 3 },
      ],
    }),
    change: (n) => ({
      members: [
        { network: "ovn-net1", metric: 1 + (n % 5), weight: 2 },
        { network: "ovn-net2", metric: 3, weight: 3 },
      ],
    }),
  },
});

const ipv4 = (description: string) => ipv4OrCidr().optional().describe(description);

const mwan3RuleSpecSchema = () =>
  z
    .strictObject({
      policy: bounded(MWAN3_NAME_MAX)
        .min(1)
        .describe(
          "Name of the Mwan3Policy (in the same namespace, same sdewanPurpose) that matching traffic uses.",
        ),
      src_ip: ipv4("Source IPv4 address or IPv4/prefix."),
      src_port: port("Source port, 1-65535 (no ranges)."),
      dest_ip: ipv4("Destination IPv4 address or IPv4/prefix."),
      dest_port: port("Destination port, 1-65535 (no ranges)."),
      proto: z
        .enum(["tcp", "udp", "icmp", "all"])
        .optional()
        .describe("Protocol: tcp, udp, icmp or all."),
      family: z
        .enum(["ipv4", "ipv6", "all"])
        .optional()
        .describe("Address family: ipv4, ipv6 or all."),
      sticky: flag('"1" keeps a connection on the interface it started on; "0" does not.'),
      timeout: positiveIntText("Sticky timeout in seconds, an integer > 0."),
    })
    .describe("An mwan3 rule: which traffic uses which policy.");
export type Mwan3RuleSpec = z.infer<ReturnType<typeof mwan3RuleSpecSchema>>;

const mwan3RuleShape: CnfShape = {
  scalars: [
    "policy",
    "src_ip",
    "src_port",
    "dest_ip",
    "dest_port",
    "proto",
    "family",
    "sticky",
    "timeout",
  ],
};

export const mwan3Rule: RuleKindEntry = defineRuleKind<Mwan3RuleSpec>({
  kind: "Mwan3Rule",
  plural: "mwan3rules",
  shortNames: ["mwrule"],
  finalizer: RULE_FINALIZER,
  description:
    "Mwan3Rule sends matching traffic through an Mwan3Policy on every pod of the CNF labelled with the same sdewanPurpose.",
  specSchema: mwan3RuleSpecSchema,
  cnf: {
    module: "mwan3",
    collection: "rules",
    restartService: "mwan3",
    update: "put",
    shape: mwan3RuleShape,
  },
  dependsOn: ["Mwan3Policy"],
  applyRank: 1,
  nameRule: MWAN3_NAME_RULE,
  references: (spec) => [{ kind: "Mwan3Policy", name: spec.policy, field: "spec.policy" }],
  // The policy is a Mwan3Policy, stored under its UCI section name.
  toCnf: (name, spec): CnfObject => ({
    ...bodyFromShape(mwan3RuleShape, spec),
    name,
    policy: uciSectionName(spec.policy),
  }),
  example: {
    namePrefix: "rule",
    spec: (i, ref) => ({
      policy: ref("Mwan3Policy", i),
      src_ip: `192.168.${exampleOctets(i)}`,
      dest_ip: "0.0.0.0/0",
      dest_port: String(1000 + i),
      proto: "tcp",
      family: "ipv4",
      sticky: "0",
    }),
    change: (n) => ({ dest_port: examplePort(n) }),
  },
});
