// Key material by reference (issue 17 item 4): an IpsecSite names its pre-shared key as a key of
// a Secret in its namespace. The function reads the Secret only when applying; the value reaches
// the CNF and nothing else (status, Events, logs), also when the CNF echoes it in an error. A
// missing Secret or key, or a Secret the function may not read, is a Stalled condition naming
// the Secret. The RBAC case runs reconcile-rule with its role's own token: it may read Secrets
// only where sdewan-rule-secrets (manifests/rbac/rule-secrets.yaml) is bound, and only get them.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { jest } from "@jest/globals";
import { CoreV1Api, RbacAuthorizationV1Api, type V1ClusterRole } from "@kubernetes/client-node";
import { parse } from "yaml";
import { pollUntil } from "../../dev/control-plane/api.js";
import type { Cnf } from "../../dev/world/index.js";
import { createReconcileRule } from "../../functions/reconcile-rule/index.js";
import { EVENTS } from "../../shared/kube/index.js";
import { SyncWorld } from "./sync-harness.js";
import { adminKubeConfig } from "./support/cluster.js";
import { allowed, identityFrom } from "./support/identity.js";

jest.setTimeout(60_000);

const PURPOSE = "secrets";
const REMOTES = "ipsec/remotes";
const PROPOSAL = { encryption_algorithm: "aes128", hash_algorithm: "sha256", dh_group: "modp3072" };

const siteSpec = (ref: { name: string; key: string }) => ({
  remote: "%any",
  authentication_method: "psk",
  pre_shared_key_secret_ref: ref,
  crypto_proposal: ["prop1"],
  connections: [
    {
      name: "conn1",
      conn_type: "tunnel",
      mode: "start",
      local_subnet: "172.16.0.0/24",
      crypto_proposal: ["prop1"],
    },
  ],
});

