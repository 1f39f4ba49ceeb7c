// Deleting rules with validate-admission registered but slow (answering after the API server's
// timeout) or down (not listening), through a WebhookGate in front of the real webhook
// (ADR 0010): a user's delete, the controller's finalizer release and a namespace's deletion go
// through; a zone still used on the CNF is held by its finalizer rather than refused; every other
// update and a bucket-labelled rule's delete by a user still need the webhook.
import { jest } from "@jest/globals";
import { CoreV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import pLimit from "p-limit";
import {
  ALL_RULE_KINDS,
  RULE_GROUP,
  RULE_VERSION,
  exampleRules,
} from "../../shared/kinds/index.js";
import { adminKubeConfig, endpoint, userKubeConfig } from "./support/cluster.js";
import { NAMESPACE_CONTROLLER, NamespaceController } from "./support/namespace-controller.js";
import type { GateMode, WebhookGate } from "./support/webhook-gate.js";
import { startAdmissionHarness, type AdmissionHarness } from "./admission-harness.js";
import { deniedBy, rule, rules } from "./admission-clients.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(300_000);

const PURPOSE = "cnf-a";
const BUCKET = "sdewan-bucket-type";
const zoneSpec = { network: ["ovn-priv-net"], input: "ACCEPT" };

let harness: AdmissionHarness;
let gate: WebhookGate;
let slow: GateMode;
const admin = adminKubeConfig();
const core = admin.makeApiClient(CoreV1Api);
const rbac = admin.makeApiClient(RbacAuthorizationV1Api);

beforeAll(async () => {
  harness = await startAdmissionHarness({ gate: true });
  if (harness.gate === undefined) throw new Error("the harness started without a gate");
  gate = harness.gate;
  // Every answer comes well after the longest timeout the API server gives the webhook.
  const timeout = Math.max(...harness.configuration.webhooks.map((w) => w.timeoutSeconds));
  slow = { slowMs: timeout * 1000 + 2000 };
}, 60_000);

afterEach(async () => {
  await gate.set("open");
});

afterAll(async () => {
  await harness?.close();
});

const OUTAGES: [string, () => GateMode][] = [
  ["slow (answering after its timeout)", () => slow],
  ["down (not listening)", () => "down"],
];

/** bob may edit every rule of `namespace` by plain RBAC, and holds no bucket permission. */
async function bobEdits(namespace: string): Promise<void> {
  const name = `rule-editor-${harness.id}`;
  await rbac.createNamespacedRole({
    namespace,
    body: {
      metadata: { name },
      rules: [{ apiGroups: [RULE_GROUP], resources: ["*"], verbs: ["*"] }],
    },
  });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: {
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
      subjects: [{ kind: "User", name: "bob", apiGroup: "rbac.authorization.k8s.io" }],
    },
  });
}

describe("a user's delete", () => {
  it.each(OUTAGES)("goes through while the webhook is %s", async (_title, outage) => {
    const ns = await harness.namespace();
    await bobEdits(ns);
    const bob = rules(userKubeConfig("bob"), ns);
    expect(
      (await bob.create(rule("FirewallZone", "lan", { sdewanPurpose: PURPOSE }, zoneSpec))).ok,
    ).toBe(true);
    await gate.set(outage());
    expect(await bob.delete("FirewallZone", "lan")).toMatchObject({ ok: true });
  });

  it("of a bucket-labelled rule still needs the bucket, and fails closed while the webhook is down", async () => {
    const ns = await harness.namespace();
    await bobEdits(ns);
    const labels = { sdewanPurpose: PURPOSE, [BUCKET]: "app-intent" };
    const api = rules(admin, ns);
    for (const name of ["lan", "wan", "dmz"]) {
      expect((await api.create(rule("FirewallZone", name, labels, zoneSpec))).ok).toBe(true);
    }
    const bob = rules(userKubeConfig("bob"), ns);
    deniedBy(await bob.delete("FirewallZone", "lan"), "bucket-permission");

    await gate.set("down");
    const unanswered = await bob.delete("FirewallZone", "lan");
    expect(unanswered).toMatchObject({ ok: false, code: 500 });
    expect(unanswered.ok ? "" : unanswered.message).toContain("failed calling webhook");
    // system:masters and the namespace controller pass the bucket policy: never asked.
    expect(await api.delete("FirewallZone", "wan")).toMatchObject({ ok: true });
    const controller = await harness.serviceAccountKubeConfig(
      NAMESPACE_CONTROLLER.namespace,
      NAMESPACE_CONTROLLER.name,
    );
    expect(await rules(controller, ns).delete("FirewallZone", "dmz")).toMatchObject({ ok: true });
  });
});

describe("a rule's updates while the webhook is down", () => {
  it("one that changes only finalizers goes through; any other change is still refused", async () => {
    const ns = await harness.namespace();
    const api = rules(admin, ns);
    const zone = rule("FirewallZone", "lan", { sdewanPurpose: PURPOSE }, zoneSpec);
    expect((await api.create(zone)).ok).toBe(true);
    await gate.set("down");
    const finalizers = { finalizers: ["test.sdewan.akraino.org/hold"] };
    expect(await api.patch("FirewallZone", "lan", { metadata: finalizers })).toMatchObject({
      ok: true,
    });
    const owner = { apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: "0000" };
    for (const change of [
      { spec: { input: "REJECT" } },
      { metadata: { labels: { team: "edge" } } },
      { metadata: { annotations: { note: "x" } } },
      { metadata: { ownerReferences: [owner] } },
    ]) {
      const refused = await api.patch("FirewallZone", "lan", change);
      expect(refused.ok ? "allowed" : refused.message).toContain("failed calling webhook");
    }
    expect(
      await api.patch("FirewallZone", "lan", { metadata: { finalizers: null } }),
    ).toMatchObject({ ok: true });
  });
});

