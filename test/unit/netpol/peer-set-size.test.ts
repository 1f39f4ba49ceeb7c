// A NetworkPolicyPeerSet is one API object, and the API server refuses objects above etcd's
// request limit (1.5 MiB by default): one `namespaceSelector: {}` peer over a large cluster must
// still compile into a peer set that can be stored, failing closed and saying why, instead of an
// object whose write is refused on every retry.
import type { EventRecorder } from "../../../shared/kube/index.js";
import {
  TABLE_FORMAT_LABEL,
  applyNetpolTrigger,
  compileObjects,
  desiredPeerSetTable,
  peerSetBytesAtMost,
  tableBytes,
} from "../../../shared/netpol/index.js";
import type { PeerSetSpec } from "../../../shared/kinds/netpol.js";
import type { RefWorld } from "../../../dev/netpol-oracle/reference.js";
import { namespace, pod, policy } from "./fixtures.js";
import { MemoryNetpolStore } from "./memory-store.js";

/** What the API server would be sent for the peer set (JSON, as the client writes it). */
const storedBytes = (object: unknown): number => Buffer.byteLength(JSON.stringify(object));

const ipOf = (i: number): string =>
  `10.${64 + Math.floor(i / 65_536)}.${Math.floor(i / 256) % 256}.${i % 256}`;

/** `pods` Pods over 150 namespaces and one policy letting in every Pod of every namespace. */
function allNamespacesWorld(pods: number): RefWorld {
  const namespaces = Array.from({ length: 150 }, (_, i) => namespace(`team-${i}`));
  return {
    namespaces,
    pods: Array.from({ length: pods }, (_, i) =>
      pod(`team-${i % 150}`, `frontend-7c9d8f6b5d-${i.toString(36).padStart(5, "x")}`, ipOf(i)),
    ),
    policies: [
      policy("team-0", "from-all-namespaces", { ingress: [{ from: [{ namespaceSelector: {} }] }] }),
    ],
  };
}

describe("a peer set the API server could not store", () => {
  it("one namespaceSelector: {} peer over 15,000 Pods compiles into an object within its bound (1.25 MiB), failing closed and saying why", () => {
    const [peerSet] = compileObjects(allNamespacesWorld(15_000)).peerSets;
    if (peerSet === undefined) throw new Error("no peer set");
    expect(storedBytes(desiredPeerSetTable(peerSet).object)).toBeLessThanOrEqual(1_310_720);
    // Its group is kept, empty: the endpoints' references find it and match nothing (deny).
    expect(peerSet.spec.groups).toEqual([{ name: "ingress_0", addresses: [] }]);
    expect(peerSet.problems).toEqual([
      {
        reason: "PeerSetTooLarge",
        message: expect.stringMatching(
          /^15000 Pods selected by labels need \d+ bytes in this peer set; at most 1310720 are stored: the policy's label-selected peers are denied until they fit/,
        ) as unknown,
      },
    ]);
  });

  it("below the bound every selected Pod is stored, with its member index", () => {
    const [peerSet] = compileObjects(allNamespacesWorld(1_000)).peerSets;
    if (peerSet === undefined) throw new Error("no peer set");
    expect(peerSet.problems).toEqual([]);
    expect(peerSet.spec.groups[0]?.addresses).toHaveLength(1_000);
    expect(peerSet.members.size).toBe(1_000);
  });
});

type Raw = ConstructorParameters<typeof MemoryNetpolStore>[0];

const versioned = <T extends { metadata: object }>(objects: T[]): Raw =>
  objects.map((o) => ({
    ...o,
    metadata: { ...o.metadata, uid: "uid", generation: 1, resourceVersion: "1" },
  })) as unknown as Raw;

/** web and `clients` clients in one namespace; web lets its clients in. */
function clientsWorld(clients: number): MemoryNetpolStore {
  const pods = [
    pod("shop", "web", "10.0.0.1", { app: "web" }),
    ...Array.from({ length: clients }, (_, i) =>
      pod("shop", `client-${i}`, `10.0.1.${i}`, { role: "client" }),
    ),
  ];
  const policies = [
    policy("shop", "web-from-clients", {
      podSelector: { matchLabels: { app: "web" } },
      ingress: [{ from: [{ podSelector: { matchLabels: { role: "client" } } }] }],
    }),
  ];
  return new MemoryNetpolStore(
    versioned(policies),
    versioned(pods),
    versioned([namespace("shop")]),
  );
}

const storedSet = (store: MemoryNetpolStore) => {
  const stored = store.tables.get("peerSet/shop/web-from-clients") as
    { spec: PeerSetSpec; status: { problems: { reason: string }[] } } | undefined;
  if (stored === undefined) throw new Error("no peer set");
  return stored;
};

/** A bound between what 3 and what 4 clients take: measured, not guessed. */
function boundBetween3And4(): number {
  const bytes = (clients: number) => {
    const world = clientsWorld(clients);
    const raw = { policies: world.policies, pods: world.pods, namespaces: world.namespaces };
    const [set] = compileObjects(raw).peerSets;
    if (set === undefined) throw new Error("no peer set");
    return tableBytes(desiredPeerSetTable(set));
  };
  return Math.floor((bytes(3) + bytes(4)) / 2);
}

