/**
 * The per-kind validators and dependency rules of the upstream CNF at the DESIGN snapshot
 * (reference 2.4): which fields exist, which are required, which enumerations and formats apply,
 * and which references must resolve (rule -> policy, member -> interface, zone -> network,
 * redirect/rule/forwarding -> zone, remote/connection -> proposal).
 */
import { restCollection, type SimCollection } from "./collection.js";
import { ipsecRemoteStore, mwan3PolicyStore, uciStore } from "./stores.js";
import type { UciWorld } from "./uci.js";
import {
  integerBetween,
  ipv4OrCidr,
  macAddress,
  maxLength,
  maybeNegatedIp,
  mustExist,
  oneOf,
  type CheckResult,
  type FieldRule,
  type ObjectRule,
} from "./validate.js";

const positiveInteger = integerBetween(0);
const flag = oneOf("0", "1");
const family3 = oneOf("ipv4", "ipv6", "any");
const firewallProto = oneOf("tcp", "udp", "tcpudp", "udplite", "icmp", "esp", "ah", "sctp", "all");
const policyAction = oneOf("ACCEPT", "REJECT", "DROP");
const plain = (name: string): FieldRule => ({ name });

// The iptables ICMP type names upstream accepts. "address-mask-request " carries a trailing
// space upstream, so a plain "address-mask-request" is rejected there too.
const icmpTypes = [
  "address-mask-reply", "address-mask-request ", "any", "communication-prohibited",
  "destination-unreachable", "echo-reply", "echo-request", "fragmentation-needed",
  "host-precedence-violation", "host-prohibited", "host-redirect", "host-unknown",
  "host-unreachable", "ip-header-bad", "network-prohibited", "network-redirect",
  "network-unknown", "network-unreachable", "parameter-problem", "ping", "pong",
  "port-unreachable", "precedence-cutoff", "protocol-unreachable", "redirect",
  "required-option-missing", "router-advertisement", "router-solicitation", "source-quench",
  "source-route-failed", "time-exceeded", "timestamp-reply", "timestamp-request",
  "TOS-host-redirect", "TOS-host-unreachable", "TOS-network-redirect", "TOS-network-unreachable",
  "ttl-exceeded", "ttl-zero-during-reassembly", "ttl-zero-during-transit",
]; // prettier-ignore

// strongSwan algorithm keywords accepted by the CNF's proposal validator.
const keySizes = ["128", "192", "256"];
const counterAndCcmModes = ["ctr", "ccm8", "ccm64", "ccm12", "ccm96", "ccm16", "ccm128"];
const gcmModes = ["gcm8", "gcm64", "gcm12", "gcm96", "gcm16", "gcm128"];
const withModes = (cipher: string, modes: readonly string[]): string[] =>
  modes.flatMap((mode) => keySizes.map((bits) => `${cipher}${bits}${mode}`));
const encryptionAlgorithms = [
  "3des", "cast128", "blowfish128", "blowfish", "blowfish192", "blowfish256", "null",
  "aes", "aes128", "aes192", "aes256", ...withModes("aes", [...counterAndCcmModes, ...gcmModes]),
  "camellia", "camellia128", "camellia192", "camellia256", ...withModes("camellia", counterAndCcmModes),
  "chacha20poly1305",
]; // prettier-ignore
const hashAlgorithms = [
  "md5", "sha", "sha1", "aesxcbc", "sha256", "sha2_256", "sha384", "sha2_384", "sha512",
  "sha2_512", "sha256_96", "sha2_256_96",
]; // prettier-ignore
const dhGroups = [
  "modp768", "modp1024", "modp1536", "modp2048", "modp3072", "modp4096", "modp6144", "modp8192",
  "modp1024s160", "modp2048s224", "modp2048s256", "ecp192", "ecp224", "ecp256", "ecp384",
  "ecp521", "ecp224bp", "ecp256bp", "ecp384bp", "ecp512bp", "curve25519", "x25519", "curve448",
  "x448",
]; // prettier-ignore

/** The eight REST collections of the DESIGN snapshot, bound to one CNF's configuration. */
export function uciCollections(world: UciWorld): SimCollection[] {
  return [...mwan3Collections(world), ...firewallCollections(world), ...ipsecCollections(world)];
}

