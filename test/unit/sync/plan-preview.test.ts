import type { KubeObject } from "../../../shared/core/objects.js";
import { RULE_API_VERSION } from "../../../shared/kinds/index.js";
import type { CnfObservation } from "../../../shared/sync/observed.js";
import { parseRuleObject } from "../../../shared/sync/observed.js";
import {
  cnfRequestsOf,
  planBurstRestarts,
  planPreview,
  ruleAfterApply,
  ruleAfterDelete,
  type PodReading,
  type PreviewInput,
} from "../../../shared/sync/plan-preview.js";
import type { HeldObject, PodHoldings } from "../../../shared/sync/plan-writes.js";

const SCOPE = { namespace: "ns", purpose: "cnf-a" };
const NETWORKS = new Map([
  ["ovn-net1", "net1"],
  ["ovn-net2", "net2"],
]);
const FOUND: CnfObservation = {
  situation: { kind: "found", deployment: "cnf-a", readyPods: 2, expectedPods: 2 },
  deployment: undefined,
  pods: {
    ready: [
      { name: "pod-a", ip: "127.0.0.2" },
      { name: "pod-b", ip: "127.0.0.3" },
    ],
    expected: 2,
  },
  networks: NETWORKS,
};

const POLICY = {
  members: [
    { network: "ovn-net1", metric: 2, weight: 2 },
    { network: "ovn-net2", metric: 3, weight: 3 },
  ],
};
/** The policy as the CNF holds it (the registry's conversion of POLICY). */
const HELD_POLICY: HeldObject = {
  name: "balance_1",
  members: [
    { interface: "net1", metric: "2", weight: "2" },
    { interface: "net2", metric: "3", weight: "3" },
  ],
};

/** A rule CR as the functions read it: in sync at `generation` unless `fresh`. */
function rule(
  kind: string,
  name: string,
  spec: object,
  options: { generation?: number; deleting?: boolean; fresh?: boolean } = {},
): KubeObject {
  const generation = options.generation ?? 1;
  return {
    apiVersion: RULE_API_VERSION,
    kind,
    metadata: {
      name,
      namespace: "ns",
      generation,
      labels: { sdewanPurpose: "cnf-a" },
      finalizers: ["x"],
      ...(options.deleting ? { deletionTimestamp: "2026-11-27T00:00:00Z" } : {}),
    },
    spec,
    ...(options.fresh ? {} : { status: { observedGeneration: generation, inSync: true } }),
  };
}

function held(objects: Record<string, HeldObject[]>): PodHoldings {
  return new Map(Object.entries(objects).map(([c, o]) => [c, new Map(o.map((x) => [x.name, x]))]));
}

const both = (holdings: PodHoldings): PodReading[] => [
  { pod: "pod-a", ok: true, holdings },
  { pod: "pod-b", ok: true, holdings },
];

function input(over: Partial<PreviewInput> & Pick<PreviewInput, "rules">): PreviewInput {
  return {
    scope: SCOPE,
    observation: FOUND,
    pods: both(held({})),
    others: [],
    ...over,
    rules: over.rules,
  };
}

