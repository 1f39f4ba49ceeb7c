// Issue 17 items 1 and 5 through a real API server with validate-admission registered: the
// largest rule of each kind is created, updated, applied to a CNF and deleted; one character (or
// byte) over is refused at create time naming the field and the limit; a rule made before the
// limits, with a 560 KB field, still releases its finalizer; a finalizer the API server refuses
// shows as Stalled; bad values that reach the function without the webhook end Stalled, never inSync.
import { jest } from "@jest/globals";
import { pollUntil } from "../../dev/control-plane/api.js";
import type { Cnf } from "../../dev/world/index.js";
import { ALL_RULE_KINDS, RULE_GROUP, requireKind } from "../../shared/kinds/index.js";
import { LARGEST_NAMES, largestSpec, oneOver } from "../fixtures/largest-rules.js";
import { rule, rules } from "./admission-clients.js";
import { startAdmissionHarness, type AdmissionHarness } from "./admission-harness.js";
import { SyncWorld } from "./sync-harness.js";
import { adminKubeConfig } from "./support/cluster.js";
import { refuseWrites } from "./support/refuse-writes.js";

jest.setTimeout(120_000);

const PURPOSE = "cnf1";
const labels = { sdewanPurpose: PURPOSE };
const admin = adminKubeConfig();

let harness: AdmissionHarness;
beforeAll(async () => {
  harness = await startAdmissionHarness();
}, 60_000);
afterAll(async () => {
  await harness?.close();
});

describe("the largest rule of each kind, with the webhook registered", () => {
  let world: SyncWorld;
  let cnf: Cnf;

  beforeAll(async () => {
    world = await SyncWorld.create(await harness.namespace());
    cnf = await world.createCnf(PURPOSE, { pods: 1 });
  });
  afterAll(() => world?.close());

  it("is created, applied, updated, re-applied and deleted; one over is refused naming field and limit", async () => {
    const api = rules(admin, world.namespace);
    // Apply order: what a kind references exists before it.
    for (const entry of ALL_RULE_KINDS) {
      const over = oneOver(entry.kind);
      const refused = await api.create(
        rule(entry.kind, `${entry.singular}-over`, labels, over.spec),
      );
      expect(refused.ok).toBe(false);
      if (!refused.ok) {
        expect(refused.message).toContain(over.field);
        expect(refused.message).toContain(String(over.limit));
      }

      const name = LARGEST_NAMES[entry.kind];
      const created = await api.create(rule(entry.kind, name, labels, largestSpec(entry.kind)));
      expect(created.ok ? "created" : created.message).toBe("created");
      expect(await world.reconcile(entry.kind, name)).toEqual({ kind: "done", result: "created" });
      const held = world.heldObjects(cnf, `${entry.cnf.module}/${entry.cnf.collection}`, name);
      expect(held).toHaveLength(1);
      expect(held[0]).toBeDefined();
      expect(await world.ruleView(entry.kind, name)).toMatchObject({ inSync: true, generation: 1 });

      // An UPDATE review carries both copies of the largest object.
      const change = entry.example.change?.(1);
      const updated =
        change === undefined
          ? await api.patch(entry.kind, name, { metadata: { labels: { touched: "yes" } } })
          : await api.patch(entry.kind, name, { spec: change });
      expect(updated.ok ? "updated" : updated.message).toBe("updated");
      const expected = change === undefined ? "unchanged" : "updated";
      expect(await world.reconcile(entry.kind, name)).toEqual({ kind: "done", result: expected });
      expect(await world.ruleView(entry.kind, name)).toMatchObject({
        inSync: true,
        observedCurrent: true,
      });
    }
    // Delete order: what references a kind goes first. The finalizer release is an UPDATE too.
    for (const entry of [...ALL_RULE_KINDS].reverse()) {
      const name = LARGEST_NAMES[entry.kind];
      expect((await api.delete(entry.kind, name)).ok).toBe(true);
      expect(await world.reconcile(entry.kind, name)).toEqual({ kind: "done", result: "deleted" });
      expect(await world.readRule(entry.kind, name)).toBeUndefined();
    }
  });
});

