import {
  EMPTY_NETWORK_MAP,
  NetworkNotMappedError,
  InvalidRuleSpecError,
  RULE_KIND_NAMES,
  requireKind,
  type CnfObject,
  type RuleKindName,
} from "../../../shared/kinds/index.js";
import { parseNfnNetworkAnnotation } from "../../../shared/kinds/index.js";

const networks = parseNfnNetworkAnnotation(
  JSON.stringify({
    type: "ovn4nfv",
    interface: [
      { defaultGateway: "false", interface: "net0", name: "ovn-priv-net" },
      { defaultGateway: "false", interface: "net1", name: "ovn-net1" },
      { defaultGateway: "false", interface: "net2", name: "ovn-net2" },
    ],
  }),
);

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

const cr = (name: string, spec: unknown) => ({ metadata: { name }, spec });

const CASES: readonly [RuleKindName, string, unknown, CnfObject][] = [
  [
    "Mwan3Policy",
    "balance1",
    {
      members: [
        { network: "ovn-net1", metric: 2, weight: 2 },
        { network: "ovn-net2", metric: 3, weight: 3 },
      ],
    },
    {
      name: "balance1",
      members: [
        { interface: "net1", metric: "2", weight: "2" },
        { interface: "net2", metric: "3", weight: "3" },
      ],
    },
  ],
  [
    "Mwan3Rule",
    "httprule",
    {
      policy: "balance1",
      src_ip: "192.168.1.2",
      dest_ip: "0.0.0.0/0",
      dest_port: "80",
      proto: "tcp",
    },
    {
      name: "httprule",
      policy: "balance1",
      src_ip: "192.168.1.2",
      dest_ip: "0.0.0.0/0",
      dest_port: "80",
      proto: "tcp",
    },
  ],
  [
    "FirewallZone",
    "lan1",
    {
      name: "ignored",
      network: ["ovn-net1", "ovn-net2"],
      input: "ACCEPT",
      masq: "1",
      subnet: ["10.0.0.0/24"],
      etra_dest: "-m x",
    },
    {
      name: "lan1",
      network: ["net1", "net2"],
      input: "ACCEPT",
      masq: "1",
      subnet: ["10.0.0.0/24"],
      etra_dest: "-m x",
    },
  ],
  [
    "FirewallSNAT",
    "snat-lan1",
    {
      name: "ignored",
      src: "lan1",
      src_ip: "192.168.1.2",
      src_dip: "1.2.3.4",
      dest: "wan1",
      proto: "icmp",
    },
    {
      name: "snat-lan1",
      src: "lan1",
      src_ip: "192.168.1.2",
      src_dip: "1.2.3.4",
      dest: "wan1",
      proto: "icmp",
      target: "SNAT",
    },
  ],
  [
    "FirewallDNAT",
    "dnat-wan1",
    {
      src: "wan1",
      src_dport: "19900",
      dest: "lan1",
      dest_ip: "192.168.1.1",
      dest_port: "22",
      proto: "tcp",
      target: "DNAT",
    },
    {
      name: "dnat-wan1",
      src: "wan1",
      src_dport: "19900",
      dest: "lan1",
      dest_ip: "192.168.1.1",
      dest_port: "22",
      proto: "tcp",
      target: "DNAT",
    },
  ],
  [
    "FirewallForwarding",
    "lan-to-wan",
    { src: "lan1", dest: "wan1" },
    { name: "lan-to-wan", src: "lan1", dest: "wan1" },
  ],
  [
    "FirewallRule",
    "reject-80",
    {
      src: "lan1",
      src_ip: "192.168.1.2",
      src_port: "80",
      proto: "tcp",
      target: "REJECT",
      icmp_type: ["echo-request"],
    },
    {
      name: "reject-80",
      src: "lan1",
      src_ip: "192.168.1.2",
      src_port: "80",
      proto: "tcp",
      target: "REJECT",
      icmp_type: ["echo-request"],
    },
  ],
  [
    "IpsecProposal",
    "proposal1",
    {
      name: "ignored",
      encryption_algorithm: "aes128",
      hash_algorithm: "sha256",
      dh_group: "modp3072",
    },
    {
      name: "proposal1",
      encryption_algorithm: "aes128",
      hash_algorithm: "sha256",
      dh_group: "modp3072",
    },
  ],
  [
    "IpsecSite",
    "site1",
    {
      name: "ignored",
      type: "VTI-based",
      remote: "%any",
      authentication_method: "psk",
      pre_shared_key: "test-only-key",
      crypto_proposal: ["proposal1"],
      connections: [
        {
          name: "c1",
          conn_type: "tunnel",
          mode: "start",
          local_subnet: "172.12.0.0/24",
          remote_sourceip: "172.12.0.30-172.12.0.45",
          crypto_proposal: ["proposal1"],
          mark: "42",
          if_id: "7",
        },
      ],
    },
    {
      name: "site1",
      type: "VTI-based",
      gateway: "%any",
      authentication_method: "psk",
      pre_shared_key: "test-only-key",
      crypto_proposal: ["proposal1"],
      connections: [
        {
          name: "c1",
          conn_type: "tunnel",
          mode: "start",
          local_subnet: "172.12.0.0/24",
          remote_sourceip: "172.12.0.30-172.12.0.45",
          crypto_proposal: ["proposal1"],
          mark: "42",
        },
      ],
    },
  ],
  [
    "IpsecHost",
    "host1",
    {
      remote: "10.10.10.1",
      authentication_method: "pubkey",
      local_public_cert: "PUB",
      local_private_cert: "PRIV",
      shared_ca: "CA",
      crypto_proposal: [],
      connections: [
        {
          name: "c1",
          conn_type: "tunnel",
          mode: "start",
          local_sourceip: "%config",
          remote_subnet: "172.12.0.0/24",
        },
      ],
    },
    {
      name: "host1",
      gateway: "10.10.10.1",
      authentication_method: "pubkey",
      local_public_cert: "PUB",
      local_private_cert: "PRIV",
      shared_ca: "CA",
      connections: [
        {
          name: "c1",
          conn_type: "tunnel",
          mode: "start",
          local_sourceip: "%config",
          remote_subnet: "172.12.0.0/24",
        },
      ],
    },
  ],
  [
    "CNFService",
    "httpd",
    { fullname: "httpd-svc.default.svc.cluster.local", port: "2288", dport: "8080" },
    { name: "httpd", fullname: "httpd-svc.default.svc.cluster.local", port: "2288", dport: "8080" },
  ],
];