describe("planPreview: what reconcile-rule would do on each pod", () => {
  it.each([
    ["absent on the pod: a create (PUT, an upsert)", held({}), "create", ["PUT"], []],
    [
      "held with other members: an update of the fields that differ",
      held({ "mwan3/policies": [{ ...HELD_POLICY, members: [] }] }),
      "update",
      ["PUT"],
      ["members"],
    ],
  ])("%s", (_title, holdings, change, methods, fields) => {
    const plan = planPreview(
      input({
        rules: [parseRuleObject(rule("Mwan3Policy", "balance-1", POLICY, { fresh: true }))],
        pods: both(holdings),
      }),
    );
    for (const step of plan.rules[0]?.pods ?? []) {
      expect(step).toMatchObject({ change, fields, restart: "mwan3" });
      if ("requests" in step) expect(step.requests.map((r) => r.method)).toEqual(methods);
    }
  });

  it("held as desired by a rule in sync: no change and no restart", () => {
    const plan = planPreview(
      input({
        rules: [parseRuleObject(rule("Mwan3Policy", "balance-1", POLICY))],
        pods: both(held({ "mwan3/policies": [HELD_POLICY] })),
      }),
    );
    expect(plan.rules[0]?.pods).toEqual([
      { pod: "pod-a", change: "none", restart: null },
      { pod: "pod-b", change: "none", restart: null },
    ]);
    expect(plan.pods.map((p) => p.requests)).toEqual([[], []]);
  });

  it("held as desired by a new generation: the restart is owed though nothing is written", () => {
    const changed = rule("Mwan3Policy", "balance-1", POLICY, { generation: 2 });
    const plan = planPreview(
      input({
        rules: [parseRuleObject({ ...changed, status: { observedGeneration: 1 } })],
        pods: both(held({ "mwan3/policies": [HELD_POLICY] })),
      }),
    );
    expect(plan.rules[0]?.pods[0]).toEqual({ pod: "pod-a", change: "none", restart: "mwan3" });
  });

  it("a collection without PUT: a create is a POST, an update a DELETE then a POST", () => {
    expect(
      cnfRequestsOf(
        { op: "create", collection: "service/services", objectName: "s" },
        "delete-then-create",
      ),
    ).toEqual([{ method: "POST", collection: "service/services", name: "s" }]);
    expect(
      cnfRequestsOf(
        { op: "recreate", collection: "service/services", objectName: "s" },
        "delete-then-create",
      ).map((r) => r.method),
    ).toEqual(["DELETE", "POST"]);
  });

  it("a pod that could not be read is named with why; the other is planned", () => {
    const plan = planPreview(
      input({
        rules: [parseRuleObject(rule("Mwan3Policy", "balance-1", POLICY, { fresh: true }))],
        pods: [
          { pod: "pod-a", ok: true, holdings: held({}) },
          { pod: "pod-b", ok: false, reason: "unreachable (ECONNREFUSED)" },
        ],
      }),
    );
    expect(plan.rules[0]?.pods.map((p) => p.change)).toEqual(["create", "unknown"]);
    expect(plan.pods[1]).toEqual({
      pod: "pod-b",
      requests: undefined,
      unknown: "unreachable (ECONNREFUSED)",
    });
  });

  it("names the rules that use a changed policy, leaving out those the change deletes", () => {
    const users = ["r1", "r2", "r3"].map((name) =>
      parseRuleObject(rule("Mwan3Rule", name, { policy: "balance-1", proto: "tcp" })),
    );
    const plan = planPreview(
      input({
        rules: [
          parseRuleObject(rule("Mwan3Policy", "balance-1", POLICY, { fresh: true })),
          parseRuleObject(
            rule("Mwan3Rule", "r3", { policy: "balance-1", proto: "tcp" }, { deleting: true }),
          ),
        ],
        others: users,
      }),
    );
    expect(plan.rules.find((r) => r.kind === "Mwan3Policy")?.dependents).toEqual([
      "Mwan3Rule r1",
      "Mwan3Rule r2",
    ]);
  });

  it("a deleted policy still in use: the CNF refuses its DELETE, so no restart follows", () => {
    const plan = planPreview(
      input({
        rules: [parseRuleObject(rule("Mwan3Policy", "balance-1", POLICY, { deleting: true }))],
        pods: both(held({ "mwan3/policies": [HELD_POLICY] })),
        others: [parseRuleObject(rule("Mwan3Rule", "r1", { policy: "balance-1" }))],
      }),
    );
    expect(plan.rules[0]?.pods[0]).toMatchObject({
      change: "delete",
      restart: null,
      refusedWhileUsedBy: ["Mwan3Rule r1"],
    });
  });

  it("lists rules as the functions apply them: applies by rank, then deletes referrers first", () => {
    const plan = planPreview(
      input({
        rules: [
          parseRuleObject(rule("FirewallRule", "fr", { src: "lan" }, { deleting: true })),
          parseRuleObject(rule("Mwan3Rule", "r1", { policy: "balance-1" }, { fresh: true })),
          parseRuleObject(rule("FirewallZone", "lan", { network: [] }, { deleting: true })),
          parseRuleObject(rule("Mwan3Policy", "balance-1", POLICY, { fresh: true })),
        ],
      }),
    );
    expect(plan.rules.map((r) => `${r.action} ${r.kind}`)).toEqual([
      "apply Mwan3Policy",
      "apply Mwan3Rule",
      "delete FirewallRule",
      "delete FirewallZone",
    ]);
  });

  it.each([
    [
      "no CNF of the purpose",
      { ...FOUND, situation: { kind: "none" as const, ...SCOPE } },
      "NoCnf",
    ],
    ["no ready pod", { ...FOUND, pods: { ready: [], expected: 2 } }, "NoReadyPod"],
  ])("%s: nothing is written, and the plan says why", (_title, observation, code) => {
    const plan = planPreview(
      input({
        rules: [parseRuleObject(rule("Mwan3Policy", "balance-1", POLICY, { fresh: true }))],
        observation,
        pods: [],
      }),
    );
    expect(plan.rules[0]).toMatchObject({ problem: { code }, pods: [] });
  });

  it("a spec the CNF cannot take: the functions' own reason, nothing written", () => {
    const plan = planPreview(
      input({
        rules: [
          parseRuleObject(
            rule(
              "Mwan3Policy",
              "balance-1",
              { members: [{ network: "nowhere", metric: 1, weight: 1 }] },
              { fresh: true },
            ),
          ),
        ],
      }),
    );
    expect(plan.rules[0]?.problem?.code).toBe("NetworkNotMapped");
    expect(plan.pods.map((p) => p.requests)).toEqual([[], []]);
  });

  it("only key material from an unread Secret differs: the update is marked unsure", () => {
    const site = {
      remote: "10.0.0.1",
      authentication_method: "psk",
      pre_shared_key_secret_ref: { name: "keys", key: "psk" },
      crypto_proposal: ["p1"],
      connections: [
        { name: "c1", conn_type: "tunnel", mode: "start", local_subnet: "172.16.0.0/24" },
      ],
    };
    const heldSite: HeldObject = {
      name: "site1",
      gateway: "10.0.0.1",
      authentication_method: "psk",
      pre_shared_key: "a-key-the-preview-never-read",
      crypto_proposal: ["p1"],
      connections: [
        { name: "c1", conn_type: "tunnel", mode: "start", local_subnet: "172.16.0.0/24" },
      ],
    };
    const plan = planPreview(
      input({
        rules: [parseRuleObject(rule("IpsecSite", "site1", site, { fresh: true }))],
        pods: both(held({ "ipsec/remotes": [heldSite] })),
        keysUnread: new Map([
          ["IpsecSite/site1", { fields: ["pre_shared_key"], secrets: ["keys"] }],
        ]),
      }),
    );
    expect(plan.rules[0]?.pods[0]).toMatchObject({
      change: "update",
      fields: ["pre_shared_key"],
      unsure: "the key from Secret keys was not read: the CNF may hold it already",
    });
  });
});

