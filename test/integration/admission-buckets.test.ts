// Bucket-type permission through the real API server: users authenticated by token (bob with a
// Role, alice through her group's ClusterRoleBinding), a service account with a TokenRequest
// token, and the admin in system:masters. Every user also holds plain RBAC to edit rules, so each
// denial below comes from the bucket policy alone.
import {
  RbacAuthorizationV1Api,
  type KubeConfig,
  type RbacV1Subject,
} from "@kubernetes/client-node";
import { adminKubeConfig, userKubeConfig } from "./support/cluster.js";
import { startAdmissionHarness, type AdmissionHarness } from "./admission-harness.js";
import { deniedBy, rule, rules } from "./admission-clients.js";

const BUCKET = "sdewan-bucket-type";
const PERMISSION = "sdewan-bucket-type-permission";
const inBucket = (bucket: string) => ({ sdewanPurpose: "cnf-a", [BUCKET]: bucket });
const zoneSpec = { network: ["ovn-priv-net"] };
const policySpec = { members: [{ network: "ovn-priv-net", metric: 1, weight: 1 }] };
const ruleSpec = { policy: "balance1", proto: "tcp" };

let harness: AdmissionHarness;
const admin = adminKubeConfig();
const rbac = admin.makeApiClient(RbacAuthorizationV1Api);
const alice = userKubeConfig("alice"); // group sdewan:testers
const bob = userKubeConfig("bob");

const editorRole = () => `sdewan-rule-editor-${harness.id}`;
const groupRole = () => `sdewan-bucket-k8s-service-${harness.id}`;
const serviceAccountRole = () => `sdewan-bucket-any-intent-${harness.id}`;

async function clusterRole(name: string, permission?: object): Promise<void> {
  await rbac.createClusterRole({
    body: {
      metadata: {
        name,
        ...(permission ? { annotations: { [PERMISSION]: JSON.stringify(permission) } } : {}),
      },
      rules: permission
        ? []
        : [{ apiGroups: ["batch.sdewan.akraino.org"], resources: ["*"], verbs: ["*"] }],
    },
  });
}

beforeAll(async () => {
  harness = await startAdmissionHarness();
  await clusterRole(editorRole());
  await clusterRole(groupRole(), { "firewall*": ["k8s-service"] });
  await clusterRole(serviceAccountRole(), { "*": ["app-?ntent"] });
  await rbac.createClusterRoleBinding({
    body: {
      metadata: { name: groupRole() },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: groupRole() },
      subjects: [{ kind: "Group", name: "sdewan:testers", apiGroup: "rbac.authorization.k8s.io" }],
    },
  });
}, 60_000);

afterAll(async () => {
  await harness?.close();
});

interface Tenant {
  ns: string;
  onap: KubeConfig;
}

/**
 * A namespace where alice, bob and the service account onap may edit rules (plain RBAC), bob
 * holds the Role "intent-editor" and onap a RoleBinding to a ClusterRole (roleRef.kind).
 */
async function tenant(): Promise<Tenant> {
  const ns = await harness.namespace();
  const user = (name: string): RbacV1Subject => ({
    kind: "User",
    name,
    apiGroup: "rbac.authorization.k8s.io",
  });
  const onapSubject: RbacV1Subject = { kind: "ServiceAccount", name: "onap" };
  const bind = (
    name: string,
    kind: "Role" | "ClusterRole",
    role: string,
    subjects: RbacV1Subject[],
  ) =>
    rbac.createNamespacedRoleBinding({
      namespace: ns,
      body: {
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: role },
        subjects,
      },
    });
  await rbac.createNamespacedRole({
    namespace: ns,
    body: {
      metadata: {
        name: "intent-editor",
        annotations: {
          [PERMISSION]: JSON.stringify({
            mwan3rules: ["app-intent", "k8s-service"],
            mwan3policies: ["*"],
            "firewall*": ["app-intent"],
          }),
        },
      },
      rules: [],
    },
  });
  await bind("editors", "ClusterRole", editorRole(), [user("alice"), user("bob"), onapSubject]);
  await bind("bob-intent", "Role", "intent-editor", [user("bob")]);
  await bind("onap-intent", "ClusterRole", serviceAccountRole(), [onapSubject]);
  const onap = await harness.serviceAccountKubeConfig(ns, "onap");
  // Dependencies of the Mwan3Rules below, created by the admin.
  await rules(admin, ns).create(
    rule("Mwan3Policy", "balance1", { sdewanPurpose: "cnf-a" }, policySpec),
  );
  return { ns, onap };
}

