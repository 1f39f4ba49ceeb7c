// manifests/rbac and manifests/openfaas, statically: the lists that could drift from the code
// (rule kinds from the registry, the webhook's role) stay equal to their source, every function
// has an identity, and no role grants wildcards or secrets. The roles' sufficiency and tightness
// are proved against the real API server in test/integration/rbac.test.ts.
import { ALL_FUNCTIONS } from "../../../functions/all.js";
import { ALL_RULE_KINDS, RULE_GROUP } from "../../../shared/kinds/index.js";
import { at, docsOfFolder, ofKind, readText, yamlDocs, type Doc } from "./repo-files.js";

interface Rule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly verbs: string[];
}

const rbac = docsOfFolder("manifests/rbac");
const rulesOf = (role: Doc | undefined): Rule[] => (at(role, "rules") as Rule[] | undefined) ?? [];
const roleNamed = (docs: readonly Doc[], name: string): Doc | undefined =>
  ofKind(docs, "ClusterRole").find((r) => r.metadata?.name === name);

describe("manifests/rbac", () => {
  const plurals = ALL_RULE_KINDS.map((k) => k.plural).sort();

  it.each(["sdewan-reconcile-rule", "sdewan-on-deployment-ready", "sdewan-event-source"])(
    "%s names every rule kind of the registry, no more",
    (name) => {
      const ruleResources = rulesOf(roleNamed(rbac, name))
        .filter((r) => r.apiGroups.includes(RULE_GROUP))
        .map((r) => r.resources.filter((res) => !res.includes("/")));
      const main = ruleResources.find((list) => list.length > 0) ?? [];
      expect([...main].sort()).toEqual(plurals);
    },
  );

  it.each(["sdewan-reconcile-rule", "sdewan-on-deployment-ready"])(
    "%s may patch the status of every rule kind, carries the bucket grant for its finalizer writes, and can neither create nor delete rules",
    (name) => {
      const role = roleNamed(rbac, name);
      const rules = rulesOf(role).filter((r) => r.apiGroups.includes(RULE_GROUP));
      const status = rules.find((r) => r.resources.every((res) => res.endsWith("/status")));
      expect([...(status?.resources ?? [])].sort()).toEqual(plurals.map((p) => `${p}/status`));
      expect(status?.verbs).toEqual(["patch"]);
      for (const r of rules) expect(r.verbs).not.toEqual(expect.arrayContaining(["create"]));
      for (const r of rules) expect(r.verbs).not.toEqual(expect.arrayContaining(["delete"]));
      expect(role?.metadata?.annotations?.["sdewan-bucket-type-permission"]).toBe('{"*":["*"]}');
    },
  );

  it("validate-admission's objects equal manifests/webhook/rbac.yaml's", () => {
    expect(yamlDocs("manifests/rbac/validate-admission.yaml")).toEqual(
      yamlDocs("manifests/webhook/rbac.yaml"),
    );
  });

  it("every function has a ServiceAccount bound to its own ClusterRole", () => {
    const bindings = ofKind(rbac, "ClusterRoleBinding");
    for (const fn of ALL_FUNCTIONS) {
      const binding = bindings.find((b) => at(b, "roleRef", "name") === `sdewan-${fn.name}`);
      expect([fn.name, binding !== undefined]).toEqual([fn.name, true]);
      const subject = (at(binding, "subjects") as { name: string; namespace: string }[])[0];
      const account = ofKind(rbac, "ServiceAccount").find(
        (a) => a.metadata?.name === subject?.name && a.metadata?.namespace === subject?.namespace,
      );
      expect([fn.name, account !== undefined]).toEqual([fn.name, true]);
    }
  });

  it("no role grants a wildcard verb or any access to Secrets, but sdewan-rule-secrets, which is get only and bound nowhere", () => {
    for (const role of ofKind(rbac, "ClusterRole")) {
      for (const rule of rulesOf(role)) {
        expect(rule.verbs).not.toContain("*");
        if (role.metadata?.name === "sdewan-rule-secrets") {
          expect(rule).toEqual({ apiGroups: [""], resources: ["secrets"], verbs: ["get"] });
        } else {
          expect([role.metadata?.name, rule.resources]).not.toEqual([
            role.metadata?.name,
            expect.arrayContaining(["secrets"]),
          ]);
        }
      }
    }
    expect(roleNamed(rbac, "sdewan-rule-secrets")).toBeDefined();
    const everyBinding = [
      ...docsOfFolder("manifests/rbac"),
      ...docsOfFolder("manifests/openfaas"),
      ...docsOfFolder("manifests/knative"),
    ].filter((d) => d.kind === "ClusterRoleBinding" || d.kind === "RoleBinding");
    for (const binding of everyBinding) {
      expect(at(binding, "roleRef", "name")).not.toBe("sdewan-rule-secrets");
    }
  });
});

