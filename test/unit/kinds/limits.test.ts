// Issue 17 items 1 and 5: every string field of every rule kind has a size the CNF can store,
// a whole spec has a cap, and the values the hostile run got through (999.1.1.1, /99, port
// 70000, 251-character ipsec names) are refused with the field named.
import {
  ALL_RULE_KINDS,
  FIELD_LIMITS,
  RULE_KIND_NAMES,
  RULE_SPEC_MAX_BYTES,
  requireKind,
} from "../../../shared/kinds/index.js";
import { structuralSchemaOf, type SchemaNode } from "../../../shared/kinds/structural-schema.js";
import { LARGEST_NAMES, largestSpec, oneOver, text } from "../../fixtures/largest-rules.js";

function unboundedStrings(node: unknown, path: string): string[] {
  if (typeof node !== "object" || node === null) return [];
  const schema = node as SchemaNode;
  const found: string[] = [];
  if (
    schema["type"] === "string" &&
    schema["enum"] === undefined &&
    schema["maxLength"] === undefined
  ) {
    found.push(path);
  }
  const properties = (schema["properties"] ?? {}) as Record<string, unknown>;
  for (const [key, child] of Object.entries(properties))
    found.push(...unboundedStrings(child, `${path}.${key}`));
  if (schema["items"] !== undefined) found.push(...unboundedStrings(schema["items"], `${path}[]`));
  return found;
}

describe("size limits", () => {
  it.each(ALL_RULE_KINDS.map((e) => [e.kind, e] as const))(
    "%s: every string field of the CRD spec has a maxLength",
    (_kind, entry) => {
      expect(unboundedStrings(structuralSchemaOf(entry.specSchema), "spec")).toEqual([]);
    },
  );

  it.each(RULE_KIND_NAMES)("%s: the largest spec is admitted and stays under the cap", (kind) => {
    const spec = largestSpec(kind);
    const parsed = requireKind(kind).parseSpec(spec);
    expect(parsed.ok ? "ok" : parsed.message).toBe("ok");
    expect(JSON.stringify(spec).length).toBeLessThanOrEqual(RULE_SPEC_MAX_BYTES);
    expect(requireKind(kind).checkName(LARGEST_NAMES[kind])).toBeNull();
  });

  it.each(RULE_KIND_NAMES)(
    "%s: one character over is refused, naming the field and limit",
    (kind) => {
      const { spec, field, limit } = oneOver(kind);
      const parsed = requireKind(kind).parseSpec(spec);
      expect(parsed.ok).toBe(false);
      if (parsed.ok) return;
      const issue = parsed.issues.find((i) => i.path === field);
      expect(issue?.message).toContain(String(limit));
    },
  );

  it("the ipsec kinds fill the spec cap exactly, and the cap is well under half the webhook's 3 MiB", () => {
    expect(JSON.stringify(largestSpec("IpsecHost")).length).toBe(RULE_SPEC_MAX_BYTES);
    expect(RULE_SPEC_MAX_BYTES * 4).toBeLessThan(3 * 1024 * 1024);
  });
});

