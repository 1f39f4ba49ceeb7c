/**
 * Firewall kinds (reference 1.1, 2.4): zones over pod interfaces, SNAT/DNAT redirects, traffic
 * rules and forwardings between zones. SNAT and DNAT share the CNF `redirects` collection and
 * differ only in `target`.
 */
import { z } from "zod";
import { bodyFromShape, type CnfObject, type CnfShape } from "../cnf-shape.js";
import {
  defineRuleKind,
  type CnfCollection,
  type RuleKindDefinition,
  type RuleKindEntry,
  type RuleReference,
} from "../entry.js";
import { exampleOctets, examplePort, flag, interfaceOf, nameList, opt } from "./fields.js";

const zoneRef = (description: string) =>
  opt(`${description} Name of a FirewallZone of the same CNF.`);
const verdict = (description: string) =>
  z
    .enum(["ACCEPT", "REJECT", "DROP"])
    .optional()
    .describe(`${description}: ACCEPT, REJECT or DROP.`);

/** src/dest zone references of the firewall kinds that have them. */
/** Every firewall kind is kept in one collection of the firewall module, upserted with PUT. */
function firewallCollection(collection: string, shape: CnfShape): Omit<CnfCollection, "path"> {
  return { module: "firewall", collection, restartService: "firewall", update: "put", shape };
}

function zoneReferences(spec: {
  readonly src?: string | undefined;
  readonly dest?: string | undefined;
}): RuleReference[] {
  const refs: RuleReference[] = [];
  if (spec.src !== undefined && spec.src !== "")
    refs.push({ kind: "FirewallZone", name: spec.src, field: "spec.src" });
  if (spec.dest !== undefined && spec.dest !== "")
    refs.push({ kind: "FirewallZone", name: spec.dest, field: "spec.dest" });
  return refs;
}

// ---- FirewallZone

export const firewallZoneSpecSchema = z
  .strictObject({
    name: opt("Ignored: the zone is named after metadata.name (at most 11 characters)."),
    network: nameList(
      "Kubernetes network names in the zone, translated to CNF pod interfaces through the CNF Deployment's k8s.plugin.opnfv.org/nfn-network annotation.",
    ).min(1),
    masq: flag('"1" masquerades traffic leaving the zone.'),
    masq_src: z
      .array(z.string().min(1))
      .optional()
      .describe("Source subnets to masquerade; a leading ! negates."),
    masq_dest: z
      .array(z.string().min(1))
      .optional()
      .describe("Destination subnets to masquerade; a leading ! negates."),
    masq_allow_invalid: flag('"1" does not drop invalid packets when masquerading.'),
    mtu_fix: flag('"1" clamps TCP MSS to the path MTU for traffic leaving the zone.'),
    input: verdict("Default policy for traffic entering the zone"),
    forward: verdict("Default policy for traffic forwarded within the zone"),
    output: verdict("Default policy for traffic leaving the zone"),
    family: z
      .enum(["ipv4", "ipv6", "any"])
      .optional()
      .describe("Address family: ipv4, ipv6 or any."),
    subnet: z
      .array(z.string().min(1))
      .optional()
      .describe("Subnets in the zone, in addition to its networks."),
    extra_src: opt("Extra iptables arguments for source matches."),
    etra_dest: opt(
      "Extra iptables arguments for destination matches (key spelled etra_dest, as upstream).",
    ),
  })
  .describe("A firewall zone: a set of CNF interfaces with default policies.");
export type FirewallZoneSpec = z.infer<typeof firewallZoneSpecSchema>;

const firewallZoneShape: CnfShape = {
  scalars: [
    "masq",
    "masq_allow_invalid",
    "mtu_fix",
    "input",
    "forward",
    "output",
    "family",
    "extra_src",
    "etra_dest",
  ],
  unorderedLists: ["network", "masq_src", "masq_dest", "subnet"],
};