describe("manifests/rbac/service-writes-policy.yaml", () => {
  const policy = ofKind(rbac, "ValidatingAdmissionPolicy").find(
    (p) => p.metadata?.name === "sdewan-service-writes",
  );
  const binding = ofKind(rbac, "ValidatingAdmissionPolicyBinding").find(
    (b) => at(b, "spec", "policyName") === "sdewan-service-writes",
  );
  const matched = at(policy, "spec", "matchConditions", 0, "expression") as string;
  const WRITES = new Set(["create", "update", "patch", "delete", "deletecollection", "*"]);

  it("denies (not warns), fails closed, and judges every write of Services (status too) and EndpointSlices", () => {
    expect(at(binding, "spec", "validationActions")).toEqual(["Deny"]);
    expect(at(policy, "spec", "failurePolicy")).toBe("Fail");
    const rules = at(policy, "spec", "matchConstraints", "resourceRules") as {
      resources: string[];
      operations: string[];
    }[];
    const covered = rules.flatMap((r) =>
      r.resources.map((res) => `${res} ${r.operations.join(",")}`),
    );
    expect(covered.sort()).toEqual([
      "endpointslices CREATE,UPDATE,DELETE",
      "services CREATE,UPDATE,DELETE",
      "services/status CREATE,UPDATE,DELETE",
    ]);
  });

  it("matches every account bound (Knative, OpenFaaS CE, OpenFaaS Pro) to a role that writes Services or EndpointSlices", () => {
    const writers = ofKind(rbac, "ClusterRole")
      .filter((role) =>
        rulesOf(role).some(
          (r) =>
            r.resources.some((res) => /^(services|endpointslices)(\/|$)/.test(res)) &&
            r.verbs.some((v) => WRITES.has(v)),
        ),
      )
      .map((role) => role.metadata?.name);
    expect(writers).toEqual(["sdewan-clusterlink-import"]);
    const bindings = [
      ...rbac,
      ...yamlDocs("manifests/openfaas/rbac-ce.yaml"),
      ...yamlDocs("manifests/openfaas/rbac-pro.yaml"),
    ].filter((d) => d.kind === "ClusterRoleBinding" || d.kind === "RoleBinding");
    const accounts = bindings
      .filter((b) => writers.includes(String(at(b, "roleRef", "name"))))
      .flatMap((b) => at(b, "subjects") as { name: string; namespace: string }[]);
    expect(accounts.length).toBe(3);
    for (const { namespace, name } of accounts) {
      const byName =
        matched.includes("startsWith('system:serviceaccount:')") &&
        matched.includes(`endsWith(':${name}')`);
      const exactly = matched.includes(`'system:serviceaccount:${namespace}:${name}'`);
      expect([namespace, name, byName || exactly]).toEqual([namespace, name, true]);
    }
  });
});

