// `kubectl apply|delete --dry-run=server` of a rule answers with the plan of the change as
// warnings: validate-admission (the real webhook, registered with the run's kube-apiserver, with
// manifests/webhook/rbac.yaml's roles) reads the CNF's two simulated pods with GETs and the
// planners reconcile-rule runs. The CNF's password is only in the credentials Secret (and the
// functions' own setting), so a plan with pod lines proves the webhook logged in with it.
import { CoreV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { pollUntil } from "../../dev/control-plane/api.js";
import type { Cnf } from "../../dev/world/index.js";
import { RULE_API_VERSION } from "../../shared/kinds/index.js";
import {
  CNF_CREDENTIALS_SECRET,
  startAdmissionHarness,
  type AdmissionHarness,
} from "./admission-harness.js";
import { SyncWorld } from "./sync-harness.js";
import { adminKubeConfig, newNamespace, userKubeConfig } from "./support/cluster.js";
import { allowed } from "./support/identity.js";
import { haveKubectl, kubectl, type KubectlResult } from "./support/kubectl.js";
import { inCi } from "../support/in-ci.js";

const PURPOSE = "cnf-plan";
const PASSWORD = "dry-run-cnf-password";
const POLICY = {
  members: [
    { network: "ovn-net1", metric: 2, weight: 2 },
    { network: "ovn-net2", metric: 3, weight: 3 },
  ],
};
const RULE = { policy: "balance-1", dest_port: "80", proto: "tcp" };

const admin = adminKubeConfig();
const core = admin.makeApiClient(CoreV1Api);
const rbac = admin.makeApiClient(RbacAuthorizationV1Api);

let credentials: string;
let harness: AdmissionHarness;
let world: SyncWorld;
let cnf: Cnf;

const describeWithKubectl = haveKubectl || inCi ? describe : describe.skip;

function manifest(kind: string, name: string, spec: object, extra: object = {}): string {
  return stringify({
    apiVersion: RULE_API_VERSION,
    kind,
    metadata: { name, namespace: world.namespace, labels: { sdewanPurpose: PURPOSE }, ...extra },
    spec,
  });
}

/** The plan's warnings (kubectl may warn of other things, e.g. a missing last-applied annotation). */
const plan = (result: KubectlResult): readonly string[] =>
  result.warnings.filter((w) => w.startsWith("plan"));

/** Every request each simulated pod got since the counters were reset, "METHOD path". */
const requests = (): string[][] =>
  cnf.pods.map((pod) => pod.sim.requests().map((r) => `${r.method} ${r.path}`));

/** A request that changes nothing on a CNF: a GET, or the login (a POST to the LuCI root). */
const isRead = (request: string): boolean =>
  request.startsWith("GET ") || /^POST \/cgi-bin\/luci\/?$/.test(request);

beforeAll(async () => {
  credentials = await newNamespace("cnf-credentials");
  await core.createNamespacedSecret({
    namespace: credentials,
    body: { metadata: { name: CNF_CREDENTIALS_SECRET }, stringData: { password: PASSWORD } },
  });
  harness = await startAdmissionHarness({ cnfCredentialsNamespace: credentials });
  world = await SyncWorld.create(await harness.namespace());
  world.env["CNF_PASSWORD"] = PASSWORD;
  cnf = await world.createCnf(PURPOSE, { sim: { password: PASSWORD } });
  await world.createRule("Mwan3Policy", "balance-1", PURPOSE, POLICY);
  await world.createRule("Mwan3Rule", "http-rule", PURPOSE, RULE);
  expect(await world.reconcile("Mwan3Policy", "balance-1")).toMatchObject({ kind: "done" });
  expect(await world.reconcile("Mwan3Rule", "http-rule")).toMatchObject({ kind: "done" });
}, 90_000);

afterAll(async () => {
  await world?.close();
  await harness?.close();
});

beforeEach(() => world.resetCounters());

describeWithKubectl("kubectl apply --dry-run=server of a rule", () => {
  it("lists each pod's request, the restart and the rules it affects, and writes nothing anywhere", async () => {
    const changed = { members: [{ network: "ovn-net1", metric: 2, weight: 5 }] };
    const result = await kubectl(["apply", "--dry-run=server", "-f", "-"], {
      input: manifest("Mwan3Policy", "balance-1", changed),
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("(server dry run)");
    // Pods in name order, as the plan lists them.
    const [first, second] = [...cnf.pods].sort((a, b) => a.name.localeCompare(b.name));
    expect(plan(result)).toEqual([
      `plan Mwan3Policy balance-1: apply on CNF ${cnf.name} (2/2 pods ready)`,
      `plan Mwan3Policy balance-1: pod ${first?.name}: PUT mwan3/policies/balance_1 [members]; restart mwan3`,
      `plan Mwan3Policy balance-1: pod ${second?.name}: PUT mwan3/policies/balance_1 [members]; restart mwan3`,
      "plan Mwan3Policy balance-1: affects 1 rule(s) using it: Mwan3Rule http-rule",
    ]);
    // The CNF was read (the policy, once per pod, after a login) and nothing else.
    for (const log of requests()) {
      expect(log.filter((r) => !isRead(r))).toEqual([]);
      expect(log).toContain("GET /cgi-bin/luci/sdewan/mwan3/v1/policies/balance_1");
    }
    expect(world.serviceRestarts(cnf)).toEqual([[], []]);
    expect(world.heldObjects(cnf, "mwan3/policies", "balance_1")).toEqual([
      expect.objectContaining({ name: "balance_1" }),
      expect.objectContaining({ name: "balance_1" }),
    ]);
    const stored = await world.readRule("Mwan3Policy", "balance-1");
    expect(stored?.spec).toEqual(POLICY);
  });

  it("says 'no change' where the CNF already holds what the rule wants", async () => {
    const result = await kubectl(["apply", "--dry-run=server", "-f", "-"], {
      input: manifest("Mwan3Rule", "http-rule", RULE, { annotations: { owner: "web-team" } }),
    });
    expect(result.code).toBe(0);
    for (const pod of cnf.pods) {
      expect(plan(result)).toContain(`plan Mwan3Rule http-rule: pod ${pod.name}: no change`);
    }
  });

  it("plans a new rule as a create on every pod, in the order of the file's objects", async () => {
    const result = await kubectl(["apply", "--dry-run=server", "-f", "-"], {
      input: [
        manifest("Mwan3Rule", "ssh-rule", { ...RULE, dest_port: "22" }),
        manifest("Mwan3Rule", "dns-rule", { ...RULE, dest_port: "53", proto: "udp" }),
      ].join("---\n"),
    });
    expect(result.code).toBe(0);
    for (const [rule, object] of [
      ["ssh-rule", "ssh_rule"],
      ["dns-rule", "dns_rule"],
    ]) {
      for (const pod of cnf.pods) {
        expect(plan(result)).toContain(
          `plan Mwan3Rule ${rule}: pod ${pod.name}: PUT mwan3/rules/${object}; restart mwan3`,
        );
      }
    }
    expect(await world.readRule("Mwan3Rule", "ssh-rule")).toBeUndefined();
  });

  it("names a pod that cannot be reached, and the dry run still succeeds", async () => {
    const [reachable, gone] = cnf.pods;
    await gone?.sim.refuseConnections();
    try {
      const result = await kubectl(["apply", "--dry-run=server", "-f", "-"], {
        input: manifest("Mwan3Policy", "balance-1", {
          members: [{ network: "ovn-net2", metric: 1, weight: 1 }],
        }),
      });
      expect(result.code).toBe(0);
      expect(plan(result)).toContain(
        `plan Mwan3Policy balance-1: pod ${reachable?.name}: PUT mwan3/policies/balance_1 [members]; restart mwan3`,
      );
      const line = plan(result).find((w) => w.includes(`pod ${gone?.name}:`));
      expect(line).toBe(
        `plan Mwan3Policy balance-1: pod ${gone?.name}: unknown: unreachable (ECONNREFUSED)`,
      );
    } finally {
      await gone?.sim.acceptConnections();
    }
  });

  it("reads no CNF when it is not a dry run", async () => {
    const result = await kubectl(["apply", "-f", "-"], {
      input: manifest("Mwan3Rule", "ftp-rule", { ...RULE, dest_port: "21" }),
    });
    expect(result.code).toBe(0);
    expect(plan(result)).toEqual([]);
    expect(requests()).toEqual([[], []]);
    await world.deleteRule("Mwan3Rule", "ftp-rule");
  });
});

describeWithKubectl("kubectl delete --dry-run=server of a rule", () => {
  it("plans the DELETE and the restart on every pod, and deletes nothing", async () => {
    const result = await kubectl([
      "delete",
      "--dry-run=server",
      "-n",
      world.namespace,
      "mwan3rules",
      "http-rule",
    ]);
    expect(result.code).toBe(0);
    for (const pod of cnf.pods) {
      expect(plan(result)).toContain(
        `plan Mwan3Rule http-rule: pod ${pod.name}: DELETE mwan3/rules/http_rule; restart mwan3`,
      );
    }
    expect(await world.readRule("Mwan3Rule", "http-rule")).toBeDefined();
    for (const log of requests()) expect(log.filter((r) => !isRead(r))).toEqual([]);
  });

  it("says the CNF refuses to delete a policy a rule still uses, and restarts nothing for it", async () => {
    const result = await kubectl([
      "delete",
      "--dry-run=server",
      "-n",
      world.namespace,
      "mwan3policies",
      "balance-1",
    ]);
    expect(result.code).toBe(0);
    for (const pod of cnf.pods) {
      expect(plan(result)).toContain(
        `plan Mwan3Policy balance-1: pod ${pod.name}: DELETE mwan3/policies/balance_1 refused: in use`,
      );
    }
    expect(plan(result)).toContain(
      "plan Mwan3Policy balance-1: affects 1 rule(s) using it: Mwan3Rule http-rule",
    );
  });
});

describeWithKubectl("who may see CNF state in a dry run", () => {
  const editor = () => `plan-editor-${harness.id}`;

  beforeAll(async () => {
    await rbac.createNamespacedRole({
      namespace: world.namespace,
      body: {
        metadata: { name: editor() },
        rules: [{ apiGroups: ["batch.sdewan.akraino.org"], resources: ["*"], verbs: ["*"] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: world.namespace,
      body: {
        metadata: { name: editor() },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: editor() },
        subjects: [{ kind: "User", name: "alice", apiGroup: "rbac.authorization.k8s.io" }],
      },
    });
  });

  it("a user who may not get the CNF credentials Secret gets no CNF state back, and no CNF is read", async () => {
    const result = await kubectl(["apply", "--dry-run=server", "-f", "-"], {
      input: manifest("Mwan3Policy", "balance-1", {
        members: [{ network: "ovn-net1", metric: 1, weight: 1 }],
      }),
      as: { user: "alice" },
    });
    expect(result.code).toBe(0);
    expect(plan(result)).toEqual([
      "plan Mwan3Policy balance-1: apply",
      `plan Mwan3Policy balance-1: no CNF state: "alice" may not get Secret ${credentials}/${CNF_CREDENTIALS_SECRET}`,
    ]);
    expect(requests()).toEqual([[], []]);
  });

  it("once she may get that Secret, she sees what each pod would do", async () => {
    await rbac.createNamespacedRole({
      namespace: credentials,
      body: {
        metadata: { name: editor() },
        rules: [
          {
            apiGroups: [""],
            resources: ["secrets"],
            resourceNames: [CNF_CREDENTIALS_SECRET],
            verbs: ["get"],
          },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: credentials,
      body: {
        metadata: { name: editor() },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: editor() },
        subjects: [{ kind: "User", name: "alice", apiGroup: "rbac.authorization.k8s.io" }],
      },
    });
    const what = {
      group: "",
      resource: "secrets",
      verb: "get",
      namespace: credentials,
      name: CNF_CREDENTIALS_SECRET,
    };
    const alice = userKubeConfig("alice");
    await pollUntil(
      async () => ((await allowed(alice, what)) ? true : undefined),
      () => "alice's grant on the credentials Secret to take effect",
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const result = await kubectl(["apply", "--dry-run=server", "-f", "-"], {
      input: manifest("Mwan3Policy", "balance-1", {
        members: [{ network: "ovn-net1", metric: 1, weight: 1 }],
      }),
      as: { user: "alice" },
    });
    for (const pod of cnf.pods) {
      expect(plan(result)).toContain(
        `plan Mwan3Policy balance-1: pod ${pod.name}: PUT mwan3/policies/balance_1 [members]; restart mwan3`,
      );
    }
  });
});

describeWithKubectl("a dry-run delete of a rule in a bucket", () => {
  const bucketEditor = () => `plan-bucket-editor-${harness.id}`;

  beforeAll(async () => {
    await world.createRule(
      "Mwan3Rule",
      "bucket-rule",
      PURPOSE,
      { ...RULE, dest_port: "8080" },
      {
        "sdewan-bucket-type": "app-intent",
      },
    );
    expect(await world.reconcile("Mwan3Rule", "bucket-rule")).toMatchObject({ kind: "done" });
    await rbac.createNamespacedRole({
      namespace: world.namespace,
      body: {
        metadata: {
          name: bucketEditor(),
          annotations: { "sdewan-bucket-type-permission": '{"*": ["app-intent"]}' },
        },
        rules: [{ apiGroups: ["batch.sdewan.akraino.org"], resources: ["*"], verbs: ["*"] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: world.namespace,
      body: {
        metadata: { name: bucketEditor() },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: bucketEditor() },
        subjects: [{ kind: "User", name: "alice", apiGroup: "rbac.authorization.k8s.io" }],
      },
    });
  });

  /** How often each pod was asked for the rule's object: once per plan made. */
  const reads = (): number[] =>
    cnf.pods.map(
      (pod) =>
        pod.sim
          .requests()
          .filter((r) => r.method === "GET" && r.path.endsWith("/mwan3/v1/rules/bucket_rule"))
          .length,
    );

  it.each([
    ["alice, reviewed for her bucket by the rule-deletes webhook", { user: "alice" }],
    ["a cluster admin, whom the bucket webhook does not ask about", { user: "admin" }],
  ])("%s: planned once", async (_title, as) => {
    const result = await kubectl(
      ["delete", "--dry-run=server", "-n", world.namespace, "mwan3rules", "bucket-rule"],
      { as },
    );
    expect(result.code).toBe(0);
    for (const pod of cnf.pods) {
      expect(plan(result)).toContain(
        `plan Mwan3Rule bucket-rule: pod ${pod.name}: DELETE mwan3/rules/bucket_rule; restart mwan3`,
      );
    }
    expect(reads()).toEqual([1, 1]);
  });
});
