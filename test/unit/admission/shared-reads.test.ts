/**
 * Reviews arriving together share a watch-cache read in flight (kube-reader.ts), and nothing
 * else: a consistent read is always the review's own, and a read that has answered is never
 * handed to a later review.
 */
import { kubeAdmissionReader, ruleKinds } from "../../../shared/admission/index.js";
import type { KubeClient } from "../../../shared/kube/index.js";

interface PendingGet {
  readonly resourceVersion: string | undefined;
  answer(object: object | undefined): void;
}

/** A KubeClient whose gets wait until the test answers them. */
function heldGets(): { kube: KubeClient; gets: PendingGet[] } {
  const gets: PendingGet[] = [];
  const get = (_type: unknown, _key: unknown, options?: { resourceVersion?: string }) =>
    new Promise((resolve) => {
      gets.push({ resourceVersion: options?.resourceVersion, answer: resolve });
    });
  return { kube: { get } as unknown as KubeClient, gets };
}

const policy = ruleKinds.find("Mwan3Policy");
const object = {
  metadata: { name: "balance1", namespace: "ns", labels: { sdewanPurpose: "cnf-a" } },
  spec: { members: [] },
};

describe("the admission reader shares watch-cache reads in flight", () => {
  if (policy === undefined) throw new Error("no Mwan3Policy view");

  it("reviews reading the same object from the watch cache at once send one request", async () => {
    const { kube, gets } = heldGets();
    const readers = [kubeAdmissionReader(kube), kubeAdmissionReader(kube)];
    const answers = readers.map((r) => r.getRule(policy, "ns", "balance1", "cached"));
    expect(gets).toHaveLength(1);
    expect(gets[0]?.resourceVersion).toBe("0");
    gets[0]?.answer(object);
    const [a, b] = await Promise.all(answers);
    expect(a).toEqual(expect.objectContaining({ name: "balance1", purpose: "cnf-a" }));
    expect(b).toEqual(a);
  });

  it("a read that has answered is not reused: the next review reads again", async () => {
    const { kube, gets } = heldGets();
    const reader = kubeAdmissionReader(kube);
    const first = reader.getRule(policy, "ns", "balance1", "cached");
    gets[0]?.answer(undefined);
    expect(await first).toBeNull();
    const second = reader.getRule(policy, "ns", "balance1", "cached");
    expect(gets).toHaveLength(2);
    gets[1]?.answer(object);
    expect(await second).toEqual(expect.objectContaining({ name: "balance1" }));
  });

  it("consistent reads (before a denial) and other objects are never shared", async () => {
    const { kube, gets } = heldGets();
    const reader = kubeAdmissionReader(kube);
    const reads = [
      reader.getRule(policy, "ns", "balance1", "consistent"),
      reader.getRule(policy, "ns", "balance1", "consistent"),
      reader.getRule(policy, "ns", "balance2", "cached"),
      reader.getRule(policy, "other", "balance1", "cached"),
    ];
    expect(gets.map((g) => g.resourceVersion)).toEqual([undefined, undefined, "0", "0"]);
    for (const g of gets) g.answer(object);
    await Promise.all(reads);
  });

  it("clients of different identities never share a read", async () => {
    const one = heldGets();
    const other = heldGets();
    const reads = [
      kubeAdmissionReader(one.kube).getRule(policy, "ns", "balance1", "cached"),
      kubeAdmissionReader(other.kube).getRule(policy, "ns", "balance1", "cached"),
    ];
    expect(one.gets).toHaveLength(1);
    expect(other.gets).toHaveLength(1);
    one.gets[0]?.answer(object);
    other.gets[0]?.answer(undefined);
    const [a, b] = await Promise.all(reads);
    expect(a).not.toBeNull();
    expect(b).toBeNull();
  });
});
