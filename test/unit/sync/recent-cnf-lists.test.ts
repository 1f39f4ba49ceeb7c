// Who shares the CNF lists of a burst: a rule event waits to share its list pair only while
// other rule events of its namespace are in flight (ADR 0021); a stream of events one after
// another, however close, has no one to wait for.
import { RecentCnfLists } from "../../../shared/sync/recent-cnf-lists.js";

describe("RecentCnfLists: rule events in flight", () => {
  it("counts the others of the namespace, not the caller, and each end once", () => {
    const lists = new RecentCnfLists(() => 0);
    const first = lists.eventBegan("ns-a");
    expect(lists.othersInFlight("ns-a")).toBe(0);
    const second = lists.eventBegan("ns-a");
    lists.eventBegan("ns-b");
    expect(lists.othersInFlight("ns-a")).toBe(1);
    first();
    first(); // ending twice (a finally after a return) counts once
    expect(lists.othersInFlight("ns-a")).toBe(0);
    second();
    expect(lists.othersInFlight("ns-a")).toBe(0);
    expect(lists.othersInFlight("ns-b")).toBe(0);
  });

  it("a sequential stream of events never sees another in flight", () => {
    const lists = new RecentCnfLists(() => 0);
    for (let i = 0; i < 5; i += 1) {
      const ended = lists.eventBegan("ns");
      expect(lists.othersInFlight("ns")).toBe(0);
      ended();
    }
  });
});
