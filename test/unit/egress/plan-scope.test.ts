import type { IntakeEvent, ObjectRef } from "../../../shared/events/types.js";
import {
  planNamespaceQuery,
  planPodQueries,
  planRecompute,
  triggerFromEvent,
  type GroupListing,
  type RecomputeObservation,
  type RecomputeTrigger,
} from "../../../shared/egress/plan-scope.js";
import type { EgressSnapshot } from "../../../shared/egress/plan-group.js";
import { egress, namespaces } from "./fixtures.js";

/** Pod events are planned by plan-pod-event.ts. */
type PlannedTrigger = Exclude<RecomputeTrigger, { kind: "pod" }>;

const objectEvent = (
  ref: Partial<ObjectRef>,
  action: "add" | "update" | "delete" = "update",
): IntakeEvent => ({
  type: "object",
  id: "e1",
  action,
  ref: { apiVersion: "", kind: "", namespace: "", name: "", ...ref },
});

describe("triggerFromEvent", () => {
  it.each<[string, IntakeEvent, unknown]>([
    [
      "v1 Pod update -> pod trigger",
      objectEvent({ apiVersion: "v1", kind: "Pod", namespace: "a", name: "p" }),
      { kind: "pod", namespace: "a", name: "p" },
    ],
    [
      "Pod delete -> pod trigger (deletes are re-read like the rest)",
      objectEvent({ apiVersion: "v1", kind: "Pod", namespace: "a", name: "p" }, "delete"),
      { kind: "pod", namespace: "a", name: "p" },
    ],
    [
      "v1 Namespace add -> namespace trigger",
      objectEvent({ apiVersion: "v1", kind: "Namespace", name: "a" }, "add"),
      { kind: "namespace", name: "a" },
    ],
    [
      "crd.antrea.io/v1beta1 Egress -> egress trigger",
      objectEvent({ apiVersion: "crd.antrea.io/v1beta1", kind: "Egress", name: "eg" }),
      { kind: "egress", name: "eg" },
    ],
    [
      "plain ref without apiVersion -> accepted by kind",
      objectEvent({ kind: "Egress", name: "eg" }),
      { kind: "egress", name: "eg" },
    ],
    [
      "resync (any scope) -> full resync",
      { type: "resync", id: "r", scope: { namespace: "a" } },
      { kind: "resync" },
    ],
  ])("%s", (_title, event, trigger) => {
    expect(triggerFromEvent(event)).toEqual({ ok: true, trigger });
  });

  it.each<[string, IntakeEvent, string]>([
    [
      "apps/v1 Deployment -> UnknownKind",
      objectEvent({ apiVersion: "apps/v1", kind: "Deployment", namespace: "a", name: "d" }),
      "UnknownKind",
    ],
    [
      "Egress of another group -> UnknownKind",
      objectEvent({ apiVersion: "example.com/v1", kind: "Egress", name: "e" }),
      "UnknownKind",
    ],
    [
      "Pod with a non-core apiVersion -> UnknownKind",
      objectEvent({ apiVersion: "apps/v1", kind: "Pod", namespace: "a", name: "p" }),
      "UnknownKind",
    ],
    [
      "Pod without namespace -> MissingName",
      objectEvent({ apiVersion: "v1", kind: "Pod", name: "p" }),
      "MissingName",
    ],
    [
      "Namespace without name -> MissingName",
      objectEvent({ apiVersion: "v1", kind: "Namespace" }),
      "MissingName",
    ],
  ])("%s", (_title, event, code) => {
    expect(triggerFromEvent(event)).toMatchObject({ ok: false, code });
  });
});

const webEverywhere = egress("web-everywhere", { podSelector: { matchLabels: { app: "web" } } });
const prodAll = egress("prod-all", { namespaceSelector: { matchLabels: { env: "prod" } } });
const allNamespaces = egress("all-namespaces", { namespaceSelector: {} });
const dbOnly = egress("db-only", { podSelector: { matchLabels: { app: "db" } } });
const broken = egress("broken", {
  podSelector: { matchExpressions: [{ key: "app", operator: "Bogus" }] },
});
const egresses = [webEverywhere, prodAll, allNamespaces, dbOnly, broken];

const listing = (name: string, ...pods: string[]): GroupListing => ({
  name,
  members: pods.map((key) => {
    const [namespace = "", podName = ""] = key.split("/");
    return { pod: { namespace, name: podName } };
  }),
});

const cluster = namespaces({ prod: { env: "prod" }, dev: { env: "dev" } });

