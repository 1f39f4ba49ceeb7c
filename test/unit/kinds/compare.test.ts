import {
  RULE_KIND_NAMES,
  parseNfnNetworkAnnotation,
  requireKind,
  type CnfObject,
  type RuleKindName,
} from "../../../shared/kinds/index.js";
import { MANIFEST_SAMPLES } from "./yaml-docs.js";

const networks = parseNfnNetworkAnnotation(
  '{"interface":[{"name":"ovn-net1","interface":"net1"},{"name":"ovn-net2","interface":"net2"}]}',
);

/** The CR of a manifest sample, converted as reconcile would. */
function desiredOf(kind: RuleKindName, name?: string): CnfObject {
  const doc = MANIFEST_SAMPLES.find(
    (d) =>
      d.value["kind"] === kind &&
      (name === undefined || (d.value["metadata"] as { name: string }).name === name),
  );
  if (doc === undefined) throw new Error(`no sample ${kind}`);
  return requireKind(kind).toCnf(doc.value as { metadata: { name: string }; spec: unknown }, {
    networks,
  });
}

/**
 * What a CNF answers on GET for an object it stored from `body`: UCI keeps strings but a JSON
 * encoder may emit numbers; lists come back in storage order; extra keys (enabled, member names)
 * appear; values may carry whitespace the CNF's trim would remove on write.
 */
function asCnfReturnsIt(body: unknown): unknown {
  if (Array.isArray(body)) return [...(body as unknown[])].reverse().map(asCnfReturnsIt);
  if (typeof body === "object" && body !== null) {
    const out: Record<string, unknown> = { enabled: "1" };
    for (const [key, value] of Object.entries(body)) out[key] = asCnfReturnsIt(value);
    return out;
  }
  if (typeof body === "string" && /^[0-9]+$/.test(body)) return Number(body);
  return body;
}

describe("normalised comparison: an applied, unchanged rule equals what the CNF returns", () => {
  it.each(RULE_KIND_NAMES)(
    "%s sample equals its CNF-style GET reply (numbers, extra keys, reordered sets)",
    (kind) => {
      const entry = requireKind(kind);
      const desired = desiredOf(kind);
      const reply = asCnfReturnsIt(desired);
      expect(entry.cnfObjectSchema.safeParse(reply).success).toBe(true);
      expect(entry.cnfDiff(desired, reply)).toEqual([]);
      expect(entry.cnfEqual(desired, reply)).toBe(true);
    },
  );

  it.each([
    [
      "Mwan3Policy",
      {
        name: "p",
        members: [
          { interface: "net1", metric: "2", weight: "2" },
          { interface: "net2", metric: "3", weight: "3" },
        ],
      },
      {
        name: "p",
        members: [
          { name: "p_net2", interface: "net2", metric: 3, weight: 3 },
          { name: "p_net1", interface: "net1", metric: "2", weight: "2" },
        ],
      },
    ],
    [
      "Mwan3Rule",
      { name: "r", policy: "p", src_ip: "", proto: "tcp" },
      { name: "r", policy: "p", proto: "tcp", use_policy: "p" },
    ],
    [
      "FirewallZone",
      { name: "z", network: ["net1", "net2"], input: "ACCEPT" },
      { name: "z", network: ["net2", "net1"], input: " ACCEPT ", masq_src: [] },
    ],
    [
      "FirewallSNAT",
      { name: "s", src_dip: "1.2.3.4", dest: "wan", target: "SNAT" },
      { name: "s", src_dip: "1.2.3.4", dest: "wan", target: "SNAT", src_ip: null },
    ],
    [
      "CNFService",
      { name: "svc", fullname: "a.b", port: "80", dport: "8080" },
      { name: "svc", fullname: "a.b", port: 80, dport: 8080 },
    ],
    [
      "IpsecSite",
      {
        name: "s",
        gateway: "%any",
        authentication_method: "psk",
        pre_shared_key: "k",
        crypto_proposal: ["p1"],
        connections: [
          { name: "b", conn_type: "transport", mode: "add", local_subnet: "x" },
          { name: "a", conn_type: "tunnel", mode: "start", local_subnet: "y" },
        ],
      },
      {
        name: "s",
        gateway: "%any",
        enabled: "1",
        authentication_method: "psk",
        pre_shared_key: "k\n",
        crypto_proposal: ["p1"],
        connections: [
          { name: "a", conn_type: "tunnel", mode: "start", local_subnet: "y" },
          { name: "b", conn_type: "transport", mode: "add", local_subnet: "x" },
        ],
      },
    ],
  ] as const)("%s: %j equals %j", (kind, desired, reply) => {
    expect(requireKind(kind).cnfEqual(desired, reply)).toBe(true);
  });
});