describe("the bad values of issue 17, at admission", () => {
  const proposal = {
    encryption_algorithm: "aes128",
    hash_algorithm: "sha256",
    dh_group: "modp2048",
  };
  it.each([
    ["Mwan3Rule", "badip", { policy: "balance-1", src_ip: "999.1.1.1" }, "spec.src_ip"],
    ["Mwan3Rule", "badprefix", { policy: "balance-1", dest_ip: "10.0.0.0/99" }, "spec.dest_ip"],
    ["FirewallDNAT", "dnat-70000", { src: "wan1", dest_port: "70000" }, "spec.dest_port"],
    ["IpsecProposal", "p".repeat(251), proposal, "metadata.name"],
    [
      "IpsecHost",
      "host1",
      {
        remote: "999.1.1.1",
        authentication_method: "psk",
        pre_shared_key: "test-only-key",
        crypto_proposal: ["p1"],
        connections: [{ name: "c1", conn_type: "tunnel", mode: "start" }],
      },
      "spec.remote",
    ],
  ] as const)("%s %# is denied naming the field", async (kind, name, spec, field) => {
    const ns = await harness.namespace();
    const refused = await rules(admin, ns).create(rule(kind, name, labels, spec));
    expect(refused.ok).toBe(false);
    if (!refused.ok) expect(refused.message).toContain(field);
  });
});

describe("a rule made before the size limits", () => {
  it("of 600 KB (an UPDATE review over 1 MiB) still has its finalizer released through the webhook", async () => {
    const world = await SyncWorld.create();
    try {
      const entry = requireKind("IpsecHost");
      // Every field within its own limit (the CRD's), the whole far over the spec cap.
      const connections = Array.from({ length: 560 }, (_, i) => ({
        name: `conn${i}`,
        conn_type: "tunnel",
        mode: "start",
        local_updown: `/${"u".repeat(1023)}`,
      }));
      const spec = { ...largestSpec("IpsecHost"), connections };
      expect(JSON.stringify(spec).length).toBeGreaterThan(600 * 1024);
      // Created and claimed before the webhook covered the namespace (as before the limits).
      const legacy = rule(entry.kind, "legacy", labels, spec);
      legacy.metadata.finalizers = [entry.finalizer];
      const created = await rules(admin, world.namespace).create(legacy);
      expect(created.ok ? "created" : created.message).toBe("created");
      await harness.cover(world.namespace);

      expect((await rules(admin, world.namespace).delete(entry.kind, "legacy")).ok).toBe(true);
      expect(await world.reconcile(entry.kind, "legacy")).toMatchObject({ kind: "done" });
      expect(await world.readRule(entry.kind, "legacy")).toBeUndefined();
    } finally {
      await world.close();
    }
  });
});

const PROPOSAL = { encryption_algorithm: "aes128", hash_algorithm: "sha256", dh_group: "modp2048" };

/**
 * A ValidatingAdmissionPolicy on `world`'s namespace that refuses UPDATEs of `plural` adding
 * finalizers ("add") or removing them ("remove"), in force when this resolves (a probe was
 * refused). Returns the cleanup, which also frees the probe.
 */
async function freezeFinalizers(
  world: SyncWorld,
  plural: string,
  kind: string,
  refuse: "add" | "remove",
): Promise<() => Promise<void>> {
  const size = (o: string) => `size(${o}.metadata.?finalizers.orValue([]))`;
  const api = rules(admin, world.namespace);
  await world.createRule(kind, "probe", PURPOSE, PROPOSAL);
  // Each attempt makes the change the policy refuses, from a state where it is a change.
  let probes = 0;
  const removePolicy = await refuseWrites({
    name: `freeze-${refuse}-${world.namespace}`,
    resources: [{ apiGroups: [RULE_GROUP], resources: [plural], operations: ["UPDATE"] }],
    admits:
      refuse === "add"
        ? `${size("object")} <= ${size("oldObject")}`
        : `${size("object")} >= ${size("oldObject")}`,
    message:
      refuse === "add"
        ? "this namespace takes no new finalizers"
        : "this namespace keeps its finalizers",
    namespace: world.namespace,
    probe: async () => {
      probes += 1;
      const more = Array.from({ length: probes + 1 }, (_, i) => `example.com/probe-${i}`);
      if (refuse === "add")
        return !(await api.patch(kind, "probe", { metadata: { finalizers: more } })).ok;
      await api.patch(kind, "probe", { metadata: { finalizers: more } });
      return !(await api.patch(kind, "probe", { metadata: { finalizers: more.slice(1) } })).ok;
    },
  });
  if (refuse === "add") await api.patch(kind, "probe", { metadata: { finalizers: null } });
  return async () => {
    await removePolicy();
    // The probe keeps its finalizers until the policy is gone from the API server's cache.
    await pollUntil(
      async () =>
        (await api.patch(kind, "probe", { metadata: { finalizers: null } })).ok ? true : undefined,
      () => "the probe's finalizers to go once the policy is deleted",
      { timeoutMs: 15_000, intervalMs: 100 },
    );
  };
}