describe("values the CNF would refuse late (or never), refused at the schema", () => {
  const rule = { policy: "p" };
  it.each([
    [
      "Mwan3Rule",
      { ...rule, src_ip: "999.1.1.1" },
      "spec.src_ip",
      '"999.1.1.1" is not an IPv4 address',
    ],
    ["Mwan3Rule", { ...rule, dest_ip: "10.0.0.0/99" }, "spec.dest_ip", "prefix /99"],
    ["Mwan3Rule", { ...rule, dest_ip: "10.0.0.0/" }, "spec.dest_ip", "prefix /"],
    ["Mwan3Rule", { ...rule, src_ip: "1.2.3" }, "spec.src_ip", "not an IPv4 address"],
    ["Mwan3Rule", { ...rule, src_ip: "0x1.2.3.4" }, "spec.src_ip", "not an IPv4 address"],
    ["Mwan3Rule", { ...rule, dest_port: "70000" }, "spec.dest_port", "between 1 and 65535"],
    ["Mwan3Rule", { ...rule, timeout: "99999999999" }, "spec.timeout", "at most 10 characters"],
    ["FirewallDNAT", { src: "wan1", dest_port: "70000" }, "spec.dest_port", "between 1 and 65535"],
    ["FirewallDNAT", { src: "wan1", src_dport: "0" }, "spec.src_dport", "a port number"],
    ["FirewallDNAT", { src: "wan1", dest_ip: "999.1.1.1" }, "spec.dest_ip", "not an IPv4 address"],
    ["FirewallDNAT", { src: "wan1", src_mac: "52:54:00:12:34" }, "spec.src_mac", "MAC address"],
    ["FirewallSNAT", { src_dip: "1.2.3.4/33", dest: "wan1" }, "spec.src_dip", "0-32"],
    ["FirewallRule", { src_port: "1000-2000" }, "spec.src_port", "a port number"],
    ["FirewallRule", { src: "averylongzone" }, "spec.src", "at most 11"],
    ["FirewallZone", { network: ["a"], subnet: ["10.0.0.0/99"] }, "spec.subnet[0]", "prefix /99"],
    ["FirewallZone", { network: ["a"], masq_src: ["!999.1.1.1"] }, "spec.masq_src[0]", "999.1.1.1"],
    [
      "Mwan3Policy",
      { members: [{ network: "a", metric: 1, weight: 1001 }] },
      "spec.members[0].weight",
      "1000",
    ],
    [
      "Mwan3Policy",
      { members: [{ network: "a", metric: 257, weight: 1 }] },
      "spec.members[0].metric",
      "256",
    ],
    [
      "IpsecHost",
      host({ remote: "999.1.1.1" }),
      "spec.remote",
      '"999.1.1.1" is not an IPv4 or IPv6 address',
    ],
    ["IpsecHost", host({ remote: "fd00::1::2" }), "spec.remote", "not an IPv4 or IPv6 address"],
    [
      "IpsecHost",
      host({}, { remote_subnet: "10.0.0.0/99" }),
      "spec.connections[0].remote_subnet",
      "prefix /99",
    ],
    [
      "IpsecHost",
      host({}, { remote_subnet: "fd00::/129" }),
      "spec.connections[0].remote_subnet",
      "0-128",
    ],
    [
      "IpsecHost",
      host({}, { remote_sourceip: "10.0.0.9-fd00::1" }),
      "spec.connections[0].remote_sourceip",
      "one family",
    ],
    ["IpsecHost", host({}, { name: text(64, "c") }), "spec.connections[0].name", "at most 63"],
    ["IpsecHost", host({ connections: [] }), "spec.connections", "at least one connection"],
    [
      "IpsecHost",
      host({ crypto_proposal: [text(251, "p")] }),
      "spec.crypto_proposal[0]",
      "at most 63",
    ],
    [
      "CNFService",
      { fullname: "a.b", port: "70000", dport: "80" },
      "spec.port",
      "between 1 and 65534",
    ],
  ] as const)("%s %j: %s says %s", (kind, spec, path, fragment) => {
    const parsed = requireKind(kind).parseSpec(spec);
    expect(parsed.ok).toBe(false);
    if (parsed.ok) return;
    expect(parsed.issues.find((i) => i.path === path)?.message).toContain(fragment);
  });

  it.each([
    ["IpsecProposal", text(251, "p")],
    ["IpsecSite", text(64, "s")],
    ["IpsecHost", text(251, "h")],
    ["Mwan3Policy", text(16, "p")],
    ["Mwan3Rule", text(16, "r")],
  ] as const)("%s named with %#: its length is refused", (kind, name) => {
    expect(requireKind(kind).checkName(name)).toContain(`${name.length} characters; at most`);
  });

  it.each([
    ["IpsecHost", host({ remote: "vpn.example.com" })],
    ["IpsecHost", host({ remote: "%any" })],
    ["IpsecHost", host({ remote: "fd00::1" })],
    ["IpsecHost", host({}, { remote_subnet: "10.0.0.0/24[tcp/80],fd00::/64" })],
    ["IpsecHost", host({}, { remote_sourceip: "%config,fd00::1-fd00::9" })],
    // Upstream's own samples use placeholders the CNF stores as given.
    ["IpsecHost", host({ remote: "xx.xx.xx.xx" }, { remote_subnet: "xx.xx.xx.xx/xx" })],
    ["Mwan3Rule", { policy: "p", src_ip: "", dest_port: "" }],
    ["FirewallRule", { src: "", src_port: "65535", dest_ip: "0.0.0.0/0" }],
  ] as const)("%s %j is still admitted (upstream accepts it)", (kind, spec) => {
    const parsed = requireKind(kind).parseSpec(spec);
    expect(parsed.ok ? "ok" : parsed.message).toBe("ok");
  });
});

function host(
  fields: Record<string, unknown>,
  conn: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    remote: "10.10.10.1",
    authentication_method: "psk",
    pre_shared_key: "test-only-key",
    crypto_proposal: ["p1"],
    connections: [{ name: "c1", conn_type: "tunnel", mode: "start", ...conn }],
    ...fields,
  };
}

it("FIELD_LIMITS stay in the documented order", () => {
  expect(FIELD_LIMITS.token).toBeLessThan(FIELD_LIMITS.text);
  // Three PEM fields at their limit exceed the spec cap: for the ipsec kinds the cap binds.
  expect(FIELD_LIMITS.pem).toBeLessThan(RULE_SPEC_MAX_BYTES);
  expect(FIELD_LIMITS.pem * 3).toBeGreaterThan(RULE_SPEC_MAX_BYTES);
});
