import { planAdmission, planObservation } from "../../../shared/admission/plan-admission.js";
import type {
  AdmissionSnapshot,
  ObservedCnf,
  ObservedRule,
} from "../../../shared/admission/snapshot.js";
import { EMPTY_SNAPSHOT } from "../../../shared/admission/snapshot.js";
import { denialMessage, type Verdict } from "../../../shared/admission/verdict.js";
import { objectOf, requestOf } from "./fixtures.js";

const cnfA = { sdewanPurpose: "cnf-a" };
const NFN = "k8s.plugin.opnfv.org/nfn-network";
const nfnAnnotation = JSON.stringify({
  type: "ovn4nfv",
  interface: [
    { name: "ovn-priv-net", interface: "net0", defaultGateway: "false" },
    { name: "ovn-provider-net1", interface: "net1", defaultGateway: "false" },
  ],
});

const specs = {
  policy: { members: [{ network: "ovn-provider-net1", metric: 1, weight: 2 }] },
  rule: { policy: "balance1", proto: "tcp", dest_port: "80" },
  zone: { network: ["ovn-priv-net"], input: "ACCEPT" },
  forwarding: { src: "lan", dest: "wan" },
  proposal: { encryption_algorithm: "aes128", hash_algorithm: "sha256", dh_group: "modp2048" },
  host: {
    remote: "10.10.10.1",
    authentication_method: "psk",
    pre_shared_key: "not-a-secret",
    crypto_proposal: ["ike1"],
    connections: [{ name: "conn1", conn_type: "tunnel", mode: "start", crypto_proposal: ["esp1"] }],
  },
};

const observed = (
  kind: string,
  name: string,
  spec: unknown,
  extra: Partial<ObservedRule> = {},
): ObservedRule => ({
  kind,
  name,
  purpose: "cnf-a",
  deleting: false,
  spec,
  ...extra,
});

const snapshot = (patch: Partial<AdmissionSnapshot>): AdmissionSnapshot => ({
  ...EMPTY_SNAPSHOT,
  ...patch,
});

const cnf = (annotation: string | undefined = nfnAnnotation): ObservedCnf => ({
  name: "cnf-1",
  deleting: false,
  nfnNetworkAnnotation: annotation,
});

const create = (kind: string, name: string, spec: unknown, labels: Record<string, string> = cnfA) =>
  requestOf({ operation: "CREATE", kind, object: objectOf(name, labels, spec) });

function message(verdict: Verdict): string {
  return verdict.allowed ? "(allowed)" : denialMessage(verdict);
}

describe("rule-spec: the CNF's own validation at kubectl apply time", () => {
  it.each([
    [
      "Mwan3Rule with a port range",
      "Mwan3Rule",
      "r1",
      { ...specs.rule, dest_port: "80-90" },
      "spec.dest_port",
    ],
    [
      "Mwan3Rule with an unknown proto",
      "Mwan3Rule",
      "r1",
      { ...specs.rule, proto: "gre" },
      "spec.proto",
    ],
    [
      "FirewallZone with a 12-character name",
      "FirewallZone",
      "zonename1234",
      specs.zone,
      "metadata.name",
    ],
    [
      "FirewallZone with masq 'yes'",
      "FirewallZone",
      "lan",
      { ...specs.zone, masq: "yes" },
      "spec.masq",
    ],
    [
      "IpsecHost psk without pre_shared_key",
      "IpsecHost",
      "host1",
      { ...specs.host, pre_shared_key: undefined },
      "spec.pre_shared_key",
    ],
    [
      "IpsecHost with both pre_shared_key and pre_shared_key_secret_ref",
      "IpsecHost",
      "host1",
      { ...specs.host, pre_shared_key_secret_ref: { name: "keys", key: "psk" } },
      "spec.pre_shared_key_secret_ref: give pre_shared_key or pre_shared_key_secret_ref, not both",
    ],
    [
      "IpsecHost with a Secret reference that is no Secret name",
      "IpsecHost",
      "host1",
      {
        ...specs.host,
        pre_shared_key: undefined,
        pre_shared_key_secret_ref: { name: "Keys_1", key: "psk" },
      },
      "spec.pre_shared_key_secret_ref.name",
    ],
  ])("denies %s, naming the field", (_title, kind, name, spec, field) => {
    const verdict = planAdmission(create(kind, name, spec), snapshot({}));
    expect(verdict).toMatchObject({ allowed: false, code: 422, policy: "rule-spec" });
    expect(message(verdict)).toContain(field);
    expect(message(verdict)).toContain("kubectl explain");
  });

  it("does not re-validate an UPDATE that leaves the spec alone (e.g. the controller removing its finalizer)", () => {
    const old = objectOf("r1", cnfA, { ...specs.rule, proto: "gre" });
    const request = requestOf({
      operation: "UPDATE",
      kind: "Mwan3Rule",
      oldObject: old,
      object: { ...old, metadata: { ...old.metadata, labels: { ...cnfA, team: "x" } } },
    });
    expect(planAdmission(request, snapshot({})).allowed).toBe(true);
  });

  it("accepts plain key material with a deprecation warning, and a Secret reference without", () => {
    const ike = observed("IpsecProposal", "ike1", specs.proposal);
    const esp = observed("IpsecProposal", "esp1", specs.proposal);
    const known = snapshot({ referencedObjects: [ike, esp] });
    const plain = planAdmission(create("IpsecHost", "host1", specs.host), known);
    expect(plain.allowed).toBe(true);
    expect(plain.warnings).toContainEqual(
      expect.stringContaining(
        "spec.pre_shared_key is deprecated: every account that reads ipsechosts can read it; put it in a Secret and use spec.pre_shared_key_secret_ref",
      ),
    );
    const byRef = {
      ...specs.host,
      pre_shared_key: undefined,
      pre_shared_key_secret_ref: { name: "ipsec-keys", key: "psk" },
    };
    const mayRead = snapshot({
      referencedObjects: [ike, esp],
      secretAccess: [{ name: "ipsec-keys", allowed: true }],
    });
    const referenced = planAdmission(create("IpsecHost", "host1", byRef), mayRead);
    expect(referenced).toMatchObject({ allowed: true });
    expect(referenced.warnings.join()).not.toContain("deprecated");
  });

  it("warns when a new rule has no sdewanPurpose label", () => {
    const verdict = planAdmission(
      create("IpsecProposal", "prop1", specs.proposal, {}),
      snapshot({}),
    );
    expect(verdict.allowed).toBe(true);
    expect(verdict.warnings.join()).toContain("no sdewanPurpose label");
  });
});

