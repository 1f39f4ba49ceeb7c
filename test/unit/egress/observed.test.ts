import {
  egressSnapshotFromObject,
  namespaceSnapshotFromObject,
  podSnapshotFromObject,
} from "../../../shared/egress/observed.js";

const meta = { name: "web-1", namespace: "prod", labels: { app: "web" } };

describe("Pod objects become membership facts", () => {
  it.each<
    [
      string,
      Record<string, unknown>,
      { nodeName: string; hostNetwork: boolean; phase: string; ips: string[] },
    ]
  >([
    [
      "a bare Pod without spec or status -> unscheduled, no phase, no IPs",
      { metadata: meta },
      { nodeName: "", hostNetwork: false, phase: "", ips: [] },
    ],
    [
      "status.podIPs wins over podIP and keeps its order",
      {
        metadata: meta,
        spec: { nodeName: "n1" },
        status: {
          phase: "Running",
          podIP: "10.0.0.1",
          podIPs: [{ ip: "10.0.0.1" }, { ip: "fd00::1" }],
        },
      },
      { nodeName: "n1", hostNetwork: false, phase: "Running", ips: ["10.0.0.1", "fd00::1"] },
    ],
    [
      "only status.podIP -> one IP",
      { metadata: meta, spec: { nodeName: "n1" }, status: { phase: "Running", podIP: "10.0.0.2" } },
      { nodeName: "n1", hostNetwork: false, phase: "Running", ips: ["10.0.0.2"] },
    ],
    [
      "empty podIPs list falls back to podIP",
      { metadata: meta, spec: { nodeName: "n1" }, status: { podIP: "10.0.0.3", podIPs: [] } },
      { nodeName: "n1", hostNetwork: false, phase: "", ips: ["10.0.0.3"] },
    ],
    [
      "podIP '' and null fields -> no IPs",
      {
        metadata: meta,
        spec: { nodeName: null, hostNetwork: null },
        status: { podIP: "", podIPs: null },
      },
      { nodeName: "", hostNetwork: false, phase: "", ips: [] },
    ],
    [
      "hostNetwork: true is kept",
      {
        metadata: meta,
        spec: { nodeName: "n1", hostNetwork: true },
        status: { podIP: "192.168.1.5" },
      },
      { nodeName: "n1", hostNetwork: true, phase: "", ips: ["192.168.1.5"] },
    ],
  ])("%s", (_title, object, expected) => {
    expect(podSnapshotFromObject(object)).toEqual({
      name: "web-1",
      namespace: "prod",
      labels: { app: "web" },
      ...expected,
    });
  });

  it("treats absent and null labels as no labels", () => {
    expect(podSnapshotFromObject({ metadata: { name: "a", namespace: "b" } }).labels).toEqual({});
    expect(
      podSnapshotFromObject({ metadata: { name: "a", namespace: "b", labels: null } }).labels,
    ).toEqual({});
  });

  it("rejects a Pod object without a namespace", () => {
    expect(() => podSnapshotFromObject({ metadata: { name: "a" } })).toThrow();
  });
});

describe("Namespace objects become labels by name", () => {
  it("reads name and labels, absent labels as none", () => {
    expect(
      namespaceSnapshotFromObject({ metadata: { name: "prod", labels: { env: "prod" } } }),
    ).toEqual({
      name: "prod",
      labels: { env: "prod" },
    });
    expect(namespaceSnapshotFromObject({ metadata: { name: "dev" } })).toEqual({
      name: "dev",
      labels: {},
    });
  });
});

describe("Egress objects become the facts their group depends on", () => {
  const metadata = { name: "eg", uid: "u-1", generation: 4 };

  it("reads name, uid, generation and appliedTo, ignoring the IP fields", () => {
    const appliedTo = { podSelector: { matchLabels: { app: "web" } }, namespaceSelector: {} };
    expect(
      egressSnapshotFromObject({ metadata, spec: { appliedTo, egressIP: "10.1.1.1" }, status: {} }),
    ).toEqual({ name: "eg", uid: "u-1", generation: 4, appliedTo });
  });

  it("keeps an unknown operator so the planner can report it as InvalidSelector", () => {
    const appliedTo = { podSelector: { matchExpressions: [{ key: "a", operator: "Bogus" }] } };
    expect(egressSnapshotFromObject({ metadata, spec: { appliedTo } }).appliedTo).toEqual(
      appliedTo,
    );
  });

  it("treats a missing appliedTo as appliedTo: {} (selects nothing)", () => {
    expect(egressSnapshotFromObject({ metadata, spec: {} }).appliedTo).toEqual({});
  });

  it.each<[string, unknown]>([
    ["no uid", { metadata: { name: "eg" }, spec: {} }],
    ["no spec", { metadata }],
    [
      "matchLabels with a number value",
      { metadata, spec: { appliedTo: { podSelector: { matchLabels: { a: 1 } } } } },
    ],
  ])("rejects an Egress with %s", (_title, object) => {
    expect(() => egressSnapshotFromObject(object)).toThrow();
  });
});
