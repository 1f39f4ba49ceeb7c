import {
  bucketsToCheck,
  planBucketPermission,
} from "../../../shared/admission/plan-bucket-permission.js";
import type { AnnotatedRole, Binding } from "../../../shared/admission/rbac.js";
import type { RbacSnapshot } from "../../../shared/admission/snapshot.js";
import { objectOf, requestOf } from "./fixtures.js";

const BUCKET = "sdewan-bucket-type";
const intent = { [BUCKET]: "app-intent" };
const basic = { [BUCKET]: "basic" };

const rule = (labels: Record<string, string>) => objectOf("r1", labels, {});

function rbacOf(bindings: Binding[], roles: AnnotatedRole[]): RbacSnapshot {
  return {
    roleBindings: bindings.filter((b) => b.kind === "RoleBinding"),
    clusterRoleBindings: bindings.filter((b) => b.kind === "ClusterRoleBinding"),
    roles,
  };
}

const intentRole: AnnotatedRole = {
  kind: "Role",
  namespace: "ns1",
  name: "intent-editor",
  bucketPermission: '{"mwan3rules": ["app-intent", "k8s-service"], "mwan3policies": ["*"]}',
};
const firewallClusterRole: AnnotatedRole = {
  kind: "ClusterRole",
  namespace: "",
  name: "firewall-intent",
  bucketPermission: '{"firewall*": ["app-?ntent"]}',
};

const aliceBinding: Binding = {
  kind: "RoleBinding",
  namespace: "ns1",
  name: "alice-intent",
  roleRef: { kind: "Role", name: "intent-editor" },
  subjects: [{ kind: "User", name: "alice" }],
};

describe("bucketsToCheck", () => {
  it.each([
    ["CREATE checks the new bucket", "CREATE", null, intent, ["new:app-intent"]],
    ["DELETE checks the existing bucket", "DELETE", basic, null, ["old:basic"]],
    ["UPDATE in the same bucket checks it once", "UPDATE", intent, intent, ["old:app-intent"]],
    ["UPDATE moving buckets checks both", "UPDATE", basic, intent, ["old:basic", "new:app-intent"]],
    ["UPDATE removing the label checks the old", "UPDATE", basic, {}, ["old:basic"]],
    ["UPDATE adding the label checks the new", "UPDATE", {}, basic, ["new:basic"]],
    ["an unlabelled object checks nothing", "CREATE", null, {}, []],
  ] as const)("%s", (_title, operation, oldLabels, newLabels, expected) => {
    const request = requestOf({
      operation,
      kind: "Mwan3Rule",
      object: newLabels ? rule(newLabels) : null,
      oldObject: oldLabels ? rule(oldLabels) : null,
    });
    expect(bucketsToCheck(request).map((c) => `${c.side}:${c.bucket}`)).toEqual(expected);
  });
});