/** The error `fn` throws (fails the test when it returns). */
function thrown(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error("expected a throw");
}

describe("toCnf: CR -> CNF object body", () => {
  it.each(CASES)("%s %s", (kind, name, spec, expected) => {
    const frozen = deepFreeze(cr(name, structuredClone(spec)));
    const before = JSON.stringify(frozen);
    const body = requireKind(kind).toCnf(frozen, { networks });
    expect(body).toEqual(expected);
    expect(JSON.stringify(frozen)).toBe(before); // the CR is never mutated
    expect(requireKind(kind).cnfObjectSchema.safeParse(body).success).toBe(true);
  });

  it("covers every kind of the registry (a new kind adds its case here)", () => {
    expect(new Set(CASES.map((c) => c[0]))).toEqual(new Set(RULE_KIND_NAMES));
  });

  it("changing the body afterwards does not reach back into the CR", () => {
    const spec = { members: [{ network: "ovn-net1", metric: 1, weight: 1 }] };
    const body = requireKind("Mwan3Policy").toCnf(cr("p", spec), { networks }) as unknown as {
      members: { metric: string }[];
    };
    (body.members[0] as { metric: string }).metric = "9";
    expect(spec.members[0]?.metric).toBe(1);
  });

  it("names as users write them: http-rule with policy balance-1 is stored as http_rule -> balance_1", () => {
    const rule = requireKind("Mwan3Rule");
    const body = rule.toCnf(
      cr("http-rule", { policy: "balance-1", dest_ip: "0.0.0.0/0", proto: "tcp" }),
      { networks },
    );
    expect(body).toMatchObject({ name: "http_rule", policy: "balance_1" });
    expect(rule.cnfObjectName("http-rule")).toBe("http_rule");
    // Names without "-" are stored as they are: nothing written before the mapping changes.
    expect(rule.cnfObjectName("rule1")).toBe("rule1");
  });

  it("an IpsecSite's proposals are stored under their UCI section names, in the connections too", () => {
    const body = requireKind("IpsecSite").toCnf(
      cr("site-a", {
        remote: "%any",
        authentication_method: "psk",
        pre_shared_key: "test-only-key",
        crypto_proposal: ["prop-1"],
        connections: [
          {
            name: "c1",
            conn_type: "tunnel",
            mode: "start",
            local_subnet: "172.12.0.0/24",
            crypto_proposal: ["prop-2"],
          },
        ],
      }),
      { networks },
    );
    expect(body).toMatchObject({
      name: "site_a",
      crypto_proposal: ["prop_1"],
      connections: [expect.objectContaining({ crypto_proposal: ["prop_2"] })],
    });
  });

  it("leaves out empty strings and empty lists, which the CNF treats as absent", () => {
    const body = requireKind("FirewallRule").toCnf(
      cr("r", { src: "", target: "ACCEPT", icmp_type: [] }),
      { networks },
    );
    expect(body).toEqual({ name: "r", target: "ACCEPT" });
  });

  it.each([
    [
      "Mwan3Policy",
      {
        members: [
          { network: "ovn-net1", metric: 1, weight: 1 },
          { network: "ovn-net9", metric: 2, weight: 1 },
        ],
      },
      "ovn-net9",
      "spec.members[1].network",
    ],
    ["FirewallZone", { network: ["ovn-missing"] }, "ovn-missing", "spec.network[0]"],
  ] as const)(
    "%s naming a network the CNF does not attach throws NetworkNotMapped (%s at %s)",
    (kind, spec, network, field) => {
      const convert = (): CnfObject => requireKind(kind).toCnf(cr("x", spec), { networks });
      expect(convert).toThrow(NetworkNotMappedError);
      expect(thrown(convert)).toMatchObject({
        code: "NetworkNotMapped",
        network,
        field,
        known: ["ovn-priv-net", "ovn-net1", "ovn-net2"],
      });
      expect(convert).toThrow(
        `${field}: network ${network} is not in the CNF Deployment's k8s.plugin.opnfv.org/nfn-network annotation`,
      );
    },
  );

  it("says the annotation is missing when the CNF has no network map", () => {
    expect(() =>
      requireKind("FirewallZone").toCnf(cr("z", { network: ["ovn-net1"] }), {
        networks: EMPTY_NETWORK_MAP,
      }),
    ).toThrow(/has no k8s.plugin.opnfv.org\/nfn-network interfaces/);
  });

  it("refuses an invalid spec with InvalidSpec instead of sending it", () => {
    const convert = (): CnfObject =>
      requireKind("Mwan3Rule").toCnf(cr("r", { proto: "tcp" }), { networks });
    expect(convert).toThrow(InvalidRuleSpecError);
    expect(thrown(convert)).toMatchObject({
      code: "InvalidSpec",
      issues: [{ path: "spec.policy", message: "required" }],
    });
  });
});