function mwan3Collections({ mwan3 }: UciWorld): SimCollection[] {
  // Both checks look the name up in the whole mwan3 id space, as upstream does.
  const inMwan3 = (name: string): boolean => mwan3.byId(name) !== undefined;
  const member: ObjectRule = {
    fields: [
      { name: "interface", required: true, check: mustExist("Interface", inMwan3), message: "invalid interface" },
      { name: "metric", required: true, check: positiveInteger, message: "metric should be greater than 0" },
      { name: "weight", required: true, check: positiveInteger, message: "weight should be greater than 0" },
    ],
  }; // prettier-ignore
  const policyRule: ObjectRule = {
    fields: [
      plain("name"),
      { name: "members", required: true, items: member, message: "Incorrect policy member" },
    ],
  };
  const rule: ObjectRule = {
    fields: [
      plain("name"),
      { name: "policy", required: true, check: mustExist("Policy", inMwan3), message: "invalid policy" },
      { name: "src_ip", check: ipv4OrCidr, message: "invalid ip address" },
      { name: "src_port", check: positiveInteger, message: "invalid src_port" },
      { name: "dest_ip", check: ipv4OrCidr, message: "invalid ip address" },
      { name: "dest_port", check: positiveInteger, message: "invalid dest_port" },
      { name: "proto", check: oneOf("tcp", "udp", "icmp", "all"), message: "wrong proto" },
      { name: "family", check: oneOf("ipv4", "ipv6", "all"), message: "wrong family" },
      { name: "sticky", check: flag, message: "wrong sticky" },
      { name: "timeout", check: positiveInteger, message: "invalid timeout" },
    ],
  }; // prettier-ignore
  return [
    restCollection({
      module: "mwan3",
      collection: "policies",
      typeName: "policy",
      rule: policyRule,
      store: mwan3PolicyStore(mwan3),
      isUsed: (name) => mwan3.ofType("rule").some((section) => section.data["policy"] === name),
    }),
    restCollection({
      module: "mwan3",
      collection: "rules",
      typeName: "rule",
      rule,
      store: uciStore(mwan3, "rule", false),
    }),
  ];
}

function firewallCollections({ firewall, network }: UciWorld): SimCollection[] {
  const zones = uciStore(firewall, "zone", true);
  const zone = mustExist("Zone", (name) => zones.get(name) !== undefined);
  const zoneRule: ObjectRule = {
    fields: [
      { name: "name", check: maxLength(11, "The length of Name shall not exceed 11 characters"), message: "invalid zone name" },
      { name: "network", items: mustExist("Interface", (name) => network.byId(name) !== undefined), message: "invalid network" },
      { name: "masq", check: flag, message: "invalid masq" },
      { name: "masq_src", items: maybeNegatedIp, message: "invalid masq_src" },
      { name: "masq_dest", items: maybeNegatedIp, message: "invalid masq_dest" },
      { name: "masq_allow_invalid", check: flag, message: "invalid masq_allow_invalid" },
      { name: "mtu_fix", check: flag, message: "invalid mtu_fix" },
      { name: "input", check: policyAction, message: "invalid input" },
      { name: "forward", check: policyAction, message: "invalid forward" },
      { name: "output", check: policyAction, message: "invalid output" },
      { name: "family", check: family3, message: "invalid family" },
      { name: "subnet", items: ipv4OrCidr, message: "invalid subnet" },
      plain("extra_src"),
      plain("etra_dest"),
    ],
  }; // prettier-ignore
  const redirectRule: ObjectRule = {
    fields: [
      plain("name"),
      { name: "src", check: zone, message: "invalid src" },
      { name: "src_ip", check: ipv4OrCidr, message: "invalid src_ip" },
      { name: "src_dip", check: ipv4OrCidr, message: "invalid src_dip" },
      { name: "src_mac", check: macAddress, message: "invalid src_mac" },
      { name: "src_port", check: positiveInteger, message: "invalid src_port" },
      { name: "src_dport", check: positiveInteger, message: "invalid src_port" }, // sic upstream
      { name: "proto", check: firewallProto, message: "invalid proto" },
      { name: "dest", check: zone, message: "invalid dest" },
      { name: "dest_ip", check: ipv4OrCidr, message: "invalid dest_ip" },
      { name: "dest_port", check: positiveInteger, message: "invalid dest_port" },
      plain("mark"),
      { name: "target", check: oneOf("DNAT", "SNAT"), message: "invalid target" },
      { name: "family", check: family3, message: "invalid family" },
    ],
    objectCheck: checkRedirect,
  }; // prettier-ignore
  const ruleRule: ObjectRule = {
    fields: [
      plain("name"),
      { name: "src", check: zone, message: "invalid src" },
      { name: "src_ip", check: ipv4OrCidr, message: "invalid src_ip" },
      { name: "src_mac", check: macAddress, message: "invalid src_mac" },
      { name: "src_port", check: positiveInteger, message: "invalid src_port" },
      { name: "proto", check: firewallProto, message: "invalid proto" },
      { name: "icmp_type", items: oneOf(...icmpTypes), message: "invalid icmp_type" },
      { name: "dest", check: zone, message: "invalid dest" },
      { name: "dest_ip", check: ipv4OrCidr, message: "invalid dest_ip" },
      { name: "dest_port", check: positiveInteger, message: "invalid dest_port" },
      plain("mark"),
      { name: "target", check: oneOf("ACCEPT", "REJECT", "DROP", "MARK", "NOTRACK"), message: "invalid target" },
      plain("set_mark"),
      plain("set_xmark"),
      { name: "family", check: family3, message: "invalid family" },
      plain("extra"),
    ],
    objectCheck: (value) =>
      value["target"] === "MARK" && value["set_mark"] === undefined && value["set_xmark"] === undefined
        ? { ok: false, detail: "set_mark or set_xmark is required for MARK" }
        : { ok: true },
  }; // prettier-ignore
  const forwardingRule: ObjectRule = {
    fields: [
      plain("name"),
      { name: "src", required: true, check: zone, message: "invalid src" },
      { name: "dest", required: true, check: zone, message: "invalid dest" },
      { name: "family", check: family3, message: "invalid family" },
    ],
  };
  const zoneUsers = ["rule", "forwarding", "redirect"];
  return [
    restCollection({
      module: "firewall",
      collection: "zones",
      typeName: "zone",
      rule: zoneRule,
      store: zones,
      isUsed: (name) =>
        zoneUsers.some((type) =>
          firewall.ofType(type).some((s) => s.data["src"] === name || s.data["dest"] === name),
        ),
    }),
    firewallObjects(firewall, "redirects", "redirect", redirectRule),
    firewallObjects(firewall, "rules", "rule", ruleRule),
    firewallObjects(firewall, "forwardings", "forwarding", forwardingRule),
  ];
}