describe("bucket-type permission", () => {
  it("lets system:masters use any bucket", async () => {
    const { ns } = await tenant();
    const created = await rules(admin, ns).create(
      rule("FirewallZone", "lan", inBucket("basic"), zoneSpec),
    );
    expect(created.ok).toBe(true);
  });

  it("leaves objects without the bucket label to RBAC alone", async () => {
    const { ns } = await tenant();
    const created = await rules(alice, ns).create(
      rule("FirewallZone", "lan", { sdewanPurpose: "cnf-a" }, zoneSpec),
    );
    expect(created.ok).toBe(true);
  });

  it("allows a user the buckets their Role grants for the resource, and denies others", async () => {
    const { ns } = await tenant();
    const asBob = rules(bob, ns);
    expect((await asBob.create(rule("Mwan3Rule", "r1", inBucket("app-intent"), ruleSpec))).ok).toBe(
      true,
    );
    expect((await asBob.create(rule("Mwan3Policy", "p2", inBucket("basic"), policySpec))).ok).toBe(
      true,
    );
    const result = await asBob.create(rule("Mwan3Rule", "r2", inBucket("basic"), ruleSpec));
    expect(result).toMatchObject({ ok: false, code: 403 });
    expect(deniedBy(result, "bucket-permission")).toContain(
      'user "bob" may not create mwan3rules in bucket sdewan-bucket-type="basic"',
    );
  });

  it("ignores a user's Role in another namespace", async () => {
    const { ns } = await tenant();
    const other = await tenant();
    await rbac.deleteNamespacedRoleBinding({ name: "bob-intent", namespace: other.ns });
    // The webhook may read bindings from the watch cache: a consistent list waits until it has
    // caught up with the delete, as the API server's own RBAC informers would have.
    await rbac.listNamespacedRoleBinding({ namespace: other.ns });
    expect(
      (await rules(bob, ns).create(rule("FirewallZone", "lan", inBucket("app-intent"), zoneSpec)))
        .ok,
    ).toBe(true);
    const elsewhere = await rules(bob, other.ns).create(
      rule("FirewallZone", "lan", inBucket("app-intent"), zoneSpec),
    );
    deniedBy(elsewhere, "bucket-permission");
  });

  it("grants through a group's ClusterRoleBinding", async () => {
    const { ns } = await tenant();
    const asAlice = rules(alice, ns);
    expect(
      (await asAlice.create(rule("FirewallZone", "lan", inBucket("k8s-service"), zoneSpec))).ok,
    ).toBe(true);
    deniedBy(
      await asAlice.create(rule("FirewallZone", "wan", inBucket("app-intent"), zoneSpec)),
      "bucket-permission",
    );
    deniedBy(
      await asAlice.create(rule("Mwan3Rule", "r1", inBucket("k8s-service"), ruleSpec)),
      "bucket-permission",
    );
  });

  it("grants a service account through a RoleBinding to a ClusterRole, with wildcards", async () => {
    const { ns, onap } = await tenant();
    const asOnap = rules(onap, ns);
    expect(
      (await asOnap.create(rule("FirewallZone", "lan", inBucket("app-intent"), zoneSpec))).ok,
    ).toBe(true);
    const message = deniedBy(
      await asOnap.create(rule("FirewallZone", "wan", inBucket("basic"), zoneSpec)),
      "bucket-permission",
    );
    expect(message).toContain(`user "system:serviceaccount:${ns}:onap"`);
  });

  it("denies moving a rule out of a bucket the user may not touch, and into one", async () => {
    const { ns } = await tenant();
    await rules(admin, ns).create(rule("Mwan3Rule", "basic1", inBucket("basic"), ruleSpec));
    const asBob = rules(bob, ns);
    const out = deniedBy(
      await asBob.patch("Mwan3Rule", "basic1", {
        metadata: { labels: { [BUCKET]: "app-intent" } },
      }),
      "bucket-permission",
    );
    expect(out).toContain('change or move out of mwan3rules in bucket sdewan-bucket-type="basic"');
    deniedBy(
      await asBob.patch("Mwan3Rule", "basic1", { metadata: { labels: { [BUCKET]: null } } }),
      "bucket-permission",
    );
    await asBob.create(rule("Mwan3Rule", "intent1", inBucket("app-intent"), ruleSpec));
    const into = deniedBy(
      await asBob.patch("Mwan3Rule", "intent1", { metadata: { labels: { [BUCKET]: "basic" } } }),
      "bucket-permission",
    );
    expect(into).toContain("move into");
    expect(
      (
        await asBob.patch("Mwan3Rule", "intent1", {
          metadata: { labels: { [BUCKET]: "k8s-service" } },
        })
      ).ok,
    ).toBe(true);
  });

  it("checks DELETE against the bucket of the object being deleted", async () => {
    const { ns } = await tenant();
    await rules(admin, ns).create(rule("FirewallZone", "basiczone", inBucket("basic"), zoneSpec));
    await rules(admin, ns).create(
      rule("FirewallZone", "intentzone", inBucket("app-intent"), zoneSpec),
    );
    const asBob = rules(bob, ns);
    expect(
      deniedBy(await asBob.delete("FirewallZone", "basiczone"), "bucket-permission"),
    ).toContain("may not delete firewallzones");
    expect((await asBob.delete("FirewallZone", "intentzone")).ok).toBe(true);
  });
});
