// Which ClusterLink status changes are worth an Event: transitions only, one per problem.
import {
  planClusterLinkEvents,
  planSourceEvents,
} from "../../../shared/clusterlink/plan-events.js";
import { planSources, type PeerReading } from "../../../shared/clusterlink/plan-sources.js";
import type { WantedCondition } from "../../../shared/clusterlink/plan-status.js";

const c = (type: string, status: "True" | "False", message = ""): WantedCondition => ({
  type,
  status,
  reason: "x",
  message,
});
const stored = (...conditions: WantedCondition[]) => ({
  conditions: conditions.map((x) => ({ ...x, lastTransitionTime: "2026-01-01T00:00:00Z" })),
});
const reasons = (...args: Parameters<typeof planClusterLinkEvents>) =>
  planClusterLinkEvents(...args).map((e) => `${e.type} ${e.reason}`);

it.each([
  ["a new reachable Peer", undefined, [c("PeerReachable", "True")], ["Normal PeerReachable"]],
  [
    "a new silent Peer",
    undefined,
    [c("PeerReachable", "False", "t/o")],
    ["Warning PeerUnreachable"],
  ],
  ["no change", stored(c("PeerReachable", "False")), [c("PeerReachable", "False", "again")], []],
  [
    "a Peer back",
    stored(c("PeerReachable", "False")),
    [c("PeerReachable", "True")],
    ["Normal PeerReachable"],
  ],
  ["a first valid Export (nothing to tell)", undefined, [c("ExportValid", "True")], []],
  [
    "an Export broken",
    stored(c("ExportValid", "True")),
    [c("ExportValid", "False", "gone")],
    ["Warning ExportInvalid"],
  ],
  [
    "an Export repaired",
    stored(c("ExportValid", "False")),
    [c("ExportValid", "True")],
    ["Normal ExportVerified"],
  ],
  [
    "a port conflict (both upstream conditions False): one Event",
    undefined,
    [c("ImportTargetPortValid", "False", "in use"), c("ImportServiceValid", "False", "in use")],
    ["Warning PortConflict"],
  ],
  [
    "a Service in the way",
    undefined,
    [c("ImportTargetPortValid", "True"), c("ImportServiceValid", "False", "managed by ''")],
    ["Warning ServiceConflict"],
  ],
  [
    "a name no Service can take: one Event that says so, not a port conflict",
    undefined,
    [
      { ...c("ImportTargetPortValid", "False", "recreate it"), reason: "InvalidName" },
      { ...c("ImportServiceValid", "False", "recreate it"), reason: "InvalidName" },
    ],
    ["Warning InvalidName"],
  ],
  [
    "Ready and the rest are not reported",
    undefined,
    [c("Ready", "False"), c("Stalled", "True")],
    [],
  ],
] as const)("%s", (_name, before, after, expected) => {
  expect(reasons(before, after)).toEqual(expected);
});

it("a lease written is an Event even when the condition stays True (an Import moved ports)", () => {
  const before = stored(c("ImportTargetPortValid", "True"));
  expect(planClusterLinkEvents(before, [c("ImportTargetPortValid", "True")], 31000)).toEqual([
    { type: "Normal", reason: "PortLeased", note: "dataplane target port 31000 leased" },
  ]);
});

describe("an Import's sources: an Event when one turns unusable, not per delivery", () => {
  const CL = "clusterlink-system";
  const sources = ["east", "west"].map((peer) => ({
    peer,
    exportName: "db",
    exportNamespace: "data",
  }));
  const up: PeerReading = { found: true, reachable: true, message: "" };
  const down = (message: string): PeerReading => ({ found: true, reachable: false, message });
  const plan = (east: PeerReading | undefined, west: PeerReading | undefined) =>
    planSources(
      sources,
      new Map(
        [
          ["east", east],
          ["west", west],
        ].filter((e): e is [string, PeerReading] => e[1] !== undefined),
      ),
      CL,
    );
  const storedOf = (p: ReturnType<typeof plan>) => stored(p.condition);
  const events = (before: ReturnType<typeof plan> | undefined, after: ReturnType<typeof plan>) =>
    planSourceEvents(before && storedOf(before), sources, after).map(
      (e) => `${e.type} ${e.reason}: ${e.note}`,
    );

  it("a source's Peer goes down: one Warning naming it and why", () => {
    expect(events(plan(up, up), plan(down("timeout"), up))).toEqual([
      "Warning SourceUnusable: a source turned unusable: east/data/db: Peer 'east' unreachable (timeout)",
    ]);
  });

  it("a first settle that finds a Peer missing says so too", () => {
    expect(events(undefined, plan(up, undefined))).toEqual([
      "Warning SourceUnusable: a source turned unusable: west/data/db: no Peer 'west' in clusterlink-system",
    ]);
  });

  it("still down, or down for another reason: nothing (the status changes, the transition does not)", () => {
    expect(events(plan(down("timeout"), up), plan(down("timeout"), up))).toEqual([]);
    expect(events(plan(down("timeout"), up), plan(down("HTTP 503; HTTP 502"), up))).toEqual([]);
  });

  it("a second source goes down while the first stays down: one Warning, for the second only", () => {
    expect(events(plan(down("timeout"), up), plan(down("timeout"), undefined))).toEqual([
      "Warning SourceUnusable: a source turned unusable: west/data/db: no Peer 'west' in clusterlink-system",
    ]);
  });

  it("both at once: one Warning naming both", () => {
    expect(events(plan(up, up), plan(down("t/o"), down("t/o")))).toEqual([
      "Warning SourceUnusable: 2 sources turned unusable: east/data/db: Peer 'east' unreachable (t/o); west/data/db: Peer 'west' unreachable (t/o)",
    ]);
  });

  it("every source usable again: one Normal; one of two back: nothing", () => {
    expect(events(plan(down("t/o"), down("t/o")), plan(up, down("t/o")))).toEqual([]);
    expect(events(plan(up, down("t/o")), plan(up, up))).toEqual([
      "Normal SourcesReachable: all 2 sources usable again",
    ]);
    expect(events(plan(up, up), plan(up, up))).toEqual([]);
  });
});
