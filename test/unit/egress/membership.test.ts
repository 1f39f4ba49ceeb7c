import {
  compileAppliedTo,
  computeMembers,
  podExclusion,
  type AppliedTo,
  type CompiledAppliedTo,
  type PodSnapshot,
} from "../../../shared/egress/membership.js";
import { namespaces, pod } from "./fixtures.js";

function compiled(appliedTo: AppliedTo): CompiledAppliedTo {
  const result = compileAppliedTo(appliedTo);
  if (!result.ok) throw new Error(JSON.stringify(result.errors));
  return result.appliedTo;
}

const cluster = namespaces({ prod: { env: "prod" }, dev: { env: "dev" }, other: {} });
const pods: PodSnapshot[] = [
  pod("prod", "web", { app: "web" }),
  pod("prod", "db", { app: "db" }),
  pod("dev", "web", { app: "web" }),
  pod("other", "web", { app: "web" }),
  // A Pod whose Namespace is not known (yet): matches no non-empty namespaceSelector.
  pod("ghost", "web", { app: "web" }),
];

const names = (appliedTo: AppliedTo): string[] =>
  computeMembers(compiled(appliedTo), pods, cluster).map((m) => `${m.pod.namespace}/${m.pod.name}`);

describe("Egress appliedTo selects Pods as antrea-controller does", () => {
  it.each<[string, AppliedTo, string[]]>([
    ["appliedTo: {} selects nothing", {}, []],
    ["both selectors null selects nothing", { podSelector: null, namespaceSelector: null }, []],
    [
      "podSelector app=web alone selects app=web Pods in every Namespace",
      { podSelector: { matchLabels: { app: "web" } } },
      ["dev/web", "ghost/web", "other/web", "prod/web"],
    ],
    [
      "podSelector {} alone selects every Pod",
      { podSelector: {} },
      ["dev/web", "ghost/web", "other/web", "prod/db", "prod/web"],
    ],
    [
      "namespaceSelector env=prod alone selects every Pod of prod",
      { namespaceSelector: { matchLabels: { env: "prod" } } },
      ["prod/db", "prod/web"],
    ],
    [
      "namespaceSelector {} alone selects every Pod of every Namespace, known or not",
      { namespaceSelector: {} },
      ["dev/web", "ghost/web", "other/web", "prod/db", "prod/web"],
    ],
    [
      "namespaceSelector env NotIn (prod) selects Pods of dev and of the unlabelled Namespace, not of unknown ones",
      {
        namespaceSelector: {
          matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }],
        },
      },
      ["dev/web", "other/web"],
    ],
    [
      "namespaceSelector env DoesNotExist selects Pods of the unlabelled Namespace only",
      { namespaceSelector: { matchExpressions: [{ key: "env", operator: "DoesNotExist" }] } },
      ["other/web"],
    ],
    [
      "podSelector app=web AND namespaceSelector env=prod selects prod/web only",
      {
        podSelector: { matchLabels: { app: "web" } },
        namespaceSelector: { matchLabels: { env: "prod" } },
      },
      ["prod/web"],
    ],
    [
      "podSelector app In (web,db) AND namespaceSelector env Exists selects labelled Namespaces only",
      {
        podSelector: { matchExpressions: [{ key: "app", operator: "In", values: ["web", "db"] }] },
        namespaceSelector: { matchExpressions: [{ key: "env", operator: "Exists" }] },
      },
      ["dev/web", "prod/db", "prod/web"],
    ],
    ["podSelector app=none selects nothing", { podSelector: { matchLabels: { app: "none" } } }, []],
  ])("%s -> %j", (_title, appliedTo, expected) => {
    expect(names(appliedTo)).toEqual(expected);
  });
});

describe("Pods that can never be Egress members", () => {
  it.each<[string, Partial<PodSnapshot>, string | null]>([
    ["a running scheduled Pod is eligible", {}, null],
    ["a Pod without spec.nodeName is NotScheduled", { nodeName: "" }, "NotScheduled"],
    ["a hostNetwork Pod is HostNetwork", { hostNetwork: true }, "HostNetwork"],
    ["a Succeeded Pod is Terminated", { phase: "Succeeded" }, "Terminated"],
    ["a Failed Pod is Terminated", { phase: "Failed" }, "Terminated"],
    ["a Pending but scheduled Pod is eligible", { phase: "Pending" }, null],
    ["a Pod with unknown phase is eligible", { phase: "" }, null],
    ["a Pod without an IP is eligible", { ips: [] }, null],
  ])("%s -> %s", (_title, overrides, expected) => {
    expect(podExclusion(pod("ns", "p", {}, overrides))).toBe(expected);
  });

  it("drops excluded Pods from the members and keeps the one without an IP", () => {
    const candidates = [
      pod("a", "pending-unscheduled", {}, { nodeName: "", phase: "Pending" }),
      pod("a", "host", {}, { hostNetwork: true }),
      pod("a", "done", {}, { phase: "Succeeded" }),
      pod("a", "crashed", {}, { phase: "Failed" }),
      pod("a", "no-ip", {}, { phase: "Pending", ips: [] }),
      pod("a", "running", {}, { nodeName: "node-2", ips: ["10.0.0.7", "fd00::7"] }),
    ];
    expect(computeMembers(compiled({ podSelector: {} }), candidates, new Map())).toEqual([
      { pod: { name: "no-ip", namespace: "a" }, nodeName: "node-1", ips: [] },
      {
        pod: { name: "running", namespace: "a" },
        nodeName: "node-2",
        ips: ["10.0.0.7", "fd00::7"],
      },
    ]);
  });
});

describe("member list shape", () => {
  it("sorts members by namespace then name in code-point order and ignores duplicate candidates", () => {
    const candidates = [pod("b", "a"), pod("a", "z"), pod("a", "B"), pod("a", "a"), pod("a", "z")];
    const members = computeMembers(compiled({ podSelector: {} }), candidates, new Map());
    expect(members.map((m) => `${m.pod.namespace}/${m.pod.name}`)).toEqual([
      "a/B",
      "a/a",
      "a/z",
      "b/a",
    ]);
  });
});

describe("appliedTo validation", () => {
  it.each<[string, AppliedTo, string[]]>([
    [
      "invalid podSelector operator is reported under spec.appliedTo.podSelector",
      { podSelector: { matchExpressions: [{ key: "app", operator: "Is", values: ["a"] }] } },
      ["spec.appliedTo.podSelector.matchExpressions[0].operator"],
    ],
    [
      "errors of both selectors are reported together",
      {
        podSelector: { matchExpressions: [{ key: "app", operator: "In", values: [] }] },
        namespaceSelector: { matchLabels: { "bad key": "x" } },
      },
      [
        "spec.appliedTo.podSelector.matchExpressions[0].values",
        "spec.appliedTo.namespaceSelector.matchLabels.bad key",
      ],
    ],
  ])("%s", (_title, appliedTo, paths) => {
    const result = compileAppliedTo(appliedTo);
    expect(result.ok ? [] : result.errors.map((e) => e.path)).toEqual(paths);
  });
});
