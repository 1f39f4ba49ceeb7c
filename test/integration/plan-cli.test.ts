// `npm run plan -- -f <dir>` as a user at a terminal runs it, against the run's API server and a
// two-pod CNF of simulators: the plan of a whole directory, in the order the functions apply it,
// with the restarts the burst costs under the shipped pacing, as a table and as JSON; reads only.
import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CoreV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { stringify } from "yaml";
import { sampleRule, type Cnf } from "../../dev/world/index.js";
import { ADMIN_USER, userFromInfo } from "../../dev/control-plane/control-plane.js";
import { pollUntil } from "../../dev/control-plane/api.js";
import { RULE_API_VERSION, RULE_GROUP } from "../../shared/kinds/index.js";
import type { CnfPlan } from "../../shared/sync/index.js";
import { SyncWorld } from "./sync-harness.js";
import { adminKubeConfig, clusterInfo, newNamespace, userKubeConfig } from "./support/cluster.js";
import { allowed } from "./support/identity.js";

const PURPOSE = "cnf-plan-cli";
const PASSWORD = "plan-cli-cnf-password";
const SECRET = "sdewan-cnf-credentials";

let world: SyncWorld;
let cnf: Cnf;
let credentials: string;
let dir: string;

interface Run {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `npm run plan -- <args>` as `user`, with the credentials Secret of this test. */
function plan(args: readonly string[], user = ADMIN_USER): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn("npm", ["run", "--silent", "plan", "--", ...args], {
      env: {
        ...process.env,
        KUBECONFIG: userFromInfo(clusterInfo(), user).kubeconfigPath,
        CNF_CREDENTIALS_SECRET: `${credentials}/${SECRET}`,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}

function manifest(kind: string, name: string, spec: object): string {
  return stringify({
    apiVersion: RULE_API_VERSION,
    kind,
    metadata: { name, namespace: world.namespace, labels: { sdewanPurpose: PURPOSE } },
    spec,
  });
}

/** Each pod's requests other than reads (GETs and the login POST). */
const writesSeen = (): string[][] =>
  cnf.pods.map((pod) =>
    pod.sim
      .requests()
      .map((r) => `${r.method} ${r.path}`)
      .filter((r) => !r.startsWith("GET ") && !/^POST \/cgi-bin\/luci\/?$/.test(r)),
  );

beforeAll(async () => {
  credentials = await newNamespace("plan-cli-credentials");
  await adminKubeConfig()
    .makeApiClient(CoreV1Api)
    .createNamespacedSecret({
      namespace: credentials,
      body: { metadata: { name: SECRET }, stringData: { password: PASSWORD } },
    });
  world = await SyncWorld.create();
  world.env["CNF_PASSWORD"] = PASSWORD;
  cnf = await world.createCnf(PURPOSE, { sim: { password: PASSWORD } });
  const policy = sampleRule("Mwan3Policy");
  await world.createRule("Mwan3Policy", policy.name, PURPOSE, policy.spec);
  expect(await world.reconcile("Mwan3Policy", policy.name)).toMatchObject({ kind: "done" });
  // The directory a user would `kubectl apply -f`: a changed policy, two new rules that use it,
  // two zones and a forwarding between them, a file per kind as manifests/samples has them.
  dir = await mkdtemp(path.join(os.tmpdir(), "plan-cli-"));
  const changed = { members: [{ network: "ovn-net1", metric: 1, weight: 1 }] };
  const rule = sampleRule("Mwan3Rule");
  await writeFile(
    path.join(dir, "mwan3policy.yaml"),
    manifest("Mwan3Policy", policy.name, changed),
  );
  await writeFile(
    path.join(dir, "mwan3rule.yaml"),
    [
      manifest("Mwan3Rule", "http-rule", rule.spec),
      manifest("Mwan3Rule", "https-rule", { ...rule.spec, dest_port: "443" }),
    ].join("---\n"),
  );
  await writeFile(
    path.join(dir, "firewall.yaml"),
    [
      manifest("FirewallZone", "lan1", sampleRule("FirewallZone", "lan1").spec),
      manifest("FirewallZone", "wan1", sampleRule("FirewallZone", "wan1").spec),
      manifest("FirewallForwarding", "lan1-to-wan1", sampleRule("FirewallForwarding").spec),
    ].join("---\n"),
  );
}, 60_000);

afterAll(() => world?.close());

beforeEach(() => world.resetCounters());

describe("npm run plan -- -f <dir>", () => {
  it("plans every object of the directory in apply order, with the burst's restarts under the shipped pacing (-o json)", async () => {
    const run = await plan(["-f", dir, "-o", "json"]);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as {
      cnfs: CnfPlan[];
      skipped: unknown[];
      pacing: { minIntervalMs: number };
    };
    expect(report.pacing.minIntervalMs).toBe(10_000);
    expect(report.skipped).toEqual([]);
    const [only] = report.cnfs;
    expect(report.cnfs).toHaveLength(1);
    expect(only?.rules.map((r) => `${r.kind} ${r.name} ${r.action}`)).toEqual([
      "Mwan3Policy balance-1 apply",
      "FirewallZone lan1 apply",
      "FirewallZone wan1 apply",
      "Mwan3Rule http-rule apply",
      "Mwan3Rule https-rule apply",
      "FirewallForwarding lan1-to-wan1 apply",
    ]);
    const pods = [...cnf.pods].map((p) => p.name).sort();
    expect(only?.pods.map((p) => p.pod)).toEqual(pods);
    for (const pod of only?.pods ?? []) {
      expect(pod.requests?.map((r) => `${r.method} ${r.collection}/${r.name}`)).toEqual([
        "PUT mwan3/policies/balance_1",
        "PUT firewall/zones/lan1",
        "PUT firewall/zones/wan1",
        "PUT mwan3/rules/http_rule",
        "PUT mwan3/rules/https_rule",
        "PUT firewall/forwardings/lan1-to-wan1",
      ]);
      // Three mwan3 rules and three firewall rules at once: each service restarts at once for
      // the first and once more for the rest after the burst (ADR 0007).
      expect(pod.restarts).toEqual({ firewall: 2, mwan3: 2 });
    }
    expect(only?.rules[0]?.dependents).toEqual(["Mwan3Rule http-rule", "Mwan3Rule https-rule"]);
    expect(writesSeen()).toEqual([[], []]);
  });

  it("prints the same plan as a table", async () => {
    const run = await plan(["-f", dir]);
    expect(run.code).toBe(0);
    const [first] = [...cnf.pods].map((p) => p.name).sort();
    expect(run.stdout).toContain(
      `CNF ${world.namespace}/${PURPOSE}: Deployment ${cnf.name}, 2/2 pods ready`,
    );
    expect(run.stdout).toMatch(
      new RegExp(
        `Mwan3Policy balance-1 +apply +${first} +update +PUT mwan3/policies/balance_1 +mwan3 +fields: members`,
      ),
    );
    expect(run.stdout).toContain(
      "restarts of the whole change as one burst, at most (CNF_RESTART_MIN_INTERVAL_MS=10000, CNF_RESTART_QUIET_MS=1000)",
    );
    expect(run.stdout).toContain(`${first}: firewall x2, mwan3 x2`);
  });

  it("--delete plans the removal of what the files name, deletes in reverse apply order", async () => {
    const run = await plan(["-f", path.join(dir, "mwan3policy.yaml"), "--delete", "-o", "json"]);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { cnfs: CnfPlan[] };
    const policy = report.cnfs[0]?.rules[0];
    expect(policy).toMatchObject({ kind: "Mwan3Policy", name: "balance-1", action: "delete" });
    for (const step of policy?.pods ?? []) {
      expect(step).toMatchObject({
        change: "delete",
        requests: [{ method: "DELETE", collection: "mwan3/policies", name: "balance_1" }],
        restart: "mwan3",
      });
    }
    expect(writesSeen()).toEqual([[], []]);
  });

  it("a user who may read the rules but not the CNF credentials is shown no CNF state, and no CNF is read", async () => {
    const rbac = adminKubeConfig().makeApiClient(RbacAuthorizationV1Api);
    const name = "plan-cli-rule-reader";
    await rbac.createNamespacedRole({
      namespace: world.namespace,
      body: {
        metadata: { name },
        rules: [{ apiGroups: [RULE_GROUP], resources: ["*"], verbs: ["get", "list"] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace: world.namespace,
      body: {
        metadata: { name },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
        subjects: [{ kind: "User", name: "bob", apiGroup: "rbac.authorization.k8s.io" }],
      },
    });
    const reads = {
      group: RULE_GROUP,
      resource: "mwan3policies",
      verb: "get",
      namespace: world.namespace,
    };
    await pollUntil(
      async () => ((await allowed(userKubeConfig("bob"), reads)) ? true : undefined),
      () => "bob's grant to take effect",
      { timeoutMs: 10_000, intervalMs: 50 },
    );
    const run = await plan(["-f", path.join(dir, "mwan3policy.yaml"), "-o", "json"], "bob");
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { cnfs: CnfPlan[] };
    expect(report.cnfs[0]).toMatchObject({
      withheld: `you may not get Secret ${credentials}/${SECRET} (the CNF credentials)`,
      rules: [{ kind: "Mwan3Policy", name: "balance-1", pods: [] }],
      pods: [],
    });
    expect(cnf.pods.map((p) => p.sim.requests())).toEqual([[], []]);
  });
});