describe("normalised comparison: a real change is a difference", () => {
  type Change = (o: Record<string, unknown>) => Record<string, unknown>;
  const CHANGES: readonly [RuleKindName, string, Change, string[]][] = [
    [
      "Mwan3Policy",
      "a member's weight 2 -> 5",
      (o) => ({
        ...o,
        members: [
          { interface: "net1", metric: "2", weight: "5" },
          { interface: "net2", metric: "3", weight: "3" },
        ],
      }),
      ["members"],
    ],
    [
      "Mwan3Policy",
      "a member removed",
      (o) => ({ ...o, members: [{ interface: "net1", metric: "2", weight: "2" }] }),
      ["members"],
    ],
    ["Mwan3Rule", "dest_port 80 -> 8080", (o) => ({ ...o, dest_port: "8080" }), ["dest_port"]],
    ["Mwan3Rule", "family missing on the CNF", (o) => ({ ...o, family: undefined }), ["family"]],
    ["FirewallZone", "another network", (o) => ({ ...o, network: ["net2"] }), ["network"]],
    [
      "FirewallSNAT",
      "target DNAT (a DNAT of the same name)",
      (o) => ({ ...o, target: "DNAT" }),
      ["target"],
    ],
    ["FirewallDNAT", "another dest_ip", (o) => ({ ...o, dest_ip: "192.168.1.9" }), ["dest_ip"]],
    ["FirewallForwarding", "an extra family", (o) => ({ ...o, family: "ipv6" }), ["family"]],
    ["FirewallRule", "target ACCEPT", (o) => ({ ...o, target: "ACCEPT" }), ["target"]],
    ["IpsecProposal", "another dh_group", (o) => ({ ...o, dh_group: "modp2048" }), ["dh_group"]],
    [
      "IpsecSite",
      "an extra proposal first",
      (o) => ({ ...o, crypto_proposal: ["proposal2", "proposal1"] }),
      ["crypto_proposal"],
    ],
    ["IpsecSite", "connections gone", (o) => ({ ...o, connections: [] }), ["connections"]],
    ["IpsecHost", "another gateway", (o) => ({ ...o, gateway: "10.10.10.2" }), ["gateway"]],
    ["CNFService", "dport 8080 -> 8081", (o) => ({ ...o, dport: "8081" }), ["dport"]],
    ["CNFService", "another name", (o) => ({ ...o, name: "other" }), ["name"]],
  ];

  it.each(CHANGES)("%s with %s is a difference", (kind, _what, change, fields) => {
    const entry = requireKind(kind);
    const desired = desiredOf(kind);
    const reply = change(desired);
    expect(entry.cnfEqual(desired, reply)).toBe(false);
    expect(entry.cnfDiff(desired, reply)).toEqual(fields);
  });

  it("treats ipsec crypto_proposal as ordered (preference) but zone networks as a set", () => {
    const site = requireKind("IpsecSite");
    expect(
      site.cnfEqual(
        { name: "s", crypto_proposal: ["a", "b"] },
        { name: "s", crypto_proposal: ["b", "a"] },
      ),
    ).toBe(false);
    const zone = requireKind("FirewallZone");
    expect(
      zone.cnfEqual({ name: "z", network: ["a", "b"] }, { name: "z", network: ["b", "a"] }),
    ).toBe(true);
  });

  it("sees an object missing on the CNF (null or not an object) as different", () => {
    const desired = desiredOf("Mwan3Rule");
    expect(requireKind("Mwan3Rule").cnfEqual(desired, null)).toBe(false);
    expect(requireKind("Mwan3Rule").cnfDiff(desired, "garbage")).toContain("policy");
  });

  it("tells SNAT and DNAT redirects apart in a shared redirects list", () => {
    const snat = requireKind("FirewallSNAT");
    const dnat = requireKind("FirewallDNAT");
    const listed = [
      { name: "a", target: "SNAT" },
      { name: "b", target: "DNAT" },
    ];
    expect(listed.filter((o) => snat.ownsCnfObject(o)).map((o) => o.name)).toEqual(["a"]);
    expect(listed.filter((o) => dnat.ownsCnfObject(o)).map((o) => o.name)).toEqual(["b"]);
  });
});

describe("CNF reply schemas", () => {
  it.each([
    [
      "Mwan3Policy",
      {
        policies: [
          { name: "p", members: [{ name: "p_net1", interface: "net1", metric: "1", weight: "1" }] },
        ],
      },
    ],
    ["FirewallZone", { zones: [] }],
    ["IpsecHost", { remotes: [{ name: "h", gateway: "1.2.3.4", enabled: "1" }] }],
    ["CNFService", { services: [{ name: "s", fullname: "a.b", port: "1", dport: "2" }] }],
  ] as const)("%s accepts the collection reply %j", (kind, reply) => {
    expect(requireKind(kind).cnfListSchema.safeParse(reply).success).toBe(true);
  });

  it.each([
    ["Mwan3Policy", { rules: [] }],
    ["Mwan3Rule", { rules: [{ policy: "p" }] }],
    ["FirewallZone", { zones: [{ name: "z", network: [{ iface: "net1" }] }] }],
    ["Mwan3Policy", { policies: [{ name: "p", members: "net1" }] }],
  ] as const)("%s refuses the malformed reply %j", (kind, reply) => {
    expect(requireKind(kind).cnfListSchema.safeParse(reply).success).toBe(false);
  });
});