describe("rule-dependencies on CREATE/UPDATE", () => {
  const policy = observed("Mwan3Policy", "balance1", specs.policy);

  it("allows an Mwan3Rule whose policy exists with the same purpose", () => {
    expect(
      planAdmission(
        create("Mwan3Rule", "r1", specs.rule),
        snapshot({ referencedObjects: [policy] }),
      ).allowed,
    ).toBe(true);
  });

  it.each([
    ["missing", [], 'Mwan3Policy "balance1" (spec.policy) does not exist'],
    ["being deleted", [{ ...policy, deleting: true }], "is being deleted"],
    [
      "of another purpose",
      [{ ...policy, purpose: "cnf-b" }],
      'has sdewanPurpose="cnf-b", not "cnf-a"',
    ],
  ])("denies an Mwan3Rule whose policy is %s", (_title, referenced, text) => {
    const verdict = planAdmission(
      create("Mwan3Rule", "r1", specs.rule),
      snapshot({ referencedObjects: referenced }),
    );
    expect(verdict).toMatchObject({ allowed: false, code: 422, policy: "rule-dependencies" });
    expect(message(verdict)).toContain(text);
    expect(message(verdict)).toContain("create the referenced objects first");
  });

  it("lists every missing zone of a forwarding", () => {
    const verdict = planAdmission(
      create("FirewallForwarding", "fwd1", specs.forwarding),
      snapshot({}),
    );
    expect(message(verdict)).toContain('FirewallZone "lan" (spec.src) does not exist');
    expect(message(verdict)).toContain('FirewallZone "wan" (spec.dest) does not exist');
  });

  it("checks ipsec proposals at the top level and per connection", () => {
    const verdict = planAdmission(
      create("IpsecHost", "host1", specs.host),
      snapshot({ referencedObjects: [observed("IpsecProposal", "ike1", specs.proposal)] }),
    );
    expect(message(verdict)).toContain(
      'IpsecProposal "esp1" (spec.connections[0].crypto_proposal[0]) does not exist',
    );
    expect(message(verdict)).not.toContain('"ike1"');
  });

  it("asks the shell to read each referenced object once", () => {
    const spec = {
      ...specs.host,
      connections: [{ ...specs.host.connections[0], crypto_proposal: ["ike1", "ike1"] }],
    };
    expect(planObservation(create("IpsecHost", "host1", spec)).referencedObjects).toEqual([
      { kind: "IpsecProposal", name: "ike1" },
    ]);
  });
});

