// shared/kube against the run's real kube-apiserver: typed reads, status patches, real 409s, and
// finalizer changes that lose nothing under concurrent writers.
import { requireKind } from "../../shared/kinds/index.js";
import {
  DEPLOYMENTS,
  EGRESS_GROUPS,
  KubeError,
  PODS,
  createKubeClient,
  ruleResource,
  type KubeClient,
} from "../../shared/kube/index.js";
import { apiRequest } from "../../dev/control-plane/api.js";
import { adminKubeConfig, endpoint, newNamespace } from "./support/cluster.js";

const MWAN3_POLICY = requireKind("Mwan3Policy");
const POLICIES = ruleResource(MWAN3_POLICY);

const policy = (namespace: string, name: string) => ({
  metadata: { name, namespace, labels: { sdewanPurpose: "cnf-1" } },
  spec: { members: [{ network: "ovn-net1", metric: 2, weight: 2 }] },
});

let kube: KubeClient;
let namespace: string;

beforeEach(async () => {
  kube = createKubeClient(adminKubeConfig());
  namespace = await newNamespace("kube");
});

describe("typed reads and writes", () => {
  it("get is undefined for a missing object, the validated object once it exists", async () => {
    expect(await kube.get(POLICIES, { namespace, name: "balance1" })).toBeUndefined();
    await kube.create(POLICIES, policy(namespace, "balance1"));
    const read = await kube.get(POLICIES, { namespace, name: "balance1" });
    expect(read).toMatchObject({
      apiVersion: "batch.sdewan.akraino.org/v1alpha1",
      kind: "Mwan3Policy",
      metadata: { name: "balance1", namespace, labels: { sdewanPurpose: "cnf-1" } },
    });
  });

  it("list honours a label selector; built-in list items get apiVersion and kind", async () => {
    const pod = (name: string, purpose: string) => ({
      metadata: { name, namespace, labels: { sdewanPurpose: purpose } },
      spec: { containers: [{ name: "cnf", image: "openwrt:sdewan" }] },
    });
    await kube.create(PODS, pod("cnf-a", "base"));
    await kube.create(PODS, pod("cnf-b", "other"));
    const pods = await kube.list(PODS, { namespace, labelSelector: { sdewanPurpose: "base" } });
    expect(pods.map((p) => [p.apiVersion, p.kind, p.metadata.name])).toEqual([
      ["v1", "Pod", "cnf-a"],
    ]);
  });

  it("Deployments (apps group) are read as plain JSON and validated", async () => {
    await kube.create(DEPLOYMENTS, {
      metadata: { name: "cnf", namespace, labels: { sdewanPurpose: "base" } },
      spec: {
        selector: { matchLabels: { app: "cnf" } },
        template: {
          metadata: { labels: { app: "cnf" } },
          spec: { containers: [{ name: "cnf", image: "openwrt:sdewan" }] },
        },
      },
    });
    const [deployment] = await kube.list(DEPLOYMENTS, {
      namespace,
      labelSelector: "sdewanPurpose=base",
    });
    expect(deployment?.spec.selector.matchLabels).toEqual({ app: "cnf" });
    expect(typeof deployment?.metadata.creationTimestamp).toBe("string");
  });

  it("a Pod's status is set through the status subresource (tests stand in for the kubelet)", async () => {
    await kube.create(PODS, {
      metadata: { name: "cnf-0", namespace },
      spec: { containers: [{ name: "cnf", image: "openwrt:sdewan" }] },
    });
    await kube.patchStatus(
      PODS,
      { namespace, name: "cnf-0" },
      {
        podIP: "127.0.0.11",
        conditions: [{ type: "Ready", status: "True" }],
      },
    );
    const pod = await kube.get(PODS, { namespace, name: "cnf-0" });
    expect(pod?.status?.podIP).toBe("127.0.0.11");
  });

  it("EgressGroups (cluster-scoped) are created, replaced and deleted", async () => {
    const name = `eg-${namespace}`;
    const created = await kube.create(EGRESS_GROUPS, {
      metadata: { name },
      status: { members: [], memberCount: 0 },
    });
    await kube.replace(EGRESS_GROUPS, {
      ...created,
      status: { members: [{ pod: { name: "p", namespace }, ips: ["100.64.0.1"] }], memberCount: 1 },
    });
    expect((await kube.get(EGRESS_GROUPS, { name }))?.status).toMatchObject({ memberCount: 1 });
    expect(await kube.delete(EGRESS_GROUPS, { name })).toBe(true);
    expect(await kube.delete(EGRESS_GROUPS, { name })).toBe(false);
  });

  it("reads leave out managedFields, and a replace from such a read keeps them on the server", async () => {
    await kube.create(POLICIES, policy(namespace, "balance1"));
    const read = await kube.get(POLICIES, { namespace, name: "balance1" });
    const [listed] = await kube.list(POLICIES, { namespace });
    expect(read?.metadata).not.toHaveProperty("managedFields");
    expect(listed?.metadata).not.toHaveProperty("managedFields");
    if (read === undefined) throw new Error("not created");
    await kube.replace(POLICIES, { ...read, metadata: { ...read.metadata, labels: { a: "b" } } });
    const path = `/apis/batch.sdewan.akraino.org/v1alpha1/namespaces/${namespace}/mwan3policies/balance1`;
    const onServer = JSON.parse((await apiRequest(endpoint(), path)).body) as {
      metadata: { labels?: object; managedFields?: { operation: string }[] };
    };
    expect(onServer.metadata.labels).toEqual({ a: "b" });
    expect(onServer.metadata.managedFields?.map((f) => f.operation)).toContain("Update");
    expect(onServer.metadata.managedFields?.length).toBeGreaterThan(0);
  });

  it("every request counts into the event's CallCounters", async () => {
    const calls = { api: 0, cnf: 0 };
    const counted = kube.withCalls(calls);
    await counted.get(POLICIES, { namespace, name: "absent" });
    await counted.list(POLICIES, { namespace });
    expect(calls).toEqual({ api: 2, cnf: 0 });
  });
});

