import {
  ALL_RULE_KINDS,
  RULE_API_VERSION,
  RULE_KIND_NAMES,
  UnknownRuleKindError,
  byKind,
  byPlural,
  compareApplyOrder,
  isRuleKind,
  kindsReferencing,
  kindsSharingCollection,
  requireKind,
  sortForApply,
  sortForDelete,
  type RuleKindName,
} from "../../../shared/kinds/index.js";

// Upstream facts (reference sdewan-upstream.md 1.1, 2.3, 3.2, 3.3), one row per kind.
const UPSTREAM: readonly [RuleKindName, string, string, string, string | null][] = [
  [
    "Mwan3Policy",
    "mwan3policies",
    "rule.finalizers.sdewan.akraino.org",
    "sdewan/mwan3/v1/policies",
    "mwan3",
  ],
  [
    "Mwan3Rule",
    "mwan3rules",
    "rule.finalizers.sdewan.akraino.org",
    "sdewan/mwan3/v1/rules",
    "mwan3",
  ],
  [
    "FirewallZone",
    "firewallzones",
    "rule.finalizers.sdewan.akraino.org",
    "sdewan/firewall/v1/zones",
    "firewall",
  ],
  [
    "FirewallSNAT",
    "firewallsnats",
    "snat.finalizers.sdewan.akraino.org",
    "sdewan/firewall/v1/redirects",
    "firewall",
  ],
  [
    "FirewallDNAT",
    "firewalldnats",
    "dnat.finalizers.sdewan.akraino.org",
    "sdewan/firewall/v1/redirects",
    "firewall",
  ],
  [
    "FirewallForwarding",
    "firewallforwardings",
    "forwarding.finalizers.sdewan.akraino.org",
    "sdewan/firewall/v1/forwardings",
    "firewall",
  ],
  [
    "FirewallRule",
    "firewallrules",
    "rule.finalizers.sdewan.akraino.org",
    "sdewan/firewall/v1/rules",
    "firewall",
  ],
  [
    "IpsecProposal",
    "ipsecproposals",
    "proposal.finalizers.sdewan.akraino.org",
    "sdewan/ipsec/v1/proposals",
    "ipsec",
  ],
  [
    "IpsecSite",
    "ipsecsites",
    "ipsec.site.finalizers.sdewan.akraino.org",
    "sdewan/ipsec/v1/remotes",
    "ipsec",
  ],
  [
    "IpsecHost",
    "ipsechosts",
    "ipsec.host.finalizers.sdewan.akraino.org",
    "sdewan/ipsec/v1/remotes",
    "ipsec",
  ],
  [
    "CNFService",
    "cnfservices",
    "rule.finalizers.sdewan.akraino.org",
    "sdewan/service/v1/services",
    null,
  ],
];