describe("cnf-networks: names must be attached to the CNF, when it exists", () => {
  it("allows a zone on an attached network", () => {
    expect(
      planAdmission(
        create("FirewallZone", "lan", specs.zone),
        snapshot({ cnfDeployments: [cnf()] }),
      ).allowed,
    ).toBe(true);
  });

  it("denies a policy member on a network the CNF does not attach, listing the attached ones", () => {
    const spec = {
      members: [...specs.policy.members, { network: "ovn-nope", metric: 2, weight: 1 }],
    };
    const verdict = planAdmission(
      create("Mwan3Policy", "balance1", spec),
      snapshot({ cnfDeployments: [cnf()] }),
    );
    expect(verdict).toMatchObject({ allowed: false, code: 422, policy: "cnf-networks" });
    expect(message(verdict)).toContain('"ovn-nope" (spec.members[1].network)');
    expect(message(verdict)).toContain('attached: "ovn-priv-net", "ovn-provider-net1"');
  });

  it("allows with a warning while no CNF exists (rules may come first)", () => {
    const verdict = planAdmission(
      create("FirewallZone", "lan", { network: ["ovn-nope"] }),
      snapshot({}),
    );
    expect(verdict.allowed).toBe(true);
    expect(verdict.warnings.join()).toContain("networks not checked");
  });

  it("allows with a warning when the CNF's annotation is not JSON", () => {
    const verdict = planAdmission(
      create("FirewallZone", "lan", specs.zone),
      snapshot({ cnfDeployments: [cnf("{not json")] }),
    );
    expect(verdict.allowed).toBe(true);
    expect(verdict.warnings.join()).toContain(NFN);
  });

  it("reads the CNF only for specs that name networks", () => {
    expect(planObservation(create("FirewallZone", "lan", specs.zone)).cnfPurpose).toBe("cnf-a");
    expect(planObservation(create("Mwan3Rule", "r1", specs.rule)).cnfPurpose).toBeUndefined();
  });
});

describe("DELETE of a rule (ADR 0010)", () => {
  const deleteZone = (labels: Record<string, string> = cnfA) =>
    requestOf({
      operation: "DELETE",
      kind: "FirewallZone",
      oldObject: objectOf("lan", labels, specs.zone),
      username: "mallory",
    });

  it("is allowed while live rules still reference it, reading nothing: its finalizer holds it", () => {
    expect(planObservation(deleteZone())).toMatchObject({
      referencedObjects: [],
      rbac: false,
      cnfPurpose: undefined,
    });
    expect(planAdmission(deleteZone(), snapshot({})).allowed).toBe(true);
  });

  it("in a bucket, is the bucket policy's alone", () => {
    const labelled = deleteZone({ ...cnfA, "sdewan-bucket-type": "basic" });
    expect(planObservation(labelled)).toMatchObject({ referencedObjects: [], rbac: true });
    expect(planAdmission(labelled, snapshot({}))).toMatchObject({
      allowed: false,
      code: 403,
      policy: "bucket-permission",
    });
  });
});

describe("request classes", () => {
  it("denies a kind the webhook does not handle with 400", () => {
    const request = requestOf({
      operation: "CREATE",
      kind: "ConfigMap",
      group: "",
      object: objectOf("cm", {}),
    });
    expect(planAdmission(request, snapshot({}))).toMatchObject({
      allowed: false,
      code: 400,
      policy: "supported-kinds",
    });
  });

  it("denies a look-alike kind from another group", () => {
    const request = requestOf({
      operation: "CREATE",
      kind: "Mwan3Rule",
      group: "example.com",
      object: objectOf("r1", cnfA, specs.rule),
    });
    expect(planAdmission(request, snapshot({})).allowed).toBe(false);
  });

  it("checks bucket permission before anything else, so denied users learn nothing about references", () => {
    const request = requestOf({
      operation: "CREATE",
      kind: "Mwan3Rule",
      resource: "mwan3rules",
      object: objectOf("r1", { ...cnfA, "sdewan-bucket-type": "basic" }, specs.rule),
      username: "mallory",
    });
    expect(planAdmission(request, snapshot({}))).toMatchObject({ policy: "bucket-permission" });
    expect(planObservation(request).rbac).toBe(true);
  });

  it("runs a second-CNF check for Deployments and reads nothing for DELETE", () => {
    const request = requestOf({
      operation: "CREATE",
      kind: "Deployment",
      group: "apps",
      object: objectOf("cnf-2", cnfA),
    });
    expect(planAdmission(request, snapshot({ cnfDeployments: [cnf()] }))).toMatchObject({
      policy: "one-cnf-per-purpose",
    });
    const del = requestOf({
      operation: "DELETE",
      kind: "Deployment",
      group: "apps",
      oldObject: objectOf("cnf-2", cnfA),
    });
    expect(planObservation(del).cnfPurpose).toBeUndefined();
    expect(planObservation(del)).toMatchObject({
      rbac: false,
      referencedObjects: [],
    });
  });
});

