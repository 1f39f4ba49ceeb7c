/**
 * Field building blocks shared by the kind modules. Each field carries its description so the
 * generated CRD answers `kubectl explain`, and a maxLength the CNF can store, so the CRD, the
 * webhook and the functions agree on sizes (docs/cnf.md "Sizes and formats").
 *
 * Addresses and CIDRs are parsed with ipaddr.js, never matched by a regex: `999.1.1.1` and
 * `10.0.0.0/99` must fail here, at admission, not on the CNF after the rule was accepted.
 */
import ipaddr from "ipaddr.js";
import * as z from "zod";
import { NetworkNotMappedError } from "../errors.js";
import type { NameRule } from "../entry.js";
import type { NetworkInterfaceMap } from "../network-map.js";

/**
 * Field size limits, in characters: well above any real value, and what the CNF keeps as one
 * UCI option (or one file, for the PEM fields). The whole spec is capped as well
 * (RULE_SPEC_MAX_BYTES, common.ts); for the ipsec kinds, with three PEM fields, the cap binds first.
 */
export const FIELD_LIMITS = {
  /** Enumerated or short tokens: marks, families, protocols, flags. */
  token: 64,
  /** One address, CIDR or MAC, possibly negated. */
  address: 64,
  /** A Kubernetes object name (networks, references without a stricter CNF limit). */
  kubeName: 253,
  /** Free text the CNF passes to iptables or strongSwan: extra arguments, identities, paths. */
  text: 1024,
  /** Comma-separated address lists (ipsec subnets and source IPs). */
  list: 4096,
  /** One PEM certificate or key (a chain of dozens of certificates fits); the spec cap binds first. */
  pem: 65_536,
} as const;

/** A bounded string; the message names the limit so the user knows what to cut. */
export const bounded = (max: number): z.ZodString =>
  z.string().max(max, { message: `must be at most ${max} characters` });

/** An optional string option, as upstream's omitempty string fields. */
export const opt = (
  description: string,
  max: number = FIELD_LIMITS.text,
): z.ZodOptional<z.ZodString> => bounded(max).optional().describe(description);

/** A required, non-empty bounded string. */
export const req = (description: string, max: number = FIELD_LIMITS.text): z.ZodString =>
  bounded(max).min(1).describe(description);

/** A Secret's key, as Kubernetes allows it (letters, digits, -, _ and .). */
const SECRET_KEY = /^[-._a-zA-Z0-9]+$/;
/** A Secret name: a DNS subdomain. */
const SECRET_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * A reference to one key of a Secret in the rule's own namespace, instead of a plain value: the
 * function reads it only when applying, so the value is not in the rule (docs/cnf.md).
 */
export const secretKeyRef = (
  description: string,
): z.ZodOptional<z.ZodObject<{ name: z.ZodString; key: z.ZodString }, z.core.$strict>> =>
  z
    .strictObject({
      name: bounded(FIELD_LIMITS.kubeName)
        .regex(SECRET_NAME, { message: "must be a Secret name (a DNS subdomain)" })
        .describe("Name of a Secret in the rule's namespace."),
      key: bounded(FIELD_LIMITS.kubeName)
        .regex(SECRET_KEY, { message: "must be a Secret key (letters, digits, -, _ and .)" })
        .describe("Key of that Secret holding the value."),
    })
    .optional()
    .describe(description);

/** "0" or "1", the CNF's flag values. */
export const flag = (description: string): z.ZodOptional<z.ZodEnum<{ "0": "0"; "1": "1" }>> =>
  z.enum(["0", "1"]).optional().describe(description);

/** Empty is allowed: the CNF reads "" as absent (reference 2.2). */
const INT_TEXT = /^([1-9][0-9]*)?$/;

/** A decimal integer written as a string, between min and max inclusive ("" reads as absent). */
export const intText = (min: number, max: number, what: string): z.ZodString =>
  z
    .string()
    .regex(INT_TEXT, { message: `must be ${what}: an integer written as a string, e.g. "${min}"` })
    .max(String(max).length, { message: `must be at most ${String(max).length} characters` })
    .refine((text) => text === "" || (Number(text) >= min && Number(text) <= max), {
      message: `must be ${what} between ${min} and ${max}`,
    });

/** A port: an integer 1-65535 written as a string. The CNF takes no ranges (reference 2.4). */
export const port = (description: string): z.ZodOptional<z.ZodString> =>
  intText(1, 65_535, "a port number").optional().describe(description);

/** A decimal integer > 0 written as a string that fits the CNF's int32 (timeouts). */
export const positiveIntText = (description: string): z.ZodOptional<z.ZodString> =>
  intText(1, 2_147_483_647, "a positive integer").optional().describe(description);