describe("the rule kind registry", () => {
  it("holds every kind of RULE_KIND_NAMES once, including each SDEWAN rule kind of the design", () => {
    expect(ALL_RULE_KINDS.map((e) => e.kind).sort()).toEqual([...RULE_KIND_NAMES].sort());
    expect(new Set(RULE_KIND_NAMES).size).toBe(RULE_KIND_NAMES.length);
    expect(RULE_KIND_NAMES).toEqual(expect.arrayContaining(UPSTREAM.map(([kind]) => kind)));
  });

  it.each(UPSTREAM)(
    "%s: plural %s, finalizer %s, CNF collection %s, restarts %s",
    (kind, plural, finalizer, path, service) => {
      const entry = requireKind(kind);
      expect(entry.apiVersion).toBe(RULE_API_VERSION);
      expect(entry.plural).toBe(plural);
      expect(entry.singular).toBe(kind.toLowerCase());
      expect(entry.listKind).toBe(`${kind}List`);
      expect(entry.finalizer).toBe(finalizer);
      expect(entry.cnf.path).toBe(path);
      expect(entry.cnf.path.split("/").at(-1)).toBe(entry.cnf.collection);
      expect(entry.cnf.restartService).toBe(service);
      expect(byPlural(plural)).toBe(entry);
      expect(byKind(kind)).toBe(entry);
    },
  );

  it("changes a CNFService by delete then create, since the CNF answers PUT with 405", () => {
    expect(requireKind("CNFService").cnf.update).toBe("delete-then-create");
    const others = ALL_RULE_KINDS.filter((e) => e.kind !== "CNFService");
    expect(new Set(others.map((e) => e.cnf.update))).toEqual(new Set(["put"]));
  });

  it("has unique plurals and short names that collide with nothing", () => {
    const names = ALL_RULE_KINDS.flatMap((e) => [e.plural, e.singular, ...e.shortNames]);
    expect(new Set(names).size).toBe(names.length);
  });

  it("answers unknown kinds and plurals with undefined, and requireKind lists the supported kinds", () => {
    expect(byKind("Mwan3Conf")).toBeUndefined();
    expect(byKind("mwan3policy")).toBeUndefined();
    expect(byPlural("Mwan3Policy")).toBeUndefined();
    expect(isRuleKind("FirewallZone")).toBe(true);
    expect(isRuleKind("Deployment")).toBe(false);
    expect(() => requireKind("Mwan3Conf")).toThrow(UnknownRuleKindError);
    try {
      requireKind("Mwan3Conf");
    } catch (error) {
      expect(error).toMatchObject({ code: "UnknownKind", requested: "Mwan3Conf" });
      expect((error as Error).message).toContain("Mwan3Policy, Mwan3Rule, FirewallZone");
    }
  });

  it("names the kinds that share a CNF collection, where names must not collide", () => {
    expect(kindsSharingCollection("FirewallSNAT").map((e) => e.kind)).toEqual(["FirewallDNAT"]);
    expect(kindsSharingCollection("IpsecHost").map((e) => e.kind)).toEqual(["IpsecSite"]);
    expect(kindsSharingCollection("Mwan3Rule")).toEqual([]);
  });
});

describe("dependency order", () => {
  it.each(
    ALL_RULE_KINDS.filter((e) => e.dependsOn.length > 0).map((e) => [e.kind, e.dependsOn] as const),
  )("%s is applied after %p", (kind, deps) => {
    for (const dep of deps) {
      expect(requireKind(kind).applyRank).toBeGreaterThan(requireKind(dep).applyRank);
      expect(compareApplyOrder(dep, kind)).toBeLessThan(0);
    }
  });

  it.each([
    ["Mwan3Policy", ["Mwan3Rule"]],
    ["FirewallZone", ["FirewallSNAT", "FirewallDNAT", "FirewallForwarding", "FirewallRule"]],
    ["IpsecProposal", ["IpsecSite", "IpsecHost"]],
    ["CNFService", []],
    ["Mwan3Rule", []],
  ] as const)("%s can be referenced by %p", (kind, referrers) => {
    expect(kindsReferencing(kind).map((e) => e.kind)).toEqual(referrers);
  });

  it("lists ALL_RULE_KINDS in apply order: every kind after the kinds it depends on", () => {
    const position = new Map(ALL_RULE_KINDS.map((e, i) => [e.kind, i]));
    for (const entry of ALL_RULE_KINDS) {
      for (const dep of entry.dependsOn)
        expect(position.get(dep)).toBeLessThan(position.get(entry.kind) ?? -1);
    }
  });

  it("sorts a mixed batch for applying (dependencies first) and for deleting (reverse), stable within a kind", () => {
    const batch = [
      { kind: "IpsecSite", name: "s1" },
      { kind: "Mwan3Rule", name: "r1" },
      { kind: "FirewallRule", name: "fr" },
      { kind: "IpsecProposal", name: "p1" },
      { kind: "Mwan3Rule", name: "r2" },
      { kind: "FirewallZone", name: "z" },
      { kind: "Mwan3Policy", name: "pol" },
    ] as const;
    const applied = sortForApply(batch).map((i) => i.name);
    expect(applied.indexOf("pol")).toBeLessThan(applied.indexOf("r1"));
    expect(applied.indexOf("z")).toBeLessThan(applied.indexOf("fr"));
    expect(applied.indexOf("p1")).toBeLessThan(applied.indexOf("s1"));
    expect(applied.indexOf("r1")).toBeLessThan(applied.indexOf("r2"));
    const deleted = sortForDelete(batch).map((i) => i.name);
    expect(deleted.indexOf("r1")).toBeLessThan(deleted.indexOf("pol"));
    expect(deleted.indexOf("fr")).toBeLessThan(deleted.indexOf("z"));
    expect(deleted.indexOf("s1")).toBeLessThan(deleted.indexOf("p1"));
    expect(batch[0].name).toBe("s1"); // input untouched
  });
});

