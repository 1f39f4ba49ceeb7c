/**
 * Firewall kinds (reference 1.1, 2.4): zones over pod interfaces, SNAT/DNAT redirects, traffic
 * rules and forwardings between zones. SNAT and DNAT share the CNF `redirects` collection and
 * differ only in `target`.
 */
import * as z from "zod";
import { bodyFromShape, type CnfObject, type CnfShape } from "../cnf-shape.js";
import {
  defineRuleKind,
  type CnfCollection,
  type RuleKindDefinition,
  type RuleKindEntry,
  type RuleReference,
} from "../entry.js";
import {
  FIELD_LIMITS,
  ZONE_NAME_MAX,
  bounded,
  exampleOctets,
  examplePort,
  flag,
  interfaceOf,
  ipv4OrCidr,
  macAddress,
  nameList,
  opt,
  port,
} from "./fields.js";

/** A FirewallZone name: the CNF keeps zone names to 11 characters, so a longer one never exists. */
const zoneName = (description: string) =>
  bounded(ZONE_NAME_MAX).describe(
    `${description} Name of a FirewallZone of the same CNF (at most ${ZONE_NAME_MAX} characters).`,
  );
const zoneRef = (description: string) => zoneName(description).optional();
/** A required zone reference. */
const requiredZone = (description: string) => zoneName(description).min(1);
/** IPv4 address or IPv4/prefix, as the CNF checks it (it takes no IPv6 here). */
const ipv4 = (description: string) => ipv4OrCidr().optional().describe(description);
const family = () =>
  z.enum(["ipv4", "ipv6", "any"]).optional().describe("Address family: ipv4, ipv6 or any.");
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

const firewallZoneSpecSchema = () =>
  z
    .strictObject({
      name: opt(
        "Ignored: the zone is named after metadata.name (at most 11 characters).",
        FIELD_LIMITS.kubeName,
      ),
      network: nameList(
        "Kubernetes network names in the zone, translated to CNF pod interfaces through the CNF Deployment's k8s.plugin.opnfv.org/nfn-network annotation.",
      ).min(1),
      masq: flag('"1" masquerades traffic leaving the zone.'),
      masq_src: z
        .array(ipv4OrCidr(true))
        .optional()
        .describe("Source IPv4 addresses or subnets to masquerade; a leading ! negates."),
      masq_dest: z
        .array(ipv4OrCidr(true))
        .optional()
        .describe("Destination IPv4 addresses or subnets to masquerade; a leading ! negates."),
      masq_allow_invalid: flag('"1" does not drop invalid packets when masquerading.'),
      mtu_fix: flag('"1" clamps TCP MSS to the path MTU for traffic leaving the zone.'),
      input: verdict("Default policy for traffic entering the zone"),
      forward: verdict("Default policy for traffic forwarded within the zone"),
      output: verdict("Default policy for traffic leaving the zone"),
      family: family(),
      subnet: z
        .array(ipv4OrCidr())
        .optional()
        .describe("IPv4 subnets in the zone, in addition to its networks."),
      extra_src: opt("Extra iptables arguments for source matches."),
      etra_dest: opt(
        "Extra iptables arguments for destination matches (key spelled etra_dest, as upstream).",
      ),
    })
    .describe("A firewall zone: a set of CNF interfaces with default policies.");
export type FirewallZoneSpec = z.infer<ReturnType<typeof firewallZoneSpecSchema>>;

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
  nameRule: {
    maxLength: ZONE_NAME_MAX,
    reason: `the CNF limits zone names to ${ZONE_NAME_MAX} characters`,
  },
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