/** Upstream's "list of names" fields (zone networks, proposals). */
export const nameList = (
  description: string,
  item: z.ZodString = bounded(FIELD_LIMITS.kubeName).min(1),
): z.ZodArray<z.ZodString> => z.array(item).describe(description);

// ---- addresses

type Family = "ipv4" | "ipv6" | "any";

const familyWord = { ipv4: "an IPv4", ipv6: "an IPv6", any: "an IPv4 or IPv6" } as const;

/** Parses one address; IPv4 only in dotted-decimal form (ipaddr.js also reads 0x1 and 1.2). */
export function parseAddress(text: string, family: Family): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (family !== "ipv6" && ipaddr.IPv4.isValidFourPartDecimal(text)) return ipaddr.IPv4.parse(text);
  if (family !== "ipv4" && text.includes(":") && ipaddr.IPv6.isValid(text)) {
    return ipaddr.IPv6.parse(text);
  }
  return null;
}

/** Null when `text` is an address or address/prefix of `family`, else why not. */
export function addressProblem(text: string, family: Family, allowPrefix: boolean): string | null {
  const slash = text.indexOf("/");
  const addressText = slash < 0 ? text : text.slice(0, slash);
  const address = parseAddress(addressText, family);
  if (address === null) {
    return `${JSON.stringify(addressText)} is not ${familyWord[family]} address`;
  }
  if (slash < 0) return null;
  if (!allowPrefix) return `${JSON.stringify(text)} must be one address, without a /prefix`;
  const prefix = text.slice(slash + 1);
  const bits = address.kind() === "ipv4" ? 32 : 128;
  if (!/^(0|[1-9][0-9]{0,2})$/.test(prefix) || Number(prefix) > bits) {
    return `prefix /${prefix} of ${JSON.stringify(text)} must be an integer 0-${bits}`;
  }
  return null;
}

/** A string checked by `problem` (null: fine), bounded by `max`. */
export const checkedText = (max: number, problem: (text: string) => string | null): z.ZodString =>
  bounded(max).superRefine((text, ctx) => {
    // Too long: the max check already said so. Empty: absent, as the CNF reads "" (reference
    // 2.2); required fields add .min(1).
    if (text.length > max || text === "") return;
    const why = problem(text);
    if (why !== null) ctx.addIssue({ code: "custom", message: why });
  });

/**
 * IPv4 address or IPv4/prefix, as the CNF's ipv4OrCidr check (mwan3 rules, firewall matches
 * and redirects, zone subnets); `negatable` allows a leading "!" (zone masq_src / masq_dest).
 */
export const ipv4OrCidr = (negatable = false): z.ZodString =>
  checkedText(FIELD_LIMITS.address, (text) =>
    addressProblem(negatable && text.startsWith("!") ? text.slice(1) : text, "ipv4", true),
  );

/**
 * IPsec address fields: the CNF stores them for strongSwan without a check, and upstream's own
 * samples carry placeholders such as `xx.xx.xx.xx`, so only what is written as an address
 * (digits, dots and a /prefix, or anything with a colon) must parse as one; other tokens
 * (%any, %config, DNS names) pass. `999.1.1.1` and `10.0.0.0/99` are denied here, not
 * accepted and then refused by strongSwan.
 */
const WRITTEN_AS_ADDRESS = /^[0-9./]+$/;
/** A strongSwan traffic selector suffix: [proto], [proto/port], [/port]. */
const PROTOPORT = /\[[^\]]*\]$/;
const NO_SPACE = /^\S+$/;

function ipsecAddressProblem(piece: string, allowPrefix: boolean): string | null {
  if (!NO_SPACE.test(piece)) return `${JSON.stringify(piece)} must not contain spaces`;
  if (WRITTEN_AS_ADDRESS.test(piece) || piece.includes(":")) {
    return addressProblem(piece, "any", allowPrefix);
  }
  return null;
}

function listProblem(text: string, item: (piece: string) => string | null): string | null {
  const pieces = text.split(",").map((piece) => piece.trim());
  for (const piece of pieces) {
    if (piece === "") return `${JSON.stringify(text)} has an empty item between commas`;
    const why = item(piece);
    if (why !== null) return why;
  }
  return null;
}

/** Comma-separated IPv4/IPv6 subnets or addresses, each with an optional [proto/port] selector. */
export const subnetList = (): z.ZodString =>
  checkedText(FIELD_LIMITS.list, (text) =>
    listProblem(text, (piece) => ipsecAddressProblem(piece.replace(PROTOPORT, ""), true)),
  );

