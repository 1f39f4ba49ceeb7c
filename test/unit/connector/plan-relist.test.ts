import type { KubeObject } from "../../../connector/kube-api.js";
import {
  applyWatchEvent,
  planRelist,
  type KnownObject,
  type ObservedChange,
} from "../../../connector/plan-relist.js";

const obj = (name: string, uid: string, rv: string, namespace = "ns"): KubeObject => ({
  metadata: { name, namespace, uid, resourceVersion: rv },
});

const summary = (changes: ObservedChange[]) =>
  changes.map((c) => `${c.action} ${c.namespace}/${c.name}`);

const knownFrom = (...objects: KubeObject[]): Map<string, KnownObject> =>
  planRelist(new Map(), objects, false).known;

describe("planRelist", () => {
  it("first list: every existing object becomes an add (what ApiServerSource never sends)", () => {
    const plan = planRelist(new Map(), [obj("a", "1", "10"), obj("b", "2", "11")], false);
    expect(summary(plan.changes)).toEqual(["add ns/a", "add ns/b"]);
    expect([...plan.known.keys()]).toEqual(["ns/a", "ns/b"]);
  });

  it("re-list: only what changed while the watch was away", () => {
    const known = knownFrom(
      obj("same", "1", "10"),
      obj("changed", "2", "11"),
      obj("gone", "3", "12"),
    );
    const plan = planRelist(
      known,
      [obj("same", "1", "10"), obj("changed", "2", "20"), obj("new", "4", "21")],
      false,
    );
    expect(summary(plan.changes)).toEqual(["update ns/changed", "add ns/new", "delete ns/gone"]);
    expect([...plan.known.keys()].sort()).toEqual(["ns/changed", "ns/new", "ns/same"]);
  });

  it("a name re-created with a new uid is a delete of the old object and an add of the new", () => {
    const plan = planRelist(knownFrom(obj("a", "old", "10")), [obj("a", "new", "30")], false);
    expect(summary(plan.changes)).toEqual(["delete ns/a", "add ns/a"]);
  });

  it("nothing changed: nothing to send", () => {
    const known = knownFrom(obj("a", "1", "10"));
    expect(planRelist(known, [obj("a", "1", "10")], false).changes).toEqual([]);
  });

  it("Resource mode: a delete found by re-list carries the last state seen", () => {
    const last = obj("gone", "3", "12");
    const known = planRelist(new Map(), [last], true).known;
    const [deleted] = planRelist(known, [], true).changes;
    expect(deleted).toEqual({ action: "delete", namespace: "ns", name: "gone", object: last });
  });

  it("Reference mode remembers no objects", () => {
    expect(knownFrom(obj("a", "1", "10")).get("ns/a")).toEqual({
      namespace: "ns",
      name: "a",
      uid: "1",
      resourceVersion: "10",
    });
  });
});

describe("applyWatchEvent", () => {
  it.each([
    ["ADDED", "add", true],
    ["MODIFIED", "update", true],
    ["DELETED", "delete", false],
  ] as const)("%s -> %s and remembered: %s", (type, action, remembered) => {
    const known = knownFrom(obj("a", "1", "10"));
    const change = applyWatchEvent(known, type, obj("a", "1", "11"), false);
    expect(change.action).toBe(action);
    expect(known.has("ns/a")).toBe(remembered);
  });

  it("so a re-list after a watched delete does not report it twice", () => {
    const known = knownFrom(obj("a", "1", "10"));
    applyWatchEvent(known, "DELETED", obj("a", "1", "11"), false);
    expect(planRelist(known, [], false).changes).toEqual([]);
  });
});