describe("status patches", () => {
  it("merge-patch the status subresource and leave the spec alone", async () => {
    await kube.create(POLICIES, policy(namespace, "p1"));
    const patched = await kube.patchStatus(
      POLICIES,
      { namespace, name: "p1" },
      {
        inSync: false,
        message: "waiting for the CNF",
      },
    );
    expect(patched.status).toMatchObject({ inSync: false, message: "waiting for the CNF" });
    expect(patched.spec).toEqual({ members: [{ network: "ovn-net1", metric: 2, weight: 2 }] });
  });

  it("with a stale resourceVersion the API answers 409, as KubeError conflict", async () => {
    const created = await kube.create(POLICIES, policy(namespace, "p1"));
    await kube.mergePatch(
      POLICIES,
      { namespace, name: "p1" },
      { metadata: { labels: { touched: "yes" } } },
    );
    const attempt = kube.patchStatus(
      POLICIES,
      { namespace, name: "p1" },
      { inSync: true },
      {
        resourceVersion: created.metadata.resourceVersion ?? "",
      },
    );
    await expect(attempt).rejects.toMatchObject({
      code: "conflict",
      status: 409,
      reason: "Conflict",
    });
    await expect(attempt).rejects.toBeInstanceOf(KubeError);
  });

  it("a patch of a missing object is KubeError notFound", async () => {
    await expect(
      kube.patchStatus(POLICIES, { namespace, name: "ghost" }, { inSync: true }),
    ).rejects.toMatchObject({
      code: "notFound",
      status: 404,
    });
  });
});

