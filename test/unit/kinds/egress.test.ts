import {
  EGRESS_GROUP_API_VERSION,
  egressGroupSchema,
  egressSchema,
  egressSpecSchema,
} from "../../../shared/kinds/index.js";

const egress = (spec: Record<string, unknown>) => ({
  apiVersion: "crd.antrea.io/v1beta1",
  kind: "Egress",
  metadata: { name: "egress-web", uid: "u-1", generation: 3 },
  spec,
});

describe("Antrea Egress schema (crd.antrea.io/v1beta1)", () => {
  it.each([
    [
      "a single egressIP",
      { appliedTo: { podSelector: { matchLabels: { app: "web" } } }, egressIP: "10.0.0.1" },
    ],
    ["an IP pool", { appliedTo: { namespaceSelector: {} }, externalIPPool: "pool-a" }],
    [
      "egressIP with its pool and bandwidth",
      {
        appliedTo: {},
        egressIP: "fd00::1",
        externalIPPool: "p",
        bandwidth: { rate: "10M", burst: "20M" },
      },
    ],
    ["the list form", { appliedTo: {}, egressIPs: ["10.0.0.1"], externalIPPools: ["p"] }],
  ])("accepts %s", (_what, spec) => {
    expect(egressSchema.safeParse(egress(spec)).success).toBe(true);
  });

  it.each([
    ["no appliedTo", { egressIP: "10.0.0.1" }, "appliedTo"],
    [
      "single and list form together",
      { appliedTo: {}, egressIP: "10.0.0.1", egressIPs: ["10.0.0.2"] },
      "exactly one of",
    ],
    ["neither an IP nor a pool", { appliedTo: {} }, "exactly one of"],
    [
      "an unknown selector operator",
      {
        appliedTo: { podSelector: { matchExpressions: [{ key: "a", operator: "Has" }] } },
        egressIP: "1.1.1.1",
      },
      "operator",
    ],
    [
      "bandwidth without burst",
      { appliedTo: {}, egressIP: "1.1.1.1", bandwidth: { rate: "1M" } },
      "burst",
    ],
  ])("rejects %s", (_what, spec, fragment) => {
    const parsed = egressSpecSchema.safeParse(spec);
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain(fragment);
  });
});

describe("EgressGroup schema (sdewan.akraino.org/v1alpha1)", () => {
  const group = {
    apiVersion: EGRESS_GROUP_API_VERSION,
    kind: "EgressGroup",
    metadata: {
      name: "egress-web",
      ownerReferences: [
        {
          apiVersion: "crd.antrea.io/v1beta1",
          kind: "Egress",
          name: "egress-web",
          uid: "u-1",
          controller: true,
        },
      ],
    },
    status: {
      members: [
        { pod: { name: "web-1", namespace: "shop" }, nodeName: "node-a", ips: ["10.244.1.5"] },
        { pod: { name: "web-2", namespace: "shop" }, ips: [] },
      ],
      memberCount: 2,
      observedEgressGeneration: 3,
      conditions: [
        {
          type: "Ready",
          status: "True",
          reason: "MembersComputed",
          message: "2 members",
          lastTransitionTime: "2026-01-01T00:00:00Z",
          observedGeneration: 3,
        },
      ],
    },
  };

  it("accepts a computed group with its owner reference", () => {
    expect(egressGroupSchema.parse(group)).toEqual(group);
  });

  it.each([
    [
      "a member without a pod namespace",
      { ...group.status, members: [{ pod: { name: "a" }, ips: [] }] },
      "namespace",
    ],
    ["a negative memberCount", { ...group.status, memberCount: -1 }, "memberCount"],
    [
      "a member without ips",
      { ...group.status, members: [{ pod: { name: "a", namespace: "b" } }] },
      "ips",
    ],
  ])("rejects %s", (_what, status, fragment) => {
    const parsed = egressGroupSchema.safeParse({ ...group, status });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error?.issues)).toContain(fragment);
  });
});