export const firewallZone: RuleKindEntry = defineRuleKind<FirewallZoneSpec>({
  kind: "FirewallZone",
  plural: "firewallzones",
  shortNames: ["fwzone"],
  finalizer: "rule.finalizers.sdewan.akraino.org",
  description:
    "FirewallZone is a firewall zone over CNF interfaces, applied to every pod of the CNF labelled with the same sdewanPurpose.",
  specSchema: firewallZoneSpecSchema,
  cnf: firewallCollection("zones", firewallZoneShape),
  dependsOn: [],
  applyRank: 0,
  nameRule: { maxLength: 11, reason: "the CNF limits zone names to 11 characters" },
  references: () => [],
  networks: (spec) => spec.network.map((n, i) => ({ network: n, field: `spec.network[${i}]` })),
  toCnf: (name, spec, ctx): CnfObject => ({
    ...bodyFromShape(firewallZoneShape, spec),
    name,
    network: spec.network.map((n, i) => interfaceOf(ctx.networks, n, `spec.network[${i}]`)),
  }),
  example: {
    namePrefix: "z",
    spec: (i) => ({
      network: [i % 2 === 0 ? "ovn-net1" : "ovn-net2"],
      input: "ACCEPT",
      output: "ACCEPT",
      forward: i % 2 === 0 ? "ACCEPT" : "REJECT",
    }),
    change: (n) => ({ input: n % 2 === 0 ? "ACCEPT" : "REJECT" }),
  },
});

// ---- FirewallSNAT / FirewallDNAT

const redirectFields = {
  name: opt("Ignored: the redirect is named after metadata.name."),
  src: zoneRef("Source zone."),
  src_ip: opt("Source IP address or subnet to match."),
  src_dip: opt(
    "For SNAT: the address to rewrite the source to. For DNAT: the original destination address to match.",
  ),
  src_mac: opt("Source MAC address to match."),
  src_port: opt("Source port or range to match."),
  src_dport: opt("For DNAT: the original destination port or range to match."),
  proto: z
    .enum(["tcp", "udp", "tcpudp", "udplite", "icmp", "esp", "ah", "sctp", "all"])
    .optional()
    .describe("Protocol: tcp, udp, tcpudp, udplite, icmp, esp, ah, sctp or all."),
  dest: zoneRef("Destination zone."),
  dest_ip: opt(
    "For DNAT: the internal address to redirect to. For SNAT: the destination to match.",
  ),
  dest_port: opt(
    "For DNAT: the internal port or range to redirect to. For SNAT: the destination port to match.",
  ),
  mark: opt("Firewall mark to match, e.g. 0xFF or !0x10/0x10."),
  family: opt("Address family: ipv4, ipv6 or any."),
};

export const firewallSnatSpecSchema = z
  .strictObject({
    ...redirectFields,
    src_dip: z
      .string()
      .min(1)
      .describe("The address to rewrite the source to (required for SNAT)."),
    dest: z
      .string()
      .min(1)
      .describe("Destination zone (required for SNAT). Name of a FirewallZone of the same CNF."),
    target: z.literal("SNAT").optional().describe("Always SNAT; set by the controller."),
  })
  .describe("Source NAT: rewrites the source address of traffic towards dest.");
export type FirewallSnatSpec = z.infer<typeof firewallSnatSpecSchema>;

export const firewallDnatSpecSchema = z
  .strictObject({
    ...redirectFields,
    src: z
      .string()
      .min(1)
      .describe("Source zone (required for DNAT). Name of a FirewallZone of the same CNF."),
    target: z.literal("DNAT").optional().describe("Always DNAT; set by the controller."),
  })
  .describe("Destination NAT (port forwarding): redirects traffic arriving from src.");
export type FirewallDnatSpec = z.infer<typeof firewallDnatSpecSchema>;