const redirectFields = () => ({
  name: opt("Ignored: the redirect is named after metadata.name.", FIELD_LIMITS.kubeName),
  src: zoneRef("Source zone."),
  src_ip: ipv4("Source IPv4 address or IPv4/prefix to match."),
  src_dip: ipv4(
    "For SNAT: the IPv4 address to rewrite the source to. For DNAT: the original destination address to match.",
  ),
  src_mac: macAddress().optional().describe("Source MAC address to match."),
  src_port: port("Source port to match, 1-65535 (the CNF takes no ranges)."),
  src_dport: port("For DNAT: the original destination port to match, 1-65535."),
  proto: z
    .enum(["tcp", "udp", "tcpudp", "udplite", "icmp", "esp", "ah", "sctp", "all"])
    .optional()
    .describe("Protocol: tcp, udp, tcpudp, udplite, icmp, esp, ah, sctp or all."),
  dest: zoneRef("Destination zone."),
  dest_ip: ipv4(
    "For DNAT: the internal IPv4 address to redirect to. For SNAT: the destination to match.",
  ),
  dest_port: port(
    "For DNAT: the internal port to redirect to. For SNAT: the destination port to match. 1-65535.",
  ),
  mark: opt("Firewall mark to match, e.g. 0xFF or !0x10/0x10.", FIELD_LIMITS.token),
  family: family(),
});

const firewallSnatSpecSchema = () =>
  z
    .strictObject({
      ...redirectFields(),
      src_dip: ipv4OrCidr()
        .min(1)
        .describe("The IPv4 address to rewrite the source to (required for SNAT)."),
      dest: requiredZone("Destination zone (required for SNAT)."),
      target: z.literal("SNAT").optional().describe("Always SNAT; set by the controller."),
    })
    .describe("Source NAT: rewrites the source address of traffic towards dest.");
export type FirewallSnatSpec = z.infer<ReturnType<typeof firewallSnatSpecSchema>>;

const firewallDnatSpecSchema = () =>
  z
    .strictObject({
      ...redirectFields(),
      src: requiredZone("Source zone (required for DNAT)."),
      target: z.literal("DNAT").optional().describe("Always DNAT; set by the controller."),
    })
    .describe("Destination NAT (port forwarding): redirects traffic arriving from src.");
export type FirewallDnatSpec = z.infer<ReturnType<typeof firewallDnatSpecSchema>>;

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

const firewallForwardingSpecSchema = () =>
  z
    .strictObject({
      name: opt("Ignored: the forwarding is named after metadata.name.", FIELD_LIMITS.kubeName),
      src: requiredZone("Zone traffic comes from."),
      dest: requiredZone("Zone traffic may be forwarded to."),
      family: family(),
    })
    .describe("Allows forwarding from one zone to another.");
export type FirewallForwardingSpec = z.infer<ReturnType<typeof firewallForwardingSpecSchema>>;

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

const firewallRuleSpecSchema = () =>
  z
    .strictObject({
      name: opt("Ignored: the rule is named after metadata.name.", FIELD_LIMITS.kubeName),
      src: zoneRef("Source zone."),
      src_ip: ipv4("Source IPv4 address or IPv4/prefix to match."),
      src_mac: macAddress().optional().describe("Source MAC address to match."),
      src_port: port("Source port to match, 1-65535 (the CNF takes no ranges)."),
      proto: opt("Protocol(s) to match, e.g. tcp, udp, icmp, all.", FIELD_LIMITS.token),
      icmp_type: z
        .array(bounded(FIELD_LIMITS.token).min(1))
        .optional()
        .describe("ICMP type names to match (iptables names)."),
      dest: zoneRef("Destination zone."),
      dest_ip: ipv4("Destination IPv4 address or IPv4/prefix to match."),
      dest_port: port("Destination port to match, 1-65535 (the CNF takes no ranges)."),
      mark: opt("Firewall mark to match.", FIELD_LIMITS.token),
      target: z
        .enum(["ACCEPT", "REJECT", "DROP", "MARK", "NOTRACK"])
        .optional()
        .describe(
          "What to do with matching traffic: ACCEPT, REJECT, DROP, MARK (needs set_mark or set_xmark) or NOTRACK.",
        ),
      set_mark: opt("With target MARK: the mark to set.", FIELD_LIMITS.token),
      set_xmark: opt("With target MARK: the mark to XOR.", FIELD_LIMITS.token),
      family: family(),
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
export type FirewallRuleSpec = z.infer<ReturnType<typeof firewallRuleSpecSchema>>;

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