describe("what a peer set is measured by", () => {
  it("the estimate that spares rendering it is never below its bytes, even with the longest names", () => {
    const ns = "n".repeat(63);
    const ips = (i: number) => Array.from({ length: 5 }, (_, k) => `10.${k}.${i % 256}.${i >> 8}`);
    const pods = Array.from({ length: 300 }, (_, i) => {
      const p = pod(ns, `${"p".repeat(240)}-${i}`, ips(i)[0] ?? "", { role: "peer" });
      return { ...p, status: { ...p.status, podIPs: ips(i).map((ip) => ({ ip })) } };
    });
    const rules = Array.from({ length: 3 }, () => ({
      from: [{ podSelector: { matchLabels: { role: "peer" } } }],
    }));
    const world: RefWorld = {
      namespaces: [namespace(ns)],
      pods,
      policies: [policy(ns, "q".repeat(253), { ingress: rules })],
    };
    const [set] = compileObjects(world).peerSets;
    if (set === undefined) throw new Error("no peer set");
    expect(set.members.size).toBe(300);
    expect(peerSetBytesAtMost(set)).toBeGreaterThanOrEqual(tableBytes(desiredPeerSetTable(set)));
  });
});

describe("the bound on Pod events and full recomputes", () => {
  const options = (maxPeerSetBytes: number) => ({ maxPeerSetBytes });

  it("a Pod event that would grow a peer set past its bound hands it to the full recompute, which stores it failing closed", async () => {
    const max = boundBetween3And4();
    const store = clientsWorld(4);
    const [fourth] = store.pods.splice(4, 1);
    await applyNetpolTrigger({ kind: "resync" }, store, options(max));
    expect(storedSet(store).status.problems).toEqual([]);
    if (fourth === undefined) throw new Error("no fourth client");
    store.pods.push(fourth);
    const result = await applyNetpolTrigger(
      { kind: "pod", namespace: "shop", name: "client-3" },
      store,
      options(max),
    );
    expect(result.path).toBe("full: peer set shop/web-from-clients outgrows its bound");
    expect(result.problems).toEqual(["shop/web-from-clients: PeerSetTooLarge"]);
    expect(storedSet(store).spec.groups).toEqual([{ name: "ingress_0", addresses: [] }]);
    expect(storedSet(store).status.problems.map((p) => p.reason)).toEqual(["PeerSetTooLarge"]);
  });

  it("a Pod event on a peer set stored failing closed writes nothing and reads no Pod list", async () => {
    const max = boundBetween3And4();
    const store = clientsWorld(5);
    const [fifth] = store.pods.splice(5, 1);
    await applyNetpolTrigger({ kind: "resync" }, store, options(max));
    const before = store.snapshot();
    if (fifth === undefined) throw new Error("no fifth client");
    store.pods.push(fifth);
    store.requests.length = 0;
    const result = await applyNetpolTrigger(
      { kind: "pod", namespace: "shop", name: "client-4" },
      store,
      options(max),
    );
    expect(result).toMatchObject({ path: "pod", writes: { create: 0, replace: 0, delete: 0 } });
    expect(store.requests).not.toContain("list pods");
    expect(store.snapshot()).toBe(before);
  });

  it("the full recompute reports every policy's problems in its scope, for the metric", async () => {
    const max = boundBetween3And4();
    const store = clientsWorld(4);
    const reports: unknown[] = [];
    await applyNetpolTrigger({ kind: "resync" }, store, {
      ...options(max),
      onPolicyProblems: (report, complete) => reports.push({ report, complete }),
    });
    expect(reports).toEqual([
      {
        report: [{ namespace: "shop", policy: "web-from-clients", reasons: ["PeerSetTooLarge"] }],
        complete: true,
      },
    ]);
  });

  it("one PeerSetTooLarge Event when it stops fitting, none when only its size changes, ProblemsResolved when it fits", async () => {
    const max = boundBetween3And4();
    const store = clientsWorld(6);
    const recorded: string[] = [];
    const events = {
      record: (e: { reason: string; regarding: { kind: string } }) => {
        recorded.push(`${e.regarding.kind} ${e.reason}`);
        return Promise.resolve();
      },
    } as unknown as EventRecorder;
    const policyEvent = { kind: "policy", namespace: "shop", name: "web-from-clients" } as const;
    await applyNetpolTrigger(policyEvent, store, { ...options(max), events });
    store.pods.splice(6, 1); // 5 clients: still too large, another size
    await applyNetpolTrigger(policyEvent, store, { ...options(max), events });
    store.pods.splice(3, 3); // 2 clients: fits
    await applyNetpolTrigger(policyEvent, store, { ...options(max), events });
    // Peer sets are written before endpoint tables.
    expect(recorded).toEqual([
      "NetworkPolicy PeerSetTooLarge",
      "Pod EndpointTablesWritten",
      "NetworkPolicy ProblemsResolved",
    ]);
    expect(storedSet(store).spec.groups[0]?.addresses).toEqual(["10.0.1.0", "10.0.1.1"]);
  });

  it("a peer set of table format 2 (stored with managedFields, before the bound) is rewritten as format 3", async () => {
    const store = clientsWorld(2);
    await applyNetpolTrigger({ kind: "resync" }, store);
    const set = store.tables.get("peerSet/shop/web-from-clients");
    if (set === undefined) throw new Error("no peer set");
    set.metadata = {
      ...set.metadata,
      labels: { ...set.metadata.labels, [TABLE_FORMAT_LABEL]: "2" },
    };
    store.pods.push(...versioned([pod("shop", "client-9", "10.0.1.9", { role: "client" })]));
    const result = await applyNetpolTrigger(
      { kind: "pod", namespace: "shop", name: "client-9" },
      store,
    );
    expect(result.path).toBe("full: peer sets written by an older version");
    expect(store.tables.get("peerSet/shop/web-from-clients")?.metadata).toMatchObject({
      labels: { [TABLE_FORMAT_LABEL]: "3" },
      managedFields: [{}],
    });
  });
});