describe("planBucketPermission", () => {
  const create = (
    labels: Record<string, string>,
    user = "alice",
    groups = ["system:authenticated"],
  ) =>
    requestOf({
      operation: "CREATE",
      kind: "Mwan3Rule",
      object: rule(labels),
      username: user,
      groups,
    });

  it("lets system:masters do anything without reading RBAC", () => {
    const verdict = planBucketPermission(
      create(basic, "admin", ["system:masters"]),
      rbacOf([], []),
    );
    expect(verdict.allowed).toBe(true);
  });

  it("leaves unlabelled objects to RBAC alone", () => {
    expect(planBucketPermission(create({}, "mallory"), rbacOf([], [])).allowed).toBe(true);
  });

  it("allows a user whose Role grants the bucket for the resource", () => {
    expect(planBucketPermission(create(intent), rbacOf([aliceBinding], [intentRole])).allowed).toBe(
      true,
    );
  });

  it("denies a bucket the Role does not list, naming user, resource and bucket", () => {
    const verdict = planBucketPermission(create(basic), rbacOf([aliceBinding], [intentRole]));
    expect(verdict).toMatchObject({ allowed: false, code: 403, policy: "bucket-permission" });
    expect(!verdict.allowed && verdict.reason).toContain(
      'user "alice" may not create mwan3rules in bucket sdewan-bucket-type="basic"',
    );
    expect(!verdict.allowed && verdict.fix).toContain('{"mwan3rules": ["basic"]}');
  });

  it("ignores a RoleBinding in another namespace", () => {
    const elsewhere = { ...aliceBinding, namespace: "ns2" };
    const role = { ...intentRole, namespace: "ns2" };
    expect(planBucketPermission(create(intent), rbacOf([elsewhere], [role])).allowed).toBe(false);
  });

  it("matches the user's groups through a ClusterRoleBinding with wildcards", () => {
    const groupBinding: Binding = {
      kind: "ClusterRoleBinding",
      namespace: "",
      name: "netops-firewall",
      roleRef: { kind: "ClusterRole", name: "firewall-intent" },
      subjects: [{ kind: "Group", name: "netops" }],
    };
    const request = requestOf({
      operation: "CREATE",
      kind: "FirewallZone",
      resource: "firewallzones",
      object: rule(intent),
      username: "carol",
      groups: ["netops", "system:authenticated"],
    });
    expect(
      planBucketPermission(request, rbacOf([groupBinding], [firewallClusterRole])).allowed,
    ).toBe(true);
  });

  it("follows a RoleBinding to a ClusterRole (roleRef.kind), scoped to the binding's namespace", () => {
    const binding: Binding = {
      ...aliceBinding,
      roleRef: { kind: "ClusterRole", name: "firewall-intent" },
    };
    const request = requestOf({
      operation: "CREATE",
      kind: "FirewallRule",
      resource: "firewallrules",
      object: rule(intent),
    });
    expect(planBucketPermission(request, rbacOf([binding], [firewallClusterRole])).allowed).toBe(
      true,
    );
  });

  it("does not confuse a Role with a ClusterRole of the same name", () => {
    const binding: Binding = {
      ...aliceBinding,
      roleRef: { kind: "ClusterRole", name: "intent-editor" },
    };
    expect(planBucketPermission(create(intent), rbacOf([binding], [intentRole])).allowed).toBe(
      false,
    );
  });

  it("matches a service account subject, defaulting its namespace to the RoleBinding's", () => {
    const binding: Binding = {
      ...aliceBinding,
      subjects: [{ kind: "ServiceAccount", name: "onap" }],
    };
    const request = create(intent, "system:serviceaccount:ns1:onap", [
      "system:serviceaccounts",
      "system:serviceaccounts:ns1",
    ]);
    expect(planBucketPermission(request, rbacOf([binding], [intentRole])).allowed).toBe(true);
    const otherNamespace = create(intent, "system:serviceaccount:ns2:onap");
    expect(planBucketPermission(otherNamespace, rbacOf([binding], [intentRole])).allowed).toBe(
      false,
    );
  });

  it("denies moving a rule out of a bucket the user may not touch (upstream checked only the new one)", () => {
    const request = requestOf({
      operation: "UPDATE",
      kind: "Mwan3Rule",
      oldObject: rule(basic),
      object: rule(intent),
    });
    const verdict = planBucketPermission(request, rbacOf([aliceBinding], [intentRole]));
    expect(!verdict.allowed && verdict.reason).toContain(
      'may not change or move out of mwan3rules in bucket sdewan-bucket-type="basic"',
    );
  });

  it("denies moving a rule into a forbidden bucket", () => {
    const request = requestOf({
      operation: "UPDATE",
      kind: "Mwan3Rule",
      oldObject: rule(intent),
      object: rule(basic),
    });
    const verdict = planBucketPermission(request, rbacOf([aliceBinding], [intentRole]));
    expect(!verdict.allowed && verdict.reason).toContain("move into");
  });

  it("checks DELETE against the existing object's bucket", () => {
    const request = requestOf({ operation: "DELETE", kind: "Mwan3Rule", oldObject: rule(basic) });
    expect(planBucketPermission(request, rbacOf([aliceBinding], [intentRole])).allowed).toBe(false);
    const ok = requestOf({ operation: "DELETE", kind: "Mwan3Rule", oldObject: rule(intent) });
    expect(planBucketPermission(ok, rbacOf([aliceBinding], [intentRole])).allowed).toBe(true);
  });

  it("skips an invalid annotation and records a note for the operator's log", () => {
    const broken = { ...intentRole, bucketPermission: '{"mwan3rules": "app-intent"}' };
    const verdict = planBucketPermission(create(intent), rbacOf([aliceBinding], [broken]));
    expect(verdict.allowed).toBe(false);
    expect(verdict.notes?.[0]).toContain("Role ns1/intent-editor");
  });
});
