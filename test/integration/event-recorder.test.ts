// shared/kube's Event recorder against the real API server: a repeat raises the Event's series
// count with one request, never a read before it where this process can know the count; every
// writer (function, pod, process) keeps a series of its own; a count written by someone else is
// re-read, not lost; and one object gets a bounded number of Events from one process.
import {
  createKubeClient,
  EVENTS,
  kubeEventRecorder,
  OBJECT_BURST,
  OBJECT_REFILL_MS,
  processEvents,
} from "../../shared/kube/index.js";
import type { EventRecord, EventRecorder } from "../../shared/kube/index.js";
import type { CallCounters } from "../../shared/core/context.js";
import type { KubeObject } from "../../shared/core/objects.js";
import { intercepting } from "./support/acting-before.js";
import { adminKubeConfig, newNamespace } from "./support/cluster.js";

const admin = createKubeClient(adminKubeConfig());

interface Recorded {
  readonly name: string;
  readonly resourceVersion: string | undefined;
  readonly note: string;
  readonly controller: string;
  readonly count: number;
}

/** The Events about `uid` in `namespace`, as stored. */
async function eventsAbout(namespace: string, uid: string): Promise<Recorded[]> {
  const events = await admin.list(EVENTS, {
    namespace,
    fieldSelector: `regarding.uid=${uid}`,
  });
  return events.map((e) => {
    const raw = e as KubeObject & {
      note?: string;
      reportingController?: string;
      series?: { count?: number };
    };
    return {
      name: raw.metadata.name,
      resourceVersion: raw.metadata.resourceVersion,
      note: raw.note ?? "",
      controller: raw.reportingController ?? "",
      count: raw.series?.count ?? 1,
    };
  });
}

/** A recorder whose API requests (Event writes and reads) are counted in `requests.api`. */
function countedRecorder(
  controller: string,
  requests: CallCounters,
  calls?: CallCounters,
  now?: () => Date,
): EventRecorder {
  const kube = createKubeClient(adminKubeConfig(), { calls: requests });
  return kubeEventRecorder(kube, {
    controller: `sdewan.akraino.org/${controller}`,
    instance: "pod-1",
    ...(calls === undefined ? {} : { calls }),
    ...(now === undefined ? {} : { now }),
  });
}

function failure(namespace: string, uid: string, note = "the same failure"): EventRecord {
  return {
    regarding: { apiVersion: "v1", kind: "ConfigMap", namespace, name: "cm1", uid },
    type: "Warning",
    reason: "Failed",
    action: "Sync",
    note,
  };
}

describe("a repeated Event", () => {
  it("is one PATCH of its series count while this process wrote it last; a count written elsewhere is re-read, not lost", async () => {
    const namespace = await newNamespace("event-recorder");
    const requests: CallCounters = { api: 0, cnf: 0 };
    const recorder = countedRecorder("test", requests);
    const event = failure(namespace, "u-1");

    await recorder.record(event);
    expect(requests.api).toBe(1); // create
    await recorder.record(event);
    await recorder.record(event);
    expect(requests.api).toBe(3); // + one patch each
    const [written] = await eventsAbout(namespace, "u-1");
    expect(written?.count).toBe(3);

    // Someone else counts once: our next patch is refused (409), re-reads and counts on.
    const key = { namespace, name: written?.name ?? "" };
    await admin.mergePatch(EVENTS, key, {
      metadata: { resourceVersion: written?.resourceVersion },
      series: { count: 4, lastObservedTime: "2026-11-25T12:00:00.000000Z" },
    });
    requests.api = 0;
    await recorder.record(event);
    expect(requests.api).toBe(3); // refused patch, read, patch
    expect((await eventsAbout(namespace, "u-1")).map((e) => e.count)).toEqual([5]);
  });

  it("recorded by two functions: each writes its own Event with one create, and neither reads the other's", async () => {
    const namespace = await newNamespace("event-recorder");
    const requests: CallCounters = { api: 0, cnf: 0 };
    const event = failure(namespace, "u-2");

    await countedRecorder("reconcile-rule", requests).record(event);
    await countedRecorder("on-deployment-ready", requests).record(event);

    expect(requests.api).toBe(2);
    const events = await eventsAbout(namespace, "u-2");
    expect(events.map((e) => `${e.controller} x${e.count}`).sort()).toEqual([
      "sdewan.akraino.org/on-deployment-ready x1",
      "sdewan.akraino.org/reconcile-rule x1",
    ]);
  });

  it("recorded ten times at once: one create and nine patches, and its count says 10", async () => {
    const namespace = await newNamespace("event-recorder");
    const requests: CallCounters = { api: 0, cnf: 0 };
    const calls: CallCounters = { api: 0, cnf: 0 };
    const recorder = countedRecorder("test", requests, calls);
    const event = failure(namespace, "u-3");

    await Promise.all(Array.from({ length: 10 }, () => recorder.record(event)));

    expect(calls.eventsRecorded).toBe(10);
    expect(requests.api).toBe(10);
    expect((await eventsAbout(namespace, "u-3")).map((e) => e.count)).toEqual([10]);
  });
});