describe("planBurstRestarts: the restarts a change costs each pod as one burst", () => {
  const zones = (n: number) =>
    Array.from({ length: n }, (_, i) =>
      parseRuleObject(rule("FirewallZone", `z${i}`, { network: ["ovn-net1"] }, { fresh: true })),
    );
  const restarts = async (n: number, minIntervalMs: number) =>
    (
      await planBurstRestarts(planPreview(input({ rules: zones(n) })), {
        minIntervalMs,
        quietMs: 1000,
      })
    ).pods.map((p) => p.restarts);

  it.each([
    ["one zone, shipped pacing", 1, 10_000, 1],
    [
      "60 zones, shipped pacing: once at once, once after the burst (ADR 0007 measured 2)",
      60,
      10_000,
      2,
    ],
    ["60 zones, pacing off: once per rule", 60, 0, 60],
  ])("%s", async (_title, n, minIntervalMs, expected) => {
    expect(await restarts(n, minIntervalMs)).toEqual([
      { firewall: expected },
      { firewall: expected },
    ]);
  });

  it("a rule with no service (CNFService) restarts nothing", async () => {
    const service = parseRuleObject(
      rule(
        "CNFService",
        "svc",
        { fullname: "a.b.svc.cluster.local", port: "80", dport: "8080" },
        { fresh: true },
      ),
    );
    const plan = await planBurstRestarts(planPreview(input({ rules: [service] })), {
      minIntervalMs: 0,
      quietMs: 1000,
    });
    expect(plan.pods.map((p) => p.restarts)).toEqual([{}, {}]);
  });
});

describe("the rule as the API server stores it after the change", () => {
  const file = rule("Mwan3Policy", "balance-1", POLICY);
  const live = { ...file, metadata: { ...file.metadata, generation: 4, uid: "u1" } };

  it("kubectl apply of a new rule: generation 1, no status, no finalizer", () => {
    const after = ruleAfterApply(file, undefined);
    expect(after).toMatchObject({ stored: { metadata: { generation: 1 } } });
    if ("stored" in after) {
      expect(after.stored.status).toBeUndefined();
      expect(after.stored.metadata.finalizers).toBeUndefined();
    }
  });

  it("a changed spec bumps the generation; a new annotation does not", () => {
    const changed = { ...file, spec: { members: [] } };
    expect(ruleAfterApply(changed, live)).toMatchObject({
      stored: { metadata: { generation: 5 } },
    });
    const annotated = { ...file, metadata: { ...file.metadata, annotations: { a: "b" } } };
    expect(ruleAfterApply(annotated, live)).toMatchObject({
      stored: { metadata: { generation: 4, annotations: { a: "b" } } },
    });
  });

  it("the same object again (a key left undefined counts as absent): no change, no event", () => {
    const same = { ...file, spec: { ...POLICY, last_resort: undefined } };
    expect(ruleAfterApply(same, live)).toEqual({
      skipped: "unchanged: the API server stores nothing, no function runs",
    });
  });

  it("kubectl delete of a claimed rule: Terminating, generation bumped; of an unclaimed one: gone at once", () => {
    expect(ruleAfterDelete(live, "2026-11-27T00:00:00Z")).toMatchObject({
      stored: { metadata: { generation: 5, deletionTimestamp: "2026-11-27T00:00:00Z" } },
    });
    const unclaimed = { ...live, metadata: { ...live.metadata, finalizers: [] } };
    expect(ruleAfterDelete(unclaimed, "2026-11-27T00:00:00Z")).toEqual({
      skipped: "never applied (no finalizer): removed at once, no CNF request",
    });
  });
});
