import type { ObjectRef } from "../../../shared/events/types.js";
import {
  cnfObjectKind,
  planObjectWork,
  planResyncWork,
  planScopeGroups,
} from "../../../shared/sync/plan-scope.js";

const ref = (kind: string, apiVersion = ""): ObjectRef => ({
  apiVersion,
  kind,
  namespace: "ns1",
  name: "x",
});

describe("which kinds on-deployment-ready takes", () => {
  it.each([
    ["Deployment", "apps/v1", true],
    ["Deployment", "", true],
    ["Pod", "v1", true],
    ["Pod", "", true],
    ["Deployment", "extensions/v1beta1", false],
    ["Mwan3Rule", "batch.sdewan.akraino.org/v1alpha1", false],
    ["ReplicaSet", "apps/v1", false],
  ])("%s %s -> %s", (kind, apiVersion, ok) => {
    const result = cnfObjectKind(ref(kind, apiVersion));
    expect(result.ok).toBe(ok);
    if (!result.ok) expect(result.work).toMatchObject({ kind: "malformed", code: "UnknownKind" });
  });

  it("a Deployment without a namespace is malformed", () => {
    expect(cnfObjectKind({ ...ref("Deployment"), namespace: "" })).toMatchObject({
      ok: false,
      work: { kind: "malformed", code: "MissingNamespace" },
    });
  });
});

describe("planObjectWork: an object event -> the CNF it concerns", () => {
  const deployment = ref("Deployment", "apps/v1");

  it.each([
    [
      "a live object with the purpose label -> that CNF",
      { liveLabels: { sdewanPurpose: "cnf1" } },
      { kind: "cnf", scope: { namespace: "ns1", purpose: "cnf1" } },
    ],
    [
      "a live object without the label -> skip",
      { liveLabels: { app: "web" } },
      { kind: "skip", reason: "Deployment ns1/x has no sdewanPurpose" },
    ],
    [
      "gone, Resource mode object with the label -> that CNF",
      { eventObject: { metadata: { labels: { sdewanPurpose: "cnf1" } } } },
      { kind: "cnf", scope: { namespace: "ns1", purpose: "cnf1" } },
    ],
    [
      "gone, Resource mode object without the label -> skip",
      { eventObject: { metadata: { name: "x" } } },
      { kind: "skip", reason: "Deployment ns1/x is gone and had no sdewanPurpose" },
    ],
    ["gone, Reference mode -> the whole namespace", {}, { kind: "namespace", namespace: "ns1" }],
    [
      "the live labels win over the event's (the event is only a hint)",
      {
        liveLabels: { sdewanPurpose: "now" },
        eventObject: { metadata: { labels: { sdewanPurpose: "then" } } },
      },
      { kind: "cnf", scope: { namespace: "ns1", purpose: "now" } },
    ],
  ])("%s", (_title, input, work) => {
    expect(planObjectWork({ ref: deployment, liveLabels: undefined, ...input })).toEqual(work);
  });
});

describe("planResyncWork: a resync scope -> work", () => {
  it.each([
    [{}, { kind: "all" }],
    [{ namespace: "ns1" }, { kind: "namespace", namespace: "ns1" }],
    [
      { namespace: "ns1", purpose: "cnf-1.a_b" },
      { kind: "cnf", scope: { namespace: "ns1", purpose: "cnf-1.a_b" } },
    ],
  ])("%j -> %j", (scope, work) => {
    expect(planResyncWork(scope)).toEqual(work);
  });

  it.each([
    [{ namespace: "NS1" }],
    [{ namespace: "ns_1" }],
    [{ namespace: "a".repeat(64) }],
    [{ namespace: "ns1", purpose: "-x" }],
    [{ namespace: "ns1", purpose: "has space" }],
    [{ purpose: "cnf1" }],
  ])("%j -> malformed (400)", (scope) => {
    expect(planResyncWork(scope)).toMatchObject({ kind: "malformed", code: "BadResyncScope" });
  });
});

describe("planScopeGroups: every (namespace, purpose) a resync visits", () => {
  it("CNFs without rules, rules without CNFs and unlabelled rules each get a group, sorted", () => {
    const groups = planScopeGroups(
      [
        { namespace: "b", purpose: "cnf1" },
        { namespace: "a", purpose: "empty" },
      ],
      [
        { namespace: "b", purpose: "cnf1", rule: "r1" },
        { namespace: "b", purpose: "cnf1", rule: "r2" },
        { namespace: "a", purpose: "ghost", rule: "r3" },
        { namespace: "a", purpose: undefined, rule: "r4" },
      ],
    );
    expect(groups).toEqual([
      { scope: { namespace: "a", purpose: "" }, labelled: false, rules: ["r4"] },
      { scope: { namespace: "a", purpose: "empty" }, labelled: true, rules: [] },
      { scope: { namespace: "a", purpose: "ghost" }, labelled: true, rules: ["r3"] },
      { scope: { namespace: "b", purpose: "cnf1" }, labelled: true, rules: ["r1", "r2"] },
    ]);
  });
});