const redirectShape: CnfShape = {
  scalars: [
    "src",
    "src_ip",
    "src_dip",
    "src_mac",
    "src_port",
    "src_dport",
    "proto",
    "dest",
    "dest_ip",
    "dest_port",
    "mark",
    "target",
    "family",
  ],
};

/** SNAT and DNAT share the redirects collection; each owns the redirects of its target. */
function redirectKind<Spec extends FirewallSnatSpec | FirewallDnatSpec>(
  target: "SNAT" | "DNAT",
  kind: Pick<
    RuleKindDefinition<Spec>,
    "kind" | "plural" | "shortNames" | "description" | "specSchema" | "example"
  >,
): RuleKindEntry {
  return defineRuleKind<Spec>({
    ...kind,
    finalizer: `${target.toLowerCase()}.finalizers.sdewan.akraino.org`,
    cnf: firewallCollection("redirects", redirectShape),
    dependsOn: ["FirewallZone"],
    applyRank: 1,
    nameRule: null,
    references: zoneReferences,
    toCnf: (name, spec) => ({ ...bodyFromShape(redirectShape, spec), name, target }),
    ownsCnfObject: (obj) => obj["target"] === target,
  });
}

export const firewallSnat: RuleKindEntry = redirectKind<FirewallSnatSpec>("SNAT", {
  kind: "FirewallSNAT",
  plural: "firewallsnats",
  shortNames: ["fwsnat"],
  description:
    "FirewallSNAT is a source NAT redirect applied to every pod of the CNF labelled with the same sdewanPurpose.",
  specSchema: firewallSnatSpecSchema,
  example: {
    namePrefix: "snat-",
    spec: (i, ref) => ({
      src: ref("FirewallZone", i),
      src_ip: `192.168.${exampleOctets(i)}`,
      src_dip: `1.2.${exampleOctets(i)}`,
      dest: ref("FirewallZone", i + 1),
      proto: "icmp",
    }),
    change: (n) => ({ src_dip: `1.2.${n % 250}.${Math.floor(n / 250) % 250}` }),
  },
});

export const firewallDnat: RuleKindEntry = redirectKind<FirewallDnatSpec>("DNAT", {
  kind: "FirewallDNAT",
  plural: "firewalldnats",
  shortNames: ["fwdnat"],
  description:
    "FirewallDNAT is a destination NAT (port forward) redirect applied to every pod of the CNF labelled with the same sdewanPurpose.",
  specSchema: firewallDnatSpecSchema,
  example: {
    namePrefix: "dnat-",
    spec: (i, ref) => ({
      src: ref("FirewallZone", i),
      src_dport: String(19_000 + i),
      dest: ref("FirewallZone", i + 1),
      dest_ip: `192.168.1.${(i % 250) + 1}`,
      dest_port: "22",
      proto: "tcp",
    }),
    change: (n) => ({ src_dport: examplePort(n) }),
  },
});

// ---- FirewallForwarding

export const firewallForwardingSpecSchema = z
  .strictObject({
    name: opt("Ignored: the forwarding is named after metadata.name."),
    src: z
      .string()
      .min(1)
      .describe("Zone traffic comes from. Name of a FirewallZone of the same CNF."),
    dest: z
      .string()
      .min(1)
      .describe("Zone traffic may be forwarded to. Name of a FirewallZone of the same CNF."),
    family: z
      .enum(["ipv4", "ipv6", "any"])
      .optional()
      .describe("Address family: ipv4, ipv6 or any."),
  })
  .describe("Allows forwarding from one zone to another.");
export type FirewallForwardingSpec = z.infer<typeof firewallForwardingSpecSchema>;

const forwardingShape: CnfShape = { scalars: ["src", "dest", "family"] };