describe("planRecompute: which groups an event recomputes", () => {
  it.each<[string, PlannedTrigger, Partial<RecomputeObservation>, string[]]>([
    [
      "Namespace event -> every Egress with a namespaceSelector, plus groups listing its Pods",
      { kind: "namespace", name: "dev" },
      { groups: [listing("web-everywhere", "dev/w"), listing("db-only", "prod/d")] },
      ["all-namespaces", "prod-all", "web-everywhere"],
    ],
    [
      "Egress event -> that group, whether or not the Egress still exists",
      { kind: "egress", name: "gone" },
      {},
      ["gone"],
    ],
    [
      "resync -> every Egress (the broken one too) and every orphan group",
      { kind: "resync" },
      { groups: [listing("orphan"), listing("db-only")] },
      ["all-namespaces", "broken", "db-only", "orphan", "prod-all", "web-everywhere"],
    ],
  ])("%s -> %j", (_title, trigger, observed, expected) => {
    const plan = planRecompute(trigger, { egresses, groups: [], ...observed });
    expect(plan.map((g) => g.name)).toEqual(expected);
  });

  it("says why each group is recomputed", () => {
    const plan = planRecompute(
      { kind: "namespace", name: "prod" },
      { egresses: [prodAll], groups: [listing("prod-all", "prod/w")] },
    );
    expect(plan).toEqual([
      { name: "prod-all", reasons: ["selects namespaces", "lists a pod of the namespace"] },
    ]);
  });

  it("gives the same set for duplicate and reordered inputs", () => {
    const groups = [listing("db-only", "prod/w"), listing("web-everywhere", "dev/w")];
    const trigger: PlannedTrigger = { kind: "namespace", name: "prod" };
    const forward = planRecompute(trigger, { egresses, groups }).map((g) => g.name);
    const reversed = planRecompute(trigger, {
      egresses: [...egresses, ...egresses].reverse(),
      groups: [...groups, ...groups].reverse(),
    }).map((g) => g.name);
    expect(reversed).toEqual(forward);
  });
});

describe("planNamespaceQuery / planPodQueries: pushing selectors to the API server", () => {
  const many = namespaces(
    Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`team-${i}`, { env: "prod" }])),
  );

  it.each<[string, EgressSnapshot[], unknown]>([
    ["podSelector-only Egresses need no Namespace list", [webEverywhere, dbOnly], null],
    ["namespaceSelector {} needs no Namespace list", [allNamespaces], null],
    ["appliedTo: {} needs no Namespace list", [egress("none", {})], null],
    [
      "one namespaceSelector -> list with its query",
      [prodAll],
      { namespace: "", labelSelector: "env=prod" },
    ],
    [
      "two different namespaceSelectors -> list all Namespaces",
      [prodAll, egress("dev", { namespaceSelector: { matchLabels: { env: "dev" } } })],
      { namespace: "", labelSelector: "" },
    ],
    ["invalid selectors are skipped", [broken], null],
  ])("%s", (_title, list, expected) => {
    expect(planNamespaceQuery(list)).toEqual(expected);
  });

  it.each<[string, EgressSnapshot[], ReadonlyMap<string, Record<string, string>>, unknown[]]>([
    [
      "podSelector only -> one cluster-wide list with its query",
      [webEverywhere],
      new Map(),
      [{ namespace: "", labelSelector: "app=web" }],
    ],
    [
      "two Egresses with the same podSelector -> one list",
      [webEverywhere, egress("web-2", { podSelector: { matchLabels: { app: "web" } } })],
      new Map(),
      [{ namespace: "", labelSelector: "app=web" }],
    ],
    [
      "namespaceSelector matching one Namespace -> list that Namespace only",
      [prodAll],
      cluster,
      [{ namespace: "prod", labelSelector: "" }],
    ],
    [
      "both selectors, few Namespaces -> per-Namespace lists with the pod query",
      [
        egress("both", {
          podSelector: { matchLabels: { app: "web" } },
          namespaceSelector: { matchLabels: { env: "prod" } },
        }),
      ],
      cluster,
      [{ namespace: "prod", labelSelector: "app=web" }],
    ],
    [
      "namespaceSelector matching many Namespaces -> one cluster-wide list",
      [prodAll],
      many,
      [{ namespace: "", labelSelector: "" }],
    ],
    [
      "namespaceSelector matching no Namespace -> no list",
      [prodAll],
      namespaces({ dev: { env: "dev" } }),
      [],
    ],
    ["appliedTo: {} -> no list", [egress("none", {})], new Map(), []],
    [
      "an Egress selecting every Pod subsumes the others",
      [webEverywhere, allNamespaces],
      new Map(),
      [{ namespace: "", labelSelector: "" }],
    ],
    [
      "more distinct lists than the budget -> one list of every Pod",
      Array.from({ length: 9 }, (_, i) =>
        egress(`e${i}`, { podSelector: { matchLabels: { app: `a${i}` } } }),
      ),
      new Map(),
      [{ namespace: "", labelSelector: "" }],
    ],
    [
      "NotIn and DoesNotExist are pushed down too",
      [
        egress("neg", {
          podSelector: {
            matchExpressions: [
              { key: "app", operator: "NotIn", values: ["db"] },
              { key: "legacy", operator: "DoesNotExist" },
            ],
          },
        }),
      ],
      new Map(),
      [{ namespace: "", labelSelector: "app notin (db),!legacy" }],
    ],
  ])("%s", (_title, list, observedNamespaces, expected) => {
    expect(planPodQueries(list, observedNamespaces)).toEqual(expected);
  });
});