function firewallObjects(
  firewall: UciWorld["firewall"],
  collection: string,
  typeName: string,
  rule: ObjectRule,
): SimCollection {
  return restCollection({
    module: "firewall",
    collection,
    typeName,
    rule,
    store: uciStore(firewall, typeName, true),
  });
}

function checkRedirect(value: Record<string, unknown>): CheckResult {
  if (value["target"] === "SNAT") {
    if (value["src_dip"] === undefined)
      return { ok: false, detail: "src_dip is required for SNAT" };
    if (value["dest"] === undefined) return { ok: false, detail: "dest is required for SNAT" };
  }
  if (value["target"] === "DNAT" && value["src"] === undefined) {
    return { ok: false, detail: "src is required for DNAT" };
  }
  return { ok: true };
}

function ipsecCollections({ ipsec }: UciWorld): SimCollection[] {
  const proposals = uciStore(ipsec, "proposal", false);
  const proposal = mustExist("Proposal", (name) => proposals.get(name) !== undefined);
  const proposalRule: ObjectRule = {
    fields: [
      plain("name"),
      { name: "encryption_algorithm", check: oneOf(...encryptionAlgorithms), message: "invalid encryption_algorithm" },
      { name: "hash_algorithm", check: oneOf(...hashAlgorithms), message: "invalid hash_algorithm" },
      { name: "dh_group", check: oneOf(...dhGroups), message: "invalid dh_group" },
    ],
  }; // prettier-ignore
  const connectionRule: ObjectRule = {
    fields: [
      { name: "name", required: true },
      { name: "conn_type", required: true, check: oneOf("tunnel", "transport"), message: "invalid type" },
      { name: "mode", required: true, check: oneOf("start", "add", "route"), message: "invalid connection mode" },
      ...["local_subnet", "local_nat", "local_sourceip", "local_updown"].map(plain),
      { name: "local_firewall", check: oneOf("yes", "no") },
      ...["remote_subnet", "remote_sourceip", "remote_updown"].map(plain),
      { name: "remote_firewall", check: oneOf("yes", "no") },
      { name: "crypto_proposal", items: proposal, message: "invalid crypto_proposal" },
      plain("mark"),
    ],
  }; // prettier-ignore
  const remoteRule: ObjectRule = {
    fields: [
      plain("name"),
      plain("type"),
      { name: "gateway", required: true },
      { name: "enabled", defaultValue: "1" },
      { name: "authentication_method", required: true, check: oneOf("psk", "pubkey") },
      ...["pre_shared_key", "local_identifier", "remote_identifier"].map(plain),
      { name: "crypto_proposal", items: proposal, message: "invalid crypto_proposal" },
      { name: "force_crypto_proposal", check: flag, message: "invalid input for ForceCryptoProposal" },
      ...["local_public_cert", "local_private_cert", "shared_ca"].map(plain),
      { name: "connections", items: connectionRule, message: "invalid connection" },
    ],
    objectCheck: checkAuthentication,
  }; // prettier-ignore
  const listsProposal = (type: string, name: string): boolean =>
    ipsec.ofType(type).some((section) => {
      const listed = section.data["crypto_proposal"];
      return Array.isArray(listed) && listed.includes(name);
    });
  return [
    restCollection({
      module: "ipsec",
      collection: "proposals",
      typeName: "proposal",
      rule: proposalRule,
      store: proposals,
      isUsed: (name) => ["remote", "tunnel", "transport"].some((type) => listsProposal(type, name)),
    }),
    restCollection({
      module: "ipsec",
      collection: "remotes",
      typeName: "remote",
      rule: remoteRule,
      store: ipsecRemoteStore(ipsec),
    }),
  ];
}

function checkAuthentication(value: Record<string, unknown>): CheckResult {
  const method = value["authentication_method"];
  const missing = `Secret does not exists for the authentication method: ${String(method)}`;
  if (method === "psk") {
    return value["pre_shared_key"] === undefined ? { ok: false, detail: missing } : { ok: true };
  }
  if (method === "pubkey") {
    const certs = ["local_public_cert", "local_private_cert", "shared_ca"];
    return certs.every((key) => value[key] !== undefined)
      ? { ok: true }
      : { ok: false, detail: missing };
  }
  return { ok: false, detail: "Invalid authentication method" };
}