describe("manifests/openfaas", () => {
  const openfaas = docsOfFolder("manifests/openfaas");

  it.each(["rbac-ce.yaml", "rbac-pro.yaml"])(
    "%s binds a ClusterRole of manifests/rbac for every function",
    (file) => {
      const bindings = ofKind(yamlDocs(`manifests/openfaas/${file}`), "ClusterRoleBinding");
      const roles = bindings.map((b) => at(b, "roleRef", "name")).sort();
      expect(roles).toEqual(ALL_FUNCTIONS.map((fn) => `sdewan-${fn.name}`).sort());
      for (const role of roles) expect(roleNamed(rbac, role as string)).toBeDefined();
    },
  );

  // A function's Roles (its ledgers, its Events on cluster-scoped objects in "default") are bound
  // by RoleBindings in manifests/rbac; on OpenFaaS the account that runs the function needs each
  // one too: openfaas-fn/default on CE (every function runs as it), the function's own on Pro.
  const functionRoleBindings = ofKind(rbac, "RoleBinding").flatMap((binding) => {
    const subject = at(binding, "subjects", 0, "name") as string;
    const fn = ALL_FUNCTIONS.find((f) => subject === `sdewan-${f.name}`);
    return fn === undefined ? [] : [{ fn: fn.name, binding }];
  });
  const proAccount = (fn: string): string => `sdewan-${fn}`;

  it.each([
    ["rbac-ce.yaml", (): string => "default"],
    ["rbac-pro.yaml", proAccount],
  ] as const)(
    "%s binds every namespaced Role manifests/rbac binds a function's account to",
    (file, account) => {
      expect(functionRoleBindings.length).toBeGreaterThan(0);
      const bindings = ofKind(yamlDocs(`manifests/openfaas/${file}`), "RoleBinding");
      for (const { fn, binding } of functionRoleBindings) {
        const role = at(binding, "roleRef", "name");
        const namespace = binding.metadata?.namespace;
        const found = bindings.find(
          (b) =>
            at(b, "roleRef", "name") === role &&
            at(b, "roleRef", "kind") === "Role" &&
            b.metadata?.namespace === namespace,
        );
        expect([fn, role, namespace, at(found, "subjects")]).toEqual([
          fn,
          role,
          namespace,
          [{ kind: "ServiceAccount", name: account(fn), namespace: "openfaas-fn" }],
        ]);
      }
    },
  );

  it("the connector runs as the event-source identity, one replica, routes pointed at /function/<name>/<name>", () => {
    const deployment = ofKind(openfaas, "Deployment")[0];
    expect(at(deployment, "spec", "replicas")).toBe(1);
    const spec = at(deployment, "spec", "template", "spec");
    const binding = ofKind(rbac, "ClusterRoleBinding").find(
      (b) => at(b, "roleRef", "name") === "sdewan-event-source",
    );
    const subjects = (at(binding, "subjects") as { name: string }[]).map((s) => s.name);
    expect(subjects).toContain(at(spec, "serviceAccountName"));
    const env = at(spec, "containers", 0, "env") as { name: string; value: string }[];
    const routes = (
      at(yamlDocs("manifests/connector/config.yaml")[0], "routes") as {
        name: string;
      }[]
    ).map((r) => r.name);
    for (const route of routes) {
      const variable = `CONNECTOR_ROUTE_${route.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_URL`;
      expect(env.find((e) => e.name === variable)?.value).toMatch(
        new RegExp(`/function/${route}/${route}$`),
      );
    }
  });
});

describe("docs/deploy.md on the OpenFaaS CE binding (issue 17 item 6)", () => {
  const text = readText("docs/deploy.md");
  const start = text.indexOf("### What `openfaas-fn/default` may do on CE");
  const section = text.slice(start, text.indexOf("\n## ", start + 1));
  const table = section.split("\n").filter((line) => line.startsWith("| "));
  const boundRoles = ofKind(yamlDocs("manifests/openfaas/rbac-ce.yaml"), "ClusterRoleBinding").map(
    (b) => String(at(b, "roleRef", "name")),
  );
  const READS = new Set(["get", "list", "watch"]);

  it("exists and names every role rbac-ce.yaml binds to the shared account", () => {
    expect(start).toBeGreaterThan(0);
    for (const role of boundRoles) expect(section).toContain(`\`${role}\``);
    expect(section).toContain("any function anyone deploys to that OpenFaaS");
  });

  it("names every write the bound roles grant, in a row that names the role", () => {
    for (const role of boundRoles) {
      for (const rule of rulesOf(roleNamed(rbac, role))) {
        const writes = rule.verbs.filter((v) => !READS.has(v));
        if (writes.length === 0) continue;
        // The rule kinds are one row ("rule kinds", "rule kinds/status"), whatever the registry holds.
        const isRuleGroup = rule.apiGroups.includes(RULE_GROUP);
        const names = isRuleGroup
          ? [
              ...new Set(
                rule.resources.map((r) =>
                  r.endsWith("/status") ? "rule kinds/status" : "rule kinds",
                ),
              ),
            ]
          : rule.resources;
        for (const name of names) {
          const row = table.find(
            (line) => line.includes(`${name}: `) && line.includes(`\`${role}\``),
          );
          expect([role, name, row !== undefined]).toEqual([role, name, true]);
          for (const verb of writes)
            expect([role, name, row?.includes(verb)]).toEqual([role, name, true]);
        }
      }
    }
  });
});