describe("an IpsecSite whose pre-shared key is a Secret reference", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const psk = `psk-${randomBytes(12).toString("hex")}`;

  beforeEach(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    await world.createRule("IpsecProposal", "prop1", PURPOSE, PROPOSAL);
    expect(await world.reconcile("IpsecProposal", "prop1")).toMatchObject({ kind: "done" });
  });
  afterEach(() => world.close());

  const createSecret = (name: string, data: Record<string, string>) =>
    core.createNamespacedSecret({
      namespace: world.namespace,
      body: { metadata: { name }, stringData: data },
    });

  /** Everything an operator or a log reader sees: statuses, Events, the function's log. */
  async function shown(): Promise<string> {
    const site = await world.readRule("IpsecSite", "site1");
    const events = await world.kube.list(EVENTS, { namespace: world.namespace });
    return JSON.stringify([site?.status, site?.spec, events, world.log.lines]);
  }

  it("is applied with the Secret's value on every pod, which appears in no status, Event or log", async () => {
    await createSecret("ipsec-keys", { psk });
    await world.createRule(
      "IpsecSite",
      "site1",
      PURPOSE,
      siteSpec({ name: "ipsec-keys", key: "psk" }),
    );
    expect(await world.reconcile("IpsecSite", "site1")).toMatchObject({ kind: "done" });
    expect(await world.ruleView("IpsecSite", "site1")).toMatchObject({
      inSync: true,
      condition: { type: "Ready", reason: "Applied" },
    });
    expect(world.heldObjects(cnf, REMOTES, "site1").map((r) => r?.["pre_shared_key"])).toEqual([
      psk,
      psk,
    ]);
    // A resync of the whole CNF reads the Secret too, and finds nothing to change.
    world.resetObservations();
    expect(await world.syncCnf(cnf)).toMatchObject({ kind: "done" });
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
    expect(await shown()).not.toContain(psk);
  });

  it.each([
    [400, "permanent", "Stalled"],
    [500, "retry", "Reconciling"],
  ] as const)(
    "a CNF error %i that echoes the key shows it redacted in status, Events and logs (retries included)",
    async (status, outcome, condition) => {
      await createSecret("ipsec-keys", { psk });
      await world.createRule(
        "IpsecSite",
        "site1",
        PURPOSE,
        siteSpec({ name: "ipsec-keys", key: "psk" }),
      );
      for (const pod of cnf.pods) {
        pod.sim.failNext({
          kind: "status",
          status,
          method: "PUT",
          collection: REMOTES,
          message: `bad remote {"pre_shared_key":"${psk}"}`,
          count: 5,
        });
      }
      expect(await world.reconcile("IpsecSite", "site1")).toMatchObject({ kind: outcome });
      const view = await world.ruleView("IpsecSite", "site1");
      expect(view).toMatchObject({ inSync: false, condition: { type: condition } });
      expect(view?.message).toContain("[redacted]");
      expect(await shown()).not.toContain(psk);
    },
  );

  it.each([
    ["a Secret that does not exist", "absent", "psk", "SecretNotFound", "does not exist"],
    ["a key the Secret lacks", "ipsec-keys", "other", "SecretKeyNotFound", "has no key other"],
  ])(
    "naming %s is Stalled with the reason, and applied once the Secret is right",
    async (_title, name, key, reason, text) => {
      await createSecret("ipsec-keys", { psk });
      await world.createRule("IpsecSite", "site1", PURPOSE, siteSpec({ name, key }));
      expect((await world.reconcile("IpsecSite", "site1")).kind).not.toBe("done");
      const view = await world.ruleView("IpsecSite", "site1");
      expect(view).toMatchObject({ inSync: false, condition: { type: "Stalled", reason } });
      expect(view?.message).toContain(`spec.pre_shared_key_secret_ref: Secret ${world.namespace}/`);
      expect(view?.message).toContain(text);
      expect(world.held(cnf, REMOTES)).toEqual([[], []]);

      await world.patchRuleSpec("IpsecSite", "site1", {
        pre_shared_key_secret_ref: { name: "ipsec-keys", key: "psk" },
      });
      expect(await world.reconcile("IpsecSite", "site1")).toMatchObject({ kind: "done" });
      expect(await world.ruleView("IpsecSite", "site1")).toMatchObject({ inSync: true });
      expect(await shown()).not.toContain(psk);
    },
  );

  it("reconcile-rule with its own role may read no Secret until sdewan-rule-secrets is bound in the rule's namespace, and then only get there", async () => {
    await createSecret("ipsec-keys", { psk });
    await world.createRule(
      "IpsecSite",
      "site1",
      PURPOSE,
      siteSpec({ name: "ipsec-keys", key: "psk" }),
    );
    const identity = await identityFrom("reconcile-rule.yaml");
    const fn = createReconcileRule({ kube: () => identity.kube, env: world.env });
    const can = (verb: string, namespace?: string) =>
      allowed(identity.kc, { group: "", resource: "secrets", verb, namespace });
    expect(await can("get", world.namespace)).toBe(false);

    await world.watchCacheCaughtUp();
    expect((await fn.handle(world.ruleEvent("IpsecSite", "site1"), world.context())).kind).not.toBe(
      "done",
    );
    const view = await world.ruleView("IpsecSite", "site1");
    expect(view).toMatchObject({ condition: { type: "Stalled", reason: "SecretForbidden" } });
    expect(view?.message).toContain("bind the ClusterRole sdewan-rule-secrets");

    // The operator grants it in this namespace, as manifests/rbac/rule-secrets.yaml says.
    const [, , accountNamespace, account] = identity.user.split(":");
    const role = parse(
      readFileSync(new URL("../../manifests/rbac/rule-secrets.yaml", import.meta.url), "utf8"),
    ) as V1ClusterRole;
    const roleName = `sdewan-rule-secrets-${randomBytes(3).toString("hex")}`;
    const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
    await rbac.createClusterRole({
      body: { ...role, metadata: { ...role.metadata, name: roleName } },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: world.namespace,
      body: {
        metadata: { name: "sdewan-rule-secrets" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: roleName },
        subjects: [{ kind: "ServiceAccount", name: account ?? "", namespace: accountNamespace }],
      },
    });
    await pollUntil(
      async () => ((await can("get", world.namespace)) ? true : undefined),
      () => "the RoleBinding to take effect",
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    for (const [verb, namespace] of [
      ["get", "kube-system"],
      ["get", undefined],
      ["list", world.namespace],
      ["watch", world.namespace],
      ["create", world.namespace],
      ["update", world.namespace],
    ] as const) {
      expect([verb, namespace, await can(verb, namespace)]).toEqual([verb, namespace, false]);
    }

    expect(await fn.handle(world.ruleEvent("IpsecSite", "site1"), world.context())).toMatchObject({
      kind: "done",
    });
    expect(await world.ruleView("IpsecSite", "site1")).toMatchObject({ inSync: true });
    expect(world.heldObjects(cnf, REMOTES, "site1").map((r) => r?.["pre_shared_key"])).toEqual([
      psk,
      psk,
    ]);
    expect(await shown()).not.toContain(psk);
  });
});