export const firewallForwarding: RuleKindEntry = defineRuleKind<FirewallForwardingSpec>({
  kind: "FirewallForwarding",
  plural: "firewallforwardings",
  shortNames: ["fwforward"],
  finalizer: "forwarding.finalizers.sdewan.akraino.org",
  description:
    "FirewallForwarding allows traffic from one FirewallZone to another on every pod of the CNF labelled with the same sdewanPurpose.",
  specSchema: firewallForwardingSpecSchema,
  cnf: firewallCollection("forwardings", forwardingShape),
  dependsOn: ["FirewallZone"],
  applyRank: 1,
  nameRule: null,
  references: zoneReferences,
  toCnf: (name, spec): CnfObject => ({ ...bodyFromShape(forwardingShape, spec), name }),
  // No change: a forwarding is its two zones, and changing them would change references.
  example: {
    namePrefix: "fwd-",
    spec: (i, ref) => ({ src: ref("FirewallZone", i), dest: ref("FirewallZone", i + 1) }),
  },
});

// ---- FirewallRule

export const firewallRuleSpecSchema = z
  .strictObject({
    name: opt("Ignored: the rule is named after metadata.name."),
    src: zoneRef("Source zone."),
    src_ip: opt("Source IP address or subnet to match."),
    src_mac: opt("Source MAC address to match."),
    src_port: opt("Source port or range to match."),
    proto: opt("Protocol(s) to match, e.g. tcp, udp, icmp, all."),
    icmp_type: z
      .array(z.string().min(1))
      .optional()
      .describe("ICMP type names to match (iptables names)."),
    dest: zoneRef("Destination zone."),
    dest_ip: opt("Destination IP address or subnet to match."),
    dest_port: opt("Destination port or range to match."),
    mark: opt("Firewall mark to match."),
    target: z
      .enum(["ACCEPT", "REJECT", "DROP", "MARK", "NOTRACK"])
      .optional()
      .describe(
        "What to do with matching traffic: ACCEPT, REJECT, DROP, MARK (needs set_mark or set_xmark) or NOTRACK.",
      ),
    set_mark: opt("With target MARK: the mark to set."),
    set_xmark: opt("With target MARK: the mark to XOR."),
    family: opt("Address family: ipv4, ipv6 or any."),
    extra: opt("Extra iptables arguments."),
  })
  .superRefine((spec, ctx) => {
    if (spec.target === "MARK" && !spec.set_mark && !spec.set_xmark) {
      ctx.addIssue({
        code: "custom",
        path: ["target"],
        message: "target MARK needs set_mark or set_xmark",
      });
    }
  })
  .describe("A firewall traffic rule.");
export type FirewallRuleSpec = z.infer<typeof firewallRuleSpecSchema>;

const firewallRuleShape: CnfShape = {
  scalars: [
    "src",
    "src_ip",
    "src_mac",
    "src_port",
    "proto",
    "dest",
    "dest_ip",
    "dest_port",
    "mark",
    "target",
    "set_mark",
    "set_xmark",
    "family",
    "extra",
  ],
  unorderedLists: ["icmp_type"],
};

export const firewallRule: RuleKindEntry = defineRuleKind<FirewallRuleSpec>({
  kind: "FirewallRule",
  plural: "firewallrules",
  shortNames: ["fwrule"],
  finalizer: "rule.finalizers.sdewan.akraino.org",
  description:
    "FirewallRule accepts, rejects, drops or marks matching traffic on every pod of the CNF labelled with the same sdewanPurpose.",
  specSchema: firewallRuleSpecSchema,
  cnf: firewallCollection("rules", firewallRuleShape),
  dependsOn: ["FirewallZone"],
  applyRank: 1,
  nameRule: null,
  references: zoneReferences,
  toCnf: (name, spec): CnfObject => ({ ...bodyFromShape(firewallRuleShape, spec), name }),
  example: {
    namePrefix: "fr-",
    spec: (i, ref) => ({
      src: ref("FirewallZone", i),
      src_ip: `192.168.${exampleOctets(i)}`,
      src_port: String(1000 + i),
      proto: "tcp",
      target: "REJECT",
    }),
    change: (n) => ({ src_port: examplePort(n) }),
  },
});
