// IPsec connections checked at admission rather than by the CNF much later: a remote must offer
// at least one connection (the CNF answers "Not an array" otherwise), and a connection name is a
// UCI section name, unique on the CNF across every IpsecSite and IpsecHost of its purpose (the
// CNF answers 409 otherwise).
import { adminKubeConfig } from "./support/cluster.js";
import { startAdmissionHarness, type AdmissionHarness } from "./admission-harness.js";
import { deniedBy, rule, rules } from "./admission-clients.js";

const proposalSpec = {
  encryption_algorithm: "aes128",
  hash_algorithm: "sha256",
  dh_group: "modp2048",
};
const connection = (name: string) => ({
  name,
  conn_type: "tunnel",
  mode: "start",
  local_subnet: "172.16.0.0/24",
});
const siteSpec = (connections: object[], proposal = "prop1") => ({
  remote: "%any",
  authentication_method: "psk",
  pre_shared_key: "test-only-key-0123",
  crypto_proposal: [proposal],
  connections,
});
const hostSpec = (name: string) => ({
  remote: "203.0.113.66",
  authentication_method: "psk",
  pre_shared_key: "test-only-key-0123",
  crypto_proposal: ["prop1"],
  connections: [{ name, conn_type: "tunnel", mode: "start", local_sourceip: "%config" }],
});

let harness: AdmissionHarness;
const admin = adminKubeConfig();

beforeAll(async () => {
  harness = await startAdmissionHarness();
}, 60_000);

afterAll(async () => {
  await harness?.close();
});

/** A namespace with IpsecProposal "prop1" for the first purpose, "prop2" for a second. */
async function namespaceWithProposal(...purposes: string[]): Promise<string> {
  const ns = await harness.namespace();
  for (const [i, p] of purposes.entries()) {
    const proposal = rule("IpsecProposal", `prop${i + 1}`, { sdewanPurpose: p }, proposalSpec);
    expect(await rules(admin, ns).create(proposal)).toMatchObject({ ok: true });
  }
  return ns;
}

describe("IPsec connections at admission", () => {
  it("refuses an IpsecSite with no connections", async () => {
    const ns = await namespaceWithProposal("cnf-a");
    const empty = rule("IpsecSite", "site1", { sdewanPurpose: "cnf-a" }, siteSpec([]));
    const result = await rules(admin, ns).create(empty);
    // The CRD's schema (minItems, generated from the registry) refuses it before the webhook.
    expect(result).toMatchObject({ ok: false, code: 422 });
    expect(result.ok === false && result.message).toContain("spec.connections");
  });

  it("denies a connection name another IpsecSite or IpsecHost of the same CNF already uses", async () => {
    const ns = await namespaceWithProposal("cnf-a");
    const api = rules(admin, ns);
    const cnfA = { sdewanPurpose: "cnf-a" };
    expect(
      (await api.create(rule("IpsecSite", "site1", cnfA, siteSpec([connection("conn1")])))).ok,
    ).toBe(true);
    const site = deniedBy(
      await api.create(rule("IpsecSite", "site2", cnfA, siteSpec([connection("conn1")]))),
      "cnf-unique-names",
    );
    expect(site).toContain('connection name "conn1" (spec.connections[0].name)');
    expect(site).toContain('IpsecSite "site1"');
    deniedBy(
      await api.create(rule("IpsecHost", "host1", cnfA, hostSpec("conn1"))),
      "cnf-unique-names",
    );
    // Renaming into a taken name is refused too; a rule may keep its own names on update.
    expect((await api.create(rule("IpsecHost", "host2", cnfA, hostSpec("conn2")))).ok).toBe(true);
    deniedBy(
      await api.patch("IpsecHost", "host2", {
        spec: { connections: hostSpec("conn1").connections },
      }),
      "cnf-unique-names",
    );
    expect((await api.patch("IpsecHost", "host2", { spec: { remote: "203.0.113.67" } })).ok).toBe(
      true,
    );
  });

  it("allows the same connection name on another CNF", async () => {
    const ns = await namespaceWithProposal("cnf-a", "cnf-b");
    const api = rules(admin, ns);
    const onCnfA = siteSpec([connection("conn1")], "prop1");
    const onCnfB = siteSpec([connection("conn1")], "prop2");
    expect(
      await api.create(rule("IpsecSite", "site1", { sdewanPurpose: "cnf-a" }, onCnfA)),
    ).toMatchObject({ ok: true });
    expect(
      await api.create(rule("IpsecSite", "site2", { sdewanPurpose: "cnf-b" }, onCnfB)),
    ).toMatchObject({ ok: true });
  });
});