describe("secret-access: a rule names only Secrets its author may read", () => {
  const known = snapshot({
    referencedObjects: [
      observed("IpsecProposal", "ike1", specs.proposal),
      observed("IpsecProposal", "esp1", specs.proposal),
    ],
  });
  const byRef = (secret: string) => ({
    ...specs.host,
    pre_shared_key: undefined,
    pre_shared_key_secret_ref: { name: secret, key: "password" },
  });
  const update = (oldSpec: unknown, spec: unknown, username = "alice") =>
    requestOf({
      operation: "UPDATE",
      kind: "IpsecHost",
      object: objectOf("host1", cnfA, spec),
      oldObject: objectOf("host1", cnfA, oldSpec),
      username,
    });

  it("asks about every Secret a new rule names, and none for plain key material", () => {
    expect(planObservation(create("IpsecHost", "host1", byRef("app-db"))).secretNames).toEqual([
      "app-db",
    ]);
    expect(planObservation(create("IpsecHost", "host1", specs.host)).secretNames).toEqual([]);
  });

  it("asks on update only when a reference changes, of the user who changes it", () => {
    const unchanged = update(byRef("app-db"), { ...byRef("app-db"), remote: "10.10.10.2" });
    expect(planObservation(unchanged).secretNames).toEqual([]);
    expect(planAdmission(unchanged, known)).toMatchObject({ allowed: true });
    const changed = update(byRef("alice-psk"), byRef("app-db"), "bob");
    expect(planObservation(changed).secretNames).toEqual(["app-db"]);
  });

  it("denies a Secret the user may not get, naming the user and the Secret (403)", () => {
    const verdict = planAdmission(
      create("IpsecHost", "host1", byRef("app-db")),
      snapshot({ ...known, secretAccess: [{ name: "app-db", allowed: false }] }),
    );
    expect(verdict).toMatchObject({ allowed: false, policy: "secret-access", code: 403 });
    expect(message(verdict)).toContain('"alice" may not get Secret "app-db"');
  });

  it("fails closed: no answer, or a review that failed, denies and says so", () => {
    const unasked = planAdmission(create("IpsecHost", "host1", byRef("app-db")), known);
    expect(unasked).toMatchObject({ allowed: false, policy: "secret-access" });
    const failed = planAdmission(
      create("IpsecHost", "host1", byRef("app-db")),
      snapshot({
        ...known,
        secretAccess: [{ name: "app-db", allowed: "unknown", why: "SubjectAccessReview failed" }],
      }),
    );
    expect(message(failed)).toContain(
      'whether "alice" may get Secret "app-db" could not be checked (SubjectAccessReview failed)',
    );
  });
});

describe("cnf-unique-names: ipsec connection names once per CNF", () => {
  const proposals = [
    observed("IpsecProposal", "ike1", specs.proposal),
    observed("IpsecProposal", "esp1", specs.proposal),
  ];
  const site = (conn: string) => ({
    remote: "%any",
    authentication_method: "psk",
    pre_shared_key: "not-a-secret",
    crypto_proposal: ["ike1"],
    connections: [{ name: conn, conn_type: "tunnel", mode: "start", local_subnet: "10.1.0.0/24" }],
  });

  it("lists both remote kinds (they share the CNF's remotes) when a name must be checked", () => {
    const plan = planObservation(create("IpsecHost", "host1", specs.host));
    expect(plan.uniqueNameKinds.map((k) => k.kind).sort()).toEqual(["IpsecHost", "IpsecSite"]);
    expect(planObservation(create("IpsecProposal", "p", specs.proposal)).uniqueNameKinds).toEqual(
      [],
    );
  });

  it("denies a name another remote of the same purpose holds, not one of another purpose", () => {
    const peers = [
      observed("IpsecSite", "site1", site("conn1")),
      observed("IpsecSite", "siteb", site("conn2"), { purpose: "cnf-b" }),
    ];
    const verdict = planAdmission(
      create("IpsecHost", "host1", specs.host),
      snapshot({ referencedObjects: proposals, cnfPeers: peers }),
    );
    expect(verdict).toMatchObject({ allowed: false, policy: "cnf-unique-names", code: 409 });
    expect(message(verdict)).toContain(
      'connection name "conn1" (spec.connections[0].name) is already used by IpsecSite "site1" (spec.connections[0].name)',
    );
    const other = { ...specs.host, connections: [{ ...specs.host.connections[0], name: "conn2" }] };
    expect(
      planAdmission(
        create("IpsecHost", "host1", other),
        snapshot({ referencedObjects: proposals, cnfPeers: peers }),
      ),
    ).toMatchObject({ allowed: true });
  });

  it("ignores the rule itself and remotes being deleted", () => {
    const peers = [
      observed("IpsecHost", "host1", specs.host),
      observed("IpsecSite", "site1", site("conn1"), { deleting: true }),
    ];
    expect(
      planAdmission(
        create("IpsecHost", "host1", specs.host),
        snapshot({ referencedObjects: proposals, cnfPeers: peers }),
      ),
    ).toMatchObject({ allowed: true });
  });
});