describe("references to other rules", () => {
  it.each([
    ["Mwan3Policy", { members: [{ network: "n", metric: 1, weight: 1 }] }, []],
    [
      "Mwan3Rule",
      { policy: "balance1" },
      [{ kind: "Mwan3Policy", name: "balance1", field: "spec.policy" }],
    ],
    ["FirewallZone", { network: ["n"] }, []],
    [
      "FirewallSNAT",
      { src: "lan1", src_dip: "1.2.3.4", dest: "wan1" },
      [
        { kind: "FirewallZone", name: "lan1", field: "spec.src" },
        { kind: "FirewallZone", name: "wan1", field: "spec.dest" },
      ],
    ],
    ["FirewallDNAT", { src: "wan1" }, [{ kind: "FirewallZone", name: "wan1", field: "spec.src" }]],
    [
      "FirewallForwarding",
      { src: "a", dest: "b" },
      [
        { kind: "FirewallZone", name: "a", field: "spec.src" },
        { kind: "FirewallZone", name: "b", field: "spec.dest" },
      ],
    ],
    [
      "FirewallRule",
      { dest: "wan1", target: "DROP" },
      [{ kind: "FirewallZone", name: "wan1", field: "spec.dest" }],
    ],
    ["FirewallRule", { target: "ACCEPT" }, []],
    [
      "IpsecProposal",
      { encryption_algorithm: "aes128", hash_algorithm: "sha1", dh_group: "modp2048" },
      [],
    ],
    [
      "IpsecSite",
      {
        remote: "%any",
        authentication_method: "psk",
        pre_shared_key: "test-only-key",
        crypto_proposal: ["p1", "p2"],
        connections: [
          {
            name: "c1",
            conn_type: "tunnel",
            mode: "start",
            local_subnet: "10.0.0.0/24",
            crypto_proposal: ["p3"],
          },
          { name: "c2", conn_type: "tunnel", mode: "add", local_subnet: "10.0.1.0/24" },
        ],
      },
      [
        { kind: "IpsecProposal", name: "p1", field: "spec.crypto_proposal[0]" },
        { kind: "IpsecProposal", name: "p2", field: "spec.crypto_proposal[1]" },
        { kind: "IpsecProposal", name: "p3", field: "spec.connections[0].crypto_proposal[0]" },
      ],
    ],
    [
      "IpsecHost",
      {
        remote: "10.0.0.1",
        authentication_method: "psk",
        pre_shared_key: "test-only-key",
        crypto_proposal: [],
        connections: [{ name: "c1", conn_type: "tunnel", mode: "start", crypto_proposal: ["p1"] }],
      },
      [{ kind: "IpsecProposal", name: "p1", field: "spec.connections[0].crypto_proposal[0]" }],
    ],
    ["CNFService", { fullname: "a.b.svc.cluster.local", port: "1", dport: "2" }, []],
  ] as const)("%s %j references %j", (kind, spec, expected) => {
    const entry = requireKind(kind);
    expect(entry.references(spec)).toEqual(expected);
    for (const ref of entry.references(spec)) expect(entry.dependsOn).toContain(ref.kind);
  });

  it("refuses to read references out of an invalid spec", () => {
    expect(() => requireKind("Mwan3Rule").references({ src_ip: "1.2.3.4" })).toThrow(
      /spec\.policy: required/,
    );
  });

  it.each([
    [
      "Mwan3Policy",
      {
        members: [
          { network: "a", metric: 1, weight: 1 },
          { network: "b", metric: 2, weight: 1 },
        ],
      },
      [
        { network: "a", field: "spec.members[0].network" },
        { network: "b", field: "spec.members[1].network" },
      ],
    ],
    ["FirewallZone", { network: ["a"] }, [{ network: "a", field: "spec.network[0]" }]],
    ["FirewallRule", { target: "ACCEPT" }, []],
  ] as const)("%s names the networks %j", (kind, spec, expected) => {
    expect(requireKind(kind).networks(spec)).toEqual(expected);
  });
});