describe("a write of an Event that hangs", () => {
  it("holds back the repeats behind it only until their deadline: they are dropped, and never written late", async () => {
    const namespace = await newNamespace("event-recorder");
    const calls: CallCounters = { api: 0, cnf: 0 };
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let writes = 0;
    // The first Event write answers only once released; the others at once.
    const kube = intercepting(admin, ["create", "mergePatch"], async (_, args, call) => {
      writes += 1;
      if (writes === 1) await held;
      return call();
    });
    const recorder = kubeEventRecorder(kube, {
      controller: "sdewan.akraino.org/test",
      instance: "pod-1",
      calls,
      deadlineMs: 200,
    });
    const event = failure(namespace, "u-8");

    await Promise.all([recorder.record(event), recorder.record(event)]);
    expect(calls).toMatchObject({ eventsDropped: 2 });
    release();
    // A third record is written after the first (and after the second's turn, which it skips).
    await recorder.record(event);

    expect(calls).toMatchObject({ eventsRecorded: 1, eventsDropped: 2 });
    expect(writes).toBe(2); // the held create, then the third's patch
    expect((await eventsAbout(namespace, "u-8")).map((e) => e.count)).toEqual([2]);
  });
});

describe("a function process that restarts (same pod)", () => {
  it("starts series of its own: an occurrence its previous process counted is one create, never a read", async () => {
    const namespace = await newNamespace("event-recorder");
    const requests: CallCounters = { api: 0, cnf: 0 };
    const calls: CallCounters = { api: 0, cnf: 0 };
    const event = failure(namespace, "u-6");
    await countedRecorder("test", requests).record(event);
    await countedRecorder("test", requests).record(event);

    processEvents.restart();
    requests.api = 0;
    const recorder = countedRecorder("test", requests, calls);
    await recorder.record(event);
    await recorder.record(event);

    expect(requests.api).toBe(2); // a create, then a patch
    expect(calls).toMatchObject({ eventsRecorded: 2, eventRequests: 2 });
    expect((await eventsAbout(namespace, "u-6")).map((e) => e.count).sort()).toEqual([2, 2]);
  });
});

describe("Events on one object, from one process", () => {
  it("at most 25 different ones in a burst: the rest are counted as limited, and repeats of those written still count", async () => {
    const namespace = await newNamespace("event-recorder");
    const requests: CallCounters = { api: 0, cnf: 0 };
    const calls: CallCounters = { api: 0, cnf: 0 };
    const recorder = countedRecorder("test", requests, calls);

    for (let i = 0; i < 30; i += 1)
      await recorder.record(failure(namespace, "u-4", `failure ${i}`));
    await recorder.record(failure(namespace, "u-4", "failure 0"));
    // Another object is not held back by the first one's storm.
    await recorder.record(failure(namespace, "u-5"));

    expect(calls).toMatchObject({ eventsRecorded: 27, eventsLimited: 5 });
    expect(requests.api).toBe(27);
    const events = await eventsAbout(namespace, "u-4");
    expect(events).toHaveLength(25);
    expect(events.find((e) => e.note === "failure 0")?.count).toBe(2);
    expect(await eventsAbout(namespace, "u-5")).toHaveLength(1);
  });

  it(`one more new Event every ${OBJECT_REFILL_MS / 60_000} minutes once the burst is spent`, async () => {
    const namespace = await newNamespace("event-recorder");
    const requests: CallCounters = { api: 0, cnf: 0 };
    const calls: CallCounters = { api: 0, cnf: 0 };
    let now = Date.parse("2026-11-25T12:00:00Z");
    const recorder = countedRecorder("test", requests, calls, () => new Date(now));
    const record = (i: number) => recorder.record(failure(namespace, "u-7", `failure ${i}`));

    for (let i = 0; i < OBJECT_BURST + 1; i += 1) await record(i);
    now += OBJECT_REFILL_MS - 1;
    await record(100);
    now += 1;
    await record(101);
    await record(102);

    expect(calls).toMatchObject({ eventsRecorded: OBJECT_BURST + 1, eventsLimited: 3 });
    expect((await eventsAbout(namespace, "u-7")).map((e) => e.note)).toContain("failure 101");
  });
});
