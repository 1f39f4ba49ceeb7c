// A rule may only name a Secret its author may read: validate-admission asks the API server (a
// SubjectAccessReview for the requesting user) on create and whenever an update changes a
// reference. alice may edit rules but read only Secret "alice-psk"; bob may read every Secret.
// The webhook runs as manifests/webhook/rbac.yaml's ClusterRole, so these also prove that role
// may create SubjectAccessReviews.
import { CoreV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { adminKubeConfig, userKubeConfig } from "./support/cluster.js";
import { startAdmissionHarness, type AdmissionHarness } from "./admission-harness.js";
import { deniedBy, rule, rules, type RuleObject } from "./admission-clients.js";
import { pollUntil } from "../../dev/control-plane/api.js";
import { allowed } from "./support/identity.js";

const purpose = { sdewanPurpose: "cnf-a" };
const proposalSpec = {
  encryption_algorithm: "aes128",
  hash_algorithm: "sha256",
  dh_group: "modp2048",
};
const siteSpec = (secret: string, remote = "203.0.113.66") => ({
  remote,
  authentication_method: "psk",
  pre_shared_key_secret_ref: { name: secret, key: "password" },
  crypto_proposal: ["prop1"],
  connections: [
    { name: "conn1", conn_type: "tunnel", mode: "start", local_subnet: "172.16.0.0/24" },
  ],
});

let harness: AdmissionHarness;
const admin = adminKubeConfig();
const alice = userKubeConfig("alice");
const bob = userKubeConfig("bob");
const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
const editor = () => `sdewan-secret-ref-editor-${harness.id}`;

beforeAll(async () => {
  harness = await startAdmissionHarness();
  await rbac.createClusterRole({
    body: {
      metadata: { name: editor() },
      rules: [{ apiGroups: ["batch.sdewan.akraino.org"], resources: ["*"], verbs: ["*"] }],
    },
  });
}, 60_000);

afterAll(async () => {
  await harness?.close();
});

const user = (name: string) => ({ kind: "User", name, apiGroup: "rbac.authorization.k8s.io" });

/** A namespace with Secrets app-db and alice-psk, where alice and bob may edit rules. */
async function tenant(): Promise<string> {
  const ns = await harness.namespace();
  const core = admin.makeApiClient(CoreV1Api);
  for (const name of ["app-db", "alice-psk"]) {
    await core.createNamespacedSecret({
      namespace: ns,
      body: { metadata: { name }, stringData: { password: `${name}-value-0123456789` } },
    });
  }
  const bind = (name: string, kind: string, role: string, subjects: object[]) =>
    rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: role },
        subjects: subjects as never,
      },
    });
  await rbac.createNamespacedRole({
    namespace: ns,
    body: {
      metadata: { name: "read-secrets" },
      rules: [{ apiGroups: [""], resources: ["secrets"], verbs: ["get"] }],
    },
  });
  await rbac.createNamespacedRole({
    namespace: ns,
    body: {
      metadata: { name: "read-alice-psk" },
      rules: [
        { apiGroups: [""], resources: ["secrets"], verbs: ["get"], resourceNames: ["alice-psk"] },
      ],
    },
  });
  await bind("editors", "ClusterRole", editor(), [user("alice"), user("bob")]);
  await bind("bob-secrets", "Role", "read-secrets", [user("bob")]);
  await bind("alice-psk", "Role", "read-alice-psk", [user("alice")]);
  await pollUntil(
    async () =>
      (await allowed(bob, { group: "", resource: "secrets", verb: "get", namespace: ns }))
        ? true
        : undefined,
    () => `bob's Role in ${ns} to take effect`,
    { timeoutMs: 10_000, intervalMs: 50 },
  );
  expect(await allowed(alice, { group: "", resource: "secrets", verb: "get", namespace: ns })).toBe(
    false,
  );
  await rules(admin, ns).create(rule("IpsecProposal", "prop1", purpose, proposalSpec));
  return ns;
}

const site = (name: string, secret: string): RuleObject =>
  rule("IpsecSite", name, purpose, siteSpec(secret));

describe("Secret references need the author's own right to read the Secret", () => {
  it("admits bob's IpsecSite naming a Secret bob may read", async () => {
    const ns = await tenant();
    expect((await rules(bob, ns).create(site("site1", "app-db"))).ok).toBe(true);
  });

  it("denies alice an IpsecSite naming a Secret she may not read, and says which", async () => {
    const ns = await tenant();
    const result = await rules(alice, ns).create(site("site1", "app-db"));
    const message = deniedBy(result, "secret-access");
    expect(message).toContain('"alice" may not get Secret');
    expect(message).toContain("app-db");
    expect(result.ok === false && result.code).toBe(403);
    expect((await rules(alice, ns).create(site("site2", "alice-psk"))).ok).toBe(true);
  });

  it("checks the user who changes a reference, not the one who created the rule", async () => {
    const ns = await tenant();
    expect((await rules(alice, ns).create(site("site1", "alice-psk"))).ok).toBe(true);
    const toAppDb = { spec: { pre_shared_key_secret_ref: { name: "app-db", key: "password" } } };
    deniedBy(await rules(alice, ns).patch("IpsecSite", "site1", toAppDb), "secret-access");
    expect((await rules(bob, ns).patch("IpsecSite", "site1", toAppDb)).ok).toBe(true);
    // A change that leaves the reference as it is needs no right to the Secret.
    const elsewhere = { spec: { remote: "203.0.113.67" } };
    expect((await rules(alice, ns).patch("IpsecSite", "site1", elsewhere)).ok).toBe(true);
  });
});

describe("when the API server cannot answer whether the author may read the Secret", () => {
  let withoutReviews: AdmissionHarness;
  beforeAll(async () => {
    // The shipped role without its subjectaccessreviews grant: every review is refused.
    withoutReviews = await startAdmissionHarness({
      role: (role) => ({
        ...role,
        rules: (role.rules ?? []).filter((r) => !r.resources?.includes("subjectaccessreviews")),
      }),
    });
  }, 60_000);
  afterAll(async () => {
    await withoutReviews?.close();
  });

  it("denies the reference (fails closed) and says why, even for a user who may read it", async () => {
    const ns = await tenant();
    await withoutReviews.cover(ns);
    const message = deniedBy(await rules(bob, ns).create(site("site1", "app-db")), "secret-access");
    expect(message).toContain('whether "bob" may get Secret "app-db" could not be checked');
    expect(message).toContain('cannot create resource "subjectaccessreviews"');
  });
});
