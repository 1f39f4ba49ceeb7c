// Which ClusterLink status changes are worth an Event: transitions only, one per problem.
import { planClusterLinkEvents } from "../../../shared/clusterlink/plan-events.js";
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