describe("what a deleted rule still needs, the finalizer holds", () => {
  it("a zone its forwarding uses on the CNF stays there, Terminating and saying why, until the forwarding goes; the webhook down throughout", async () => {
    const ns = await harness.namespace();
    const world = await SyncWorld.create(ns);
    try {
      const cnf = await world.createCnf(PURPOSE);
      for (const [kind, name] of [
        ["FirewallZone", "lan1"],
        ["FirewallZone", "wan1"],
        ["FirewallForwarding", "lan1-to-wan1"],
      ] as const) {
        await world.createSampleRule(PURPOSE, kind, name);
      }
      expect(await world.syncCnf(cnf)).toMatchObject({ kind: "done" });
      await gate.set("down");

      await world.deleteRule("FirewallZone", "lan1");
      expect(await world.reconcile("FirewallZone", "lan1")).toMatchObject({ kind: "retry" });
      const held = await world.ruleView("FirewallZone", "lan1");
      expect(held).toMatchObject({ deleting: true, condition: { reason: "StillInUse" } });
      expect(held?.message).toMatch(/^still used by FirewallForwarding lan1-to-wan1, delete it/);
      expect(world.holdings(cnf)[0]?.["firewall/zones"]).toContain("lan1");

      await world.deleteRule("FirewallForwarding", "lan1-to-wan1");
      expect(await world.reconcile("FirewallForwarding", "lan1-to-wan1")).toMatchObject({
        kind: "done",
      });
      expect(await world.reconcile("FirewallZone", "lan1")).toEqual({
        kind: "done",
        result: "deleted",
      });
      expect(await world.ruleView("FirewallZone", "lan1")).toBeUndefined();
      expect(world.holdings(cnf)[0]?.["firewall/zones"]).toEqual(["wan1"]);
    } finally {
      await world.close();
    }
  });

  it("a rule cannot start using a zone that is being deleted", async () => {
    const ns = await harness.namespace();
    const api = rules(admin, ns);
    const held = rule("FirewallZone", "lan", { sdewanPurpose: PURPOSE }, zoneSpec);
    held.metadata.finalizers = ["test.sdewan.akraino.org/hold"];
    expect((await api.create(held)).ok).toBe(true);
    expect((await api.delete("FirewallZone", "lan")).ok).toBe(true);
    const forwarding = rule(
      "FirewallForwarding",
      "fwd",
      { sdewanPurpose: PURPOSE },
      {
        src: "lan",
        dest: "lan",
      },
    );
    expect(deniedBy(await api.create(forwarding), "rule-dependencies")).toContain(
      'FirewallZone "lan" (spec.src) is being deleted',
    );
    expect((await api.patch("FirewallZone", "lan", { metadata: { finalizers: null } })).ok).toBe(
      true,
    );
  });
});

describe("a namespace of 2,000 rules on a running CNF", () => {
  const RULES = exampleRules(2000);

  it("is deleted cleanly: the webhook slow while the rules are deleted, down while the functions release them, and never called", async () => {
    const timings: Record<string, number> = {};
    const since = (from: number) => Math.round(performance.now() - from);
    const world = await SyncWorld.create();
    const ns = world.namespace;
    try {
      const cnf = await world.createCnf(PURPOSE, { pods: 2 });
      // Every other rule in a bucket: the namespace controller deletes those without the webhook too.
      let started = performance.now();
      const limit = pLimit(16);
      await Promise.all(
        RULES.map((r, i) =>
          limit(() =>
            world.createRule(r.kind, r.name, PURPOSE, r.spec, i % 2 ? { [BUCKET]: "app" } : {}),
          ),
        ),
      );
      timings["create"] = since(started);
      started = performance.now();
      expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: "2000 created" });
      timings["apply"] = since(started);
      const held = (c: Record<string, string[]>) =>
        Object.values(c).reduce((n, names) => n + names.length, 0);
      expect(world.holdings(cnf).map(held)).toEqual([2000, 2000]);

      await harness.cover(ns);
      await gate.set(slow);
      const connections = gate.connections;
      started = performance.now();
      await core.deleteNamespace({ name: ns });
      const controller = new NamespaceController({
        ...endpoint(),
        token: await harness.serviceAccountToken(
          NAMESPACE_CONTROLLER.namespace,
          NAMESPACE_CONTROLLER.name,
        ),
      });
      // The rules first: their CNF still runs (its pods' grace period outlasts the cleanup).
      const ruleResources = ALL_RULE_KINDS.map((e) => ({
        group: RULE_GROUP,
        version: RULE_VERSION,
        plural: e.plural,
      }));
      const first = await controller.deleteContent(ns, ruleResources);
      timings["deleteRules"] = since(started);
      expect(first.errors).toEqual([]);
      expect(first.remaining).toHaveLength(2000); // each held by its finalizer

      await gate.set("down");
      let step = performance.now();
      expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: "2000 deleted" });
      timings["cleanup"] = since(step);
      expect(world.holdings(cnf).map(held)).toEqual([0, 0]);

      step = performance.now();
      const rest = await controller.deleteContent(ns, await controller.resources());
      expect(rest).toEqual({ errors: [], remaining: [] });
      await controller.finalize(ns);
      timings["rest"] = since(step);
      timings["total"] = since(started);
      const gone = await core.readNamespace({ name: ns }).then(
        () => false,
        () => true,
      );
      expect(gone).toBe(true);
      // Not one request waited for the webhook while it was slow.
      expect(gate.connections - connections).toBe(0);
      console.log(`2,000-rule namespace deleted: ${JSON.stringify(timings)} ms`);
    } finally {
      await world.close();
    }
  });
});