describe("a finalizer the API server refuses", () => {
  const entry = requireKind("IpsecProposal");

  it("to add: the rule shows Stalled with the API server's reason, not a silent retry loop", async () => {
    const world = await SyncWorld.create();
    let cleanup: (() => Promise<void>) | undefined;
    try {
      const cnf = await world.createCnf(PURPOSE, { pods: 1 });
      cleanup = await freezeFinalizers(world, entry.plural, entry.kind, "add");
      await world.createRule(entry.kind, "proposal1", PURPOSE, PROPOSAL);
      const outcome = await world.reconcile(entry.kind, "proposal1");
      expect(outcome).toMatchObject({ kind: "permanent", code: "FinalizerRefused" });
      const view = await world.ruleView(entry.kind, "proposal1");
      expect(view).toMatchObject({
        inSync: false,
        finalizers: [],
        condition: { type: "Stalled", reason: "FinalizerRefused" },
      });
      expect(view?.condition?.message).toContain("this namespace takes no new finalizers");
      expect(world.heldObjects(cnf, "ipsec/proposals", "proposal1")).toEqual([undefined]);
    } finally {
      await cleanup?.();
      await world.close();
    }
  });

  it("to remove: the Terminating rule shows Stalled with the reason, and finishes once it is fixed", async () => {
    const world = await SyncWorld.create();
    let cleanup: (() => Promise<void>) | undefined;
    try {
      const cnf = await world.createCnf(PURPOSE, { pods: 1 });
      await world.createRule(entry.kind, "proposal1", PURPOSE, PROPOSAL);
      expect(await world.reconcile(entry.kind, "proposal1")).toMatchObject({ kind: "done" });
      cleanup = await freezeFinalizers(world, entry.plural, entry.kind, "remove");
      await world.deleteRule(entry.kind, "proposal1");
      const outcome = await world.reconcile(entry.kind, "proposal1");
      expect(outcome).toMatchObject({ kind: "permanent", code: "FinalizerRefused" });
      const view = await world.ruleView(entry.kind, "proposal1");
      expect(view).toMatchObject({
        deleting: true,
        condition: { type: "Stalled", reason: "FinalizerRefused" },
      });
      expect(view?.condition?.message).toContain("cannot finish deleting");
      expect(view?.condition?.message).toContain("this namespace keeps its finalizers");
      // The CNF object is gone already; only the release waits.
      expect(world.heldObjects(cnf, "ipsec/proposals", "proposal1")).toEqual([undefined]);

      await cleanup();
      cleanup = undefined;
      expect(await world.reconcile(entry.kind, "proposal1")).toMatchObject({ kind: "done" });
      expect(await world.readRule(entry.kind, "proposal1")).toBeUndefined();
    } finally {
      await cleanup?.();
      await world.close();
    }
  });
});

describe("bad values that reach the function without the webhook", () => {
  let world: SyncWorld;
  beforeAll(async () => {
    world = await SyncWorld.create();
    await world.createCnf(PURPOSE, { pods: 1 });
    await world.createSampleRule(PURPOSE, "Mwan3Policy", "balance-1");
    await world.createSampleRule(PURPOSE, "FirewallZone", "lan1");
    await world.createSampleRule(PURPOSE, "FirewallZone", "wan1");
  });
  afterAll(() => world?.close());

  it.each([
    ["Mwan3Rule", "badip", { policy: "balance-1", src_ip: "999.1.1.1" }, "spec.src_ip"],
    ["Mwan3Rule", "badprefix", { policy: "balance-1", dest_ip: "10.0.0.0/99" }, "spec.dest_ip"],
    [
      "FirewallDNAT",
      "dnat-70000",
      { src: "wan1", dest: "lan1", dest_port: "70000" },
      "spec.dest_port",
    ],
    [
      "IpsecProposal",
      "p".repeat(251),
      { encryption_algorithm: "aes128", hash_algorithm: "sha256", dh_group: "modp2048" },
      "metadata.name",
    ],
  ] as const)(
    "%s %# ends Stalled naming the field, never inSync",
    async (kind, name, spec, field) => {
      await world.createRule(kind, name, PURPOSE, { ...spec });
      expect(await world.reconcile(kind, name)).toMatchObject({ kind: "permanent" });
      const view = await world.ruleView(kind, name);
      expect(view).toMatchObject({
        inSync: false,
        condition: { type: "Stalled", reason: "InvalidSpec" },
      });
      expect(view?.condition?.message).toContain(field);
    },
  );
});
