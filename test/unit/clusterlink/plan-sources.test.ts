// User story "Service Load Balancing and Failover": an Import's sources judged by the Peers they
// name (PeerReachable, clusterlink-peer-health's), reported on the Import; Ready while one is usable.
import { systemServiceName } from "../../../shared/clusterlink/names.js";
import { observeImport } from "../../../shared/clusterlink/observed.js";
import { planImport } from "../../../shared/clusterlink/plan-import.js";
import {
  listedUnusable,
  planSources,
  type PeerReading,
} from "../../../shared/clusterlink/plan-sources.js";

const CL = "clusterlink-system";
const source = (peer: string, exportName = "orders") => ({
  peer,
  exportName,
  exportNamespace: "shop",
});
const up: PeerReading = { found: true, reachable: true, message: "" };
const down: PeerReading = { found: true, reachable: false, message: "timeout after 2000 ms" };
const fresh: PeerReading = { found: true, reachable: undefined, message: "" };
const peers = new Map<string, PeerReading>([
  ["east", up],
  ["west", down],
  ["south", fresh],
]);

describe("planSources", () => {
  it.each([
    {
      title: "every Peer reachable: True Reachable",
      sources: [source("east")],
      want: { status: "True", reason: "Reachable", message: "" },
      usable: 1,
    },
    {
      title: "one of two down: False, naming that source and why",
      sources: [source("east"), source("west")],
      want: {
        status: "False",
        reason: "Unreachable",
        message:
          "1 of 2 sources unusable: west/shop/orders: Peer 'west' unreachable (timeout after 2000 ms)",
      },
      usable: 1,
    },
    {
      title: "a Peer that does not exist: False, naming the namespace looked in",
      sources: [source("north"), source("east")],
      want: {
        status: "False",
        reason: "Unreachable",
        message: `1 of 2 sources unusable: north/shop/orders: no Peer 'north' in ${CL}`,
      },
      usable: 1,
    },
    {
      title: "a Peer not heartbeaten yet: Unknown Pending, still usable",
      sources: [source("south"), source("south", "other"), source("east")],
      want: { status: "Unknown", reason: "Pending", message: "not heartbeaten yet: Peer 'south'" },
      usable: 3,
    },
    {
      title: "every source down: False, none usable",
      sources: [source("west"), source("north")],
      want: { status: "False", reason: "Unreachable" },
      usable: 0,
    },
    {
      title: "no source at all: False NoSources",
      sources: [],
      want: { status: "False", reason: "NoSources", message: "the Import names no source" },
      usable: 0,
    },
  ])("$title", ({ sources, want, usable }) => {
    const plan = planSources(sources, peers, CL);
    expect(plan.condition).toMatchObject({ type: "ImportSourcesReachable", ...want });
    expect(plan.usable).toBe(usable);
  });
});

describe("planImport with its sources' Peers", () => {
  const key = { namespace: "app", name: "orders" };
  const imp = (sources: ReturnType<typeof source>[]) =>
    observeImport({
      apiVersion: "clusterlink.net/v1alpha1",
      kind: "Import",
      metadata: { ...key, generation: 2 },
      spec: { port: 8080, targetPort: 30000, sources, lbScheme: "static" },
    });
  const plan = (sources: ReturnType<typeof source>[]) =>
    planImport({
      imp: imp(sources),
      decision: { kind: "held", port: 30000 },
      found: { system: undefined, user: undefined },
      clNamespace: CL,
      peers,
    });
  const cond = (p: ReturnType<typeof plan>, type: string) =>
    p.conditions.find((c) => c.type === type);

  it("the primary down, a secondary up: Ready (the dataplane fails over), the primary reported", () => {
    const p = plan([source("west"), source("east")]);
    expect(cond(p, "Ready")).toMatchObject({ status: "True", reason: "Imported" });
    expect(cond(p, "ImportSourcesReachable")).toMatchObject({ status: "False" });
    expect(p.problem).toBeNull();
  });

  it("every source down: Services still made, not Ready, Reconciling (not Stalled) until a Peer is back", () => {
    const p = plan([source("west"), source("north")]);
    expect(p.writes.map((w) => (w.action === "delete" ? "delete" : w.service.name))).toEqual([
      systemServiceName(key, CL),
      "orders",
    ]);
    expect(cond(p, "Ready")).toMatchObject({ status: "False", reason: "NoUsableSource" });
    expect(cond(p, "Reconciling")).toMatchObject({ status: "True", reason: "NoUsableSource" });
    expect(cond(p, "Stalled")).toMatchObject({ status: "False" });
    expect(p.problem).toBeNull();
  });

  it("an Import that cannot be served still reports its sources", () => {
    const p = planImport({
      imp: imp([source("west")]),
      decision: { kind: "conflict", port: 30000, holder: "app/first" },
      found: { system: undefined, user: undefined },
      clNamespace: CL,
      peers,
    });
    expect(cond(p, "Stalled")).toMatchObject({ status: "True", reason: "PortConflict" });
    expect(cond(p, "ImportSourcesReachable")).toMatchObject({ status: "False" });
  });
});

describe("listedUnusable: which sources a stored condition names as unusable", () => {
  it("reads back what planSources wrote, even when a Peer's message holds the separator", () => {
    const tricky = new Map<string, PeerReading>([
      ["east", { found: true, reachable: false, message: "a: HTTP 502; b: HTTP 503" }],
      ["west", up],
    ]);
    const sources = [source("east"), source("west"), source("north")];
    const plan = planSources(sources, tricky, CL);
    expect(plan.unusable.map((u) => u.source)).toEqual(["east/shop/orders", "north/shop/orders"]);
    expect(listedUnusable(plan.condition, sources)).toEqual(
      new Set(["east/shop/orders", "north/shop/orders"]),
    );
  });

  it("nothing for a condition that is not False Unreachable", () => {
    const sources = [source("east")];
    expect(listedUnusable(planSources(sources, peers, CL).condition, sources)).toEqual(new Set());
    expect(listedUnusable(undefined, sources)).toEqual(new Set());
  });
});
