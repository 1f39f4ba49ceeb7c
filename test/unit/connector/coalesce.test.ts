import { coalesce, eventKey, type PendingEvent } from "../../../connector/pending-event.js";
import type { WatchAction } from "../../../shared/events/types.js";

const ref = { apiVersion: "v1", kind: "Pod", namespace: "ns1", name: "p1" };
type ObjectEvent = Extract<PendingEvent, { ref: unknown }>;
const ev = (action: WatchAction, id: string): ObjectEvent => ({ route: "r", action, ref, id });
const resync = (id: string): PendingEvent => ({ route: "r", action: "resync", id });

describe("coalesce: a newer event for the same object merges into the queued one", () => {
  it.each<[WatchAction, WatchAction, WatchAction | "both kept"]>([
    ["add", "update", "add"],
    ["add", "add", "add"],
    ["update", "update", "update"],
    ["update", "add", "add"],
    ["add", "delete", "delete"],
    ["update", "delete", "delete"],
    ["delete", "delete", "delete"],
    ["delete", "add", "both kept"],
    ["delete", "update", "both kept"],
  ])("queued %s + incoming %s -> %s", (queued, incoming, expected) => {
    const merged = coalesce(ev(queued, "old"), ev(incoming, "new"));
    if (expected === "both kept") {
      expect(merged).toBeUndefined();
    } else {
      expect(merged).toEqual(ev(expected, "new"));
    }
  });

  it("keeps the newer object in Resource mode", () => {
    const older = { ...ev("add", "1"), object: { metadata: { name: "p1", resourceVersion: "1" } } };
    const newer = {
      ...ev("update", "2"),
      object: { metadata: { name: "p1", resourceVersion: "2" } },
    };
    expect(coalesce(older, newer)).toEqual({ ...newer, action: "add" });
  });

  it("collapses repeated resyncs of a route into one", () => {
    expect(coalesce(resync("a"), resync("b"))).toEqual(resync("b"));
  });
});

describe("eventKey", () => {
  it("separates routes, kinds and namespaces of the same name", () => {
    const keys = new Set([
      eventKey(ev("add", "1")),
      eventKey({ ...ev("add", "1"), route: "other" }),
      eventKey({ ...ev("add", "1"), ref: { ...ref, kind: "Service" } }),
      eventKey({ ...ev("add", "1"), ref: { ...ref, namespace: "ns2" } }),
      eventKey(resync("1")),
    ]);
    expect(keys.size).toBe(5);
  });
});
