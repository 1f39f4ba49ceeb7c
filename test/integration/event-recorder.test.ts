// shared/kube's Event recorder against the real API server: a repeat raises the Event's series
// count, costs one request when this process wrote the Event last, and loses no count when
// another writer counted in between.
import { createKubeClient, EVENTS, eventName, kubeEventRecorder } from "../../shared/kube/index.js";
import type { CallCounters } from "../../shared/core/context.js";
import { adminKubeConfig, newNamespace } from "./support/cluster.js";

describe("a repeated Event", () => {
  it("is one PATCH of its series count while this process wrote it last; a count written elsewhere is re-read, not lost", async () => {
    const namespace = await newNamespace("event-recorder");
    const requests: CallCounters = { api: 0, cnf: 0 };
    const kube = createKubeClient(adminKubeConfig(), { calls: requests });
    const recorder = kubeEventRecorder(kube, {
      controller: "sdewan.akraino.org/test",
      instance: "t",
    });
    const event = {
      regarding: { apiVersion: "v1", kind: "ConfigMap", namespace, name: "cm1", uid: "u-1" },
      type: "Warning" as const,
      reason: "Failed",
      action: "Sync",
      note: "the same failure",
    };
    const key = { namespace, name: eventName(event) };
    const admin = createKubeClient(adminKubeConfig());
    const count = async () =>
      ((await admin.get(EVENTS, key)) as { series?: { count?: number } } | undefined)?.series
        ?.count ?? 1;

    await recorder.record(event);
    expect(requests.api).toBe(1); // create
    await recorder.record(event);
    await recorder.record(event);
    expect(requests.api).toBe(3); // + one patch each
    expect(await count()).toBe(3);

    // Another replica counts once: our next patch is refused (409), re-reads and counts on.
    const current = await admin.get(EVENTS, key);
    await admin.mergePatch(EVENTS, key, {
      metadata: { resourceVersion: current?.metadata.resourceVersion },
      series: { count: 4, lastObservedTime: "2026-11-25T12:00:00.000000Z" },
    });
    requests.api = 0;
    await recorder.record(event);
    expect(requests.api).toBe(3); // refused patch, read, patch
    expect(await count()).toBe(5);
  });
});