/** Comma-separated virtual IPs: %config (or another % keyword), addresses, CIDRs or a-b ranges. */
export const sourceIpList = (): z.ZodString =>
  checkedText(FIELD_LIMITS.list, (text) =>
    listProblem(text, (piece) => {
      const dash = piece.indexOf("-");
      const [from, to] = [piece.slice(0, dash), piece.slice(dash + 1)];
      if (dash < 0 || !WRITTEN_AS_ADDRESS.test(from) || !WRITTEN_AS_ADDRESS.test(to)) {
        // Not an IPv4 range: an address, CIDR, keyword, or an IPv6 range (a-b with colons).
        if (dash > 0 && piece.includes(":")) return rangeProblem(piece, from, to);
        return ipsecAddressProblem(piece, true);
      }
      return rangeProblem(piece, from, to);
    }),
  );

function rangeProblem(piece: string, from: string, to: string): string | null {
  const a = parseAddress(from, "any");
  const b = parseAddress(to, "any");
  if (a === null || b === null || a.kind() !== b.kind()) {
    return `range ${JSON.stringify(piece)} must be two addresses of one family, e.g. 192.168.1.5-192.168.1.6`;
  }
  return null;
}

/** An IKE peer: an IPv4/IPv6 address, a DNS name, or a strongSwan keyword such as %any. */
export const peerAddress = (): z.ZodString =>
  checkedText(FIELD_LIMITS.kubeName, (text) => ipsecAddressProblem(text, false));

const MAC = /^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$/;

/** A MAC address such as 52:54:00:12:34:56 (the CNF's check). */
export const macAddress = (): z.ZodString =>
  checkedText(FIELD_LIMITS.address, (text) =>
    MAC.test(text)
      ? null
      : `${JSON.stringify(text)} is not a MAC address such as 52:54:00:12:34:56`,
  );

// ---- names

/**
 * A Kubernetes name as the CNF stores it when the name is a UCI section name ([A-Za-z0-9_]):
 * "-" becomes "_". Kubernetes names never hold "_", so the mapping is one-to-one and a name
 * without "-" is stored as it is (no rule written before the mapping changes on the CNF).
 */
export const uciSectionName = (name: string): string => name.replaceAll("-", "_");

/**
 * The name rule of a kind the CNF stores as a UCI section and builds other names from
 * (`builtFrom`, for the reason): lowercase letters, digits and "-" (stored as "_"), at most
 * `maxLength`. Kubernetes names are lowercase DNS subdomains; "." has no UCI counterpart.
 */
function uciSectionNameRule(maxLength: number, builtFrom: string): NameRule {
  return {
    pattern: /^[a-z0-9-]+$/,
    maxLength,
    reason: `the CNF stores it as a UCI section name and ${builtFrom}: lowercase letters, digits and - (stored as _), no ., at most ${maxLength}`,
    cnfName: uciSectionName,
  };
}

/**
 * IPsec proposal, site, host and connection names: UCI section names that the CNF also builds
 * strongSwan connection names (`<remote>-<connection>`) and certificate file names
 * (`<remote>_<kind>_<i>.pem`) from; 63 characters keeps both well inside the 255-byte file name limit.
 */
export const IPSEC_NAME_MAX = 63;
export const IPSEC_NAME_RULE = uciSectionNameRule(
  IPSEC_NAME_MAX,
  "builds strongSwan connection and certificate file names from it",
);

/**
 * mwan3 policy and rule names: mwan3 builds iptables chains (`mwan3_policy_<name>`, 28
 * characters at most) and ipsets (`mwan3_rule_ipv4_<name>`, 31 at most) from them.
 */
export const MWAN3_NAME_MAX = 15;
export const MWAN3_NAME_RULE = uciSectionNameRule(
  MWAN3_NAME_MAX,
  "mwan3 builds iptables chain and ipset names from it",
);

/** The CNF limits firewall zone names to 11 characters (reference 2.4). */
export const ZONE_NAME_MAX = 11;

/** Translates a network name through the CNF Deployment's nfn-network map. */
export function interfaceOf(networks: NetworkInterfaceMap, network: string, field: string): string {
  const iface = networks.get(network);
  if (iface === undefined) throw new NetworkNotMappedError(network, field, [...networks.keys()]);
  return iface;
}

/** Examples (RuleExample): a port 1..60000 chosen by `n`. */
export const examplePort = (n: number): string => String(1 + (n % 60_000));

/** Examples: the last two octets of an IPv4 address chosen by `n`, e.g. `3.17`. */
export const exampleOctets = (n: number): string => `${(n >> 8) & 255}.${n & 255}`;