describe("finalizers under concurrent writers", () => {
  const WRITERS = 8;
  const finalizerOf = (index: number) => `test.sdewan.akraino.org/writer-${index}`;

  it("every writer's finalizer lands, through real 409s and re-reads", async () => {
    await kube.create(POLICIES, policy(namespace, "contended"));
    const key = { namespace, name: "contended" };
    const counters = Array.from({ length: WRITERS }, () => ({ api: 0, cnf: 0 }));
    const results = await Promise.all(
      counters.map((calls, index) =>
        createKubeClient(adminKubeConfig(), { calls }).addFinalizer(
          POLICIES,
          key,
          finalizerOf(index),
        ),
      ),
    );
    expect(results).toEqual(Array(WRITERS).fill("added"));
    const finalizers = (await kube.get(POLICIES, key))?.metadata.finalizers ?? [];
    expect([...finalizers].sort()).toEqual(counters.map((_, index) => finalizerOf(index)).sort());
    // One read and one write each without contention; more means a 409 was met and retried.
    const requests = counters.reduce((sum, calls) => sum + calls.api, 0);
    expect(requests).toBeGreaterThan(2 * WRITERS);
  });

  it("adding twice is a no-op; removing keeps the other writers' finalizers", async () => {
    await kube.create(POLICIES, policy(namespace, "p1"));
    const key = { namespace, name: "p1" };
    expect(await kube.addFinalizer(POLICIES, key, MWAN3_POLICY.finalizer)).toBe("added");
    expect(await kube.addFinalizer(POLICIES, key, MWAN3_POLICY.finalizer)).toBe("alreadyPresent");
    expect(await kube.addFinalizer(POLICIES, key, finalizerOf(1))).toBe("added");
    expect(await kube.removeFinalizer(POLICIES, key, MWAN3_POLICY.finalizer)).toBe("removed");
    expect(await kube.removeFinalizer(POLICIES, key, MWAN3_POLICY.finalizer)).toBe("alreadyAbsent");
    expect((await kube.get(POLICIES, key))?.metadata.finalizers).toEqual([finalizerOf(1)]);
  });

  it("from metadata the caller read: one request, and a stale read falls back to re-reading", async () => {
    const created = await kube.create(POLICIES, policy(namespace, "known"));
    const key = { namespace, name: "known" };
    const read = { resourceVersion: created.metadata.resourceVersion ?? "", finalizers: [] };
    const calls = { api: 0, cnf: 0 };
    const counted = createKubeClient(adminKubeConfig(), { calls });
    expect(await counted.addFinalizer(POLICIES, key, finalizerOf(0), read)).toBe("added");
    expect(calls.api).toBe(1);

    // `read` is stale now: the patch meets a 409, and the re-read keeps writer 0's finalizer.
    expect(await counted.addFinalizer(POLICIES, key, finalizerOf(1), read)).toBe("added");
    expect(calls.api).toBeGreaterThan(2);
    expect((await kube.get(POLICIES, key))?.metadata.finalizers).toEqual([
      finalizerOf(0),
      finalizerOf(1),
    ]);
  });

  it("concurrent removals on a deleted object let it go only when the last finalizer is gone", async () => {
    await kube.create(POLICIES, policy(namespace, "doomed"));
    const key = { namespace, name: "doomed" };
    for (let index = 0; index < WRITERS; index += 1) {
      await kube.addFinalizer(POLICIES, key, finalizerOf(index));
    }
    await kube.delete(POLICIES, key);
    expect((await kube.get(POLICIES, key))?.metadata.deletionTimestamp).toEqual(expect.any(String));

    const results = await Promise.all(
      Array.from({ length: WRITERS }, (_, index) =>
        createKubeClient(adminKubeConfig()).removeFinalizer(POLICIES, key, finalizerOf(index)),
      ),
    );
    expect(results).toEqual(Array(WRITERS).fill("removed"));
    expect(await kube.get(POLICIES, key)).toBeUndefined();
    expect(await kube.removeFinalizer(POLICIES, key, finalizerOf(0))).toBe("gone");
  });
});
