import {
  cachedViewSuffices,
  planCnfPods,
  type CachedCnfView,
  type PodView,
} from "../../../shared/sync/plan-pods.js";

const pod = (name: string, over: Partial<PodView> = {}): PodView => ({
  name,
  labels: { "pod-template-hash": "abc" },
  owners: [{ kind: "ReplicaSet", name: "cnf-abc", controller: true }],
  terminating: false,
  phase: "Running",
  podIP: `127.0.0.${name.length}`,
  ready: true,
  ...over,
});

describe("planCnfPods", () => {
  it("two ready pods of the Deployment's ReplicaSet both count", () => {
    const r = planCnfPods({ name: "cnf", replicas: 2 }, [pod("b"), pod("a")]);
    expect(r.ready.map((p) => p.name)).toEqual(["a", "b"]);
    expect(r.expected).toBe(2);
  });

  it("a rollout with an old and a new ReplicaSet keeps both pods and expects both", () => {
    const newPod = pod("new", {
      labels: { "pod-template-hash": "def" },
      owners: [{ kind: "ReplicaSet", name: "cnf-def", controller: true }],
    });
    const r = planCnfPods({ name: "cnf", replicas: 1 }, [pod("old"), newPod]);
    expect(r.ready.map((p) => p.name)).toEqual(["new", "old"]);
    expect(r.expected).toBe(2);
  });

  it.each([
    ["not Ready", { ready: false }],
    ["without an IP", { podIP: undefined }],
    ["terminating", { terminating: true }],
    ["Succeeded", { phase: "Succeeded" }],
    [
      "owned by another Deployment's ReplicaSet",
      { owners: [{ kind: "ReplicaSet", name: "other-abc", controller: true }] },
    ],
    ["without a pod-template-hash label", { labels: {} }],
  ])("a pod %s does not receive writes", (_t, over: Partial<PodView>) => {
    const r = planCnfPods({ name: "cnf", replicas: 2 }, [pod("a"), pod("b", over)]);
    expect(r.ready.map((p) => p.name)).toEqual(["a"]);
    expect(r.expected).toBe(2);
  });

  it("replicas absent means one", () => {
    expect(planCnfPods({ name: "cnf", replicas: undefined }, []).expected).toBe(1);
  });
});

describe("cachedViewSuffices", () => {
  const readyPods = (n: number) =>
    Array.from({ length: n }, (_, i) => ({ name: `p${i}`, ip: `127.0.0.${i + 1}` }));
  const view = (over: Partial<CachedCnfView> = {}): CachedCnfView => ({
    found: true,
    pods: { ready: readyPods(2), expected: 2 },
    networksReadable: true,
    ...over,
  });

  it("a CNF found with every expected pod ready is acted on as read", () => {
    expect(cachedViewSuffices(view())).toBe(true);
  });

  it.each([
    ["no CNF Deployment (or several)", { found: false }],
    ["fewer ready pods than expected", { pods: { ready: readyPods(1), expected: 2 } }],
    ["no ready pod at all", { pods: { ready: [], expected: 0 } }],
    ["an unreadable network annotation", { networksReadable: false }],
  ])("%s is read again, consistently", (_t, over: Partial<CachedCnfView>) => {
    expect(cachedViewSuffices(view(over))).toBe(false);
  });
});
