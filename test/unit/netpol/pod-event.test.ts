// The Pod-only path's guards, with a store that lets the world change between its reads: a
// write computed from a Pod (or a policy of its namespace) that changed meanwhile is not made,
// the event re-runs as a lost race instead; a peer set computed from a newer policy spec than
// the one listed also re-runs it, and one from an older spec is left to the full recompute.
import { isKubeError } from "../../../shared/kube/errors.js";
import {
  POLICY_GENERATION_ANNOTATION,
  TABLE_FORMAT,
  TABLE_FORMAT_LABEL,
  applyNetpolTrigger,
  type TableKind,
} from "../../../shared/netpol/index.js";
import { namespace, pod, policy } from "./fixtures.js";
import { MemoryNetpolStore } from "./memory-store.js";

type Raw = ConstructorParameters<typeof MemoryNetpolStore>[0];

function world(): MemoryNetpolStore {
  const pods = [pod("web", "api", "10.0.0.1", { app: "api" }), pod("web", "client", "10.0.0.2")];
  const policies = [
    policy("web", "api-from-clients", {
      podSelector: { matchLabels: { app: "api" } },
      ingress: [{ from: [{ podSelector: { matchLabels: { role: "client" } } }] }],
    }),
  ];
  const withVersions = <T extends { metadata: object }>(objects: T[]) =>
    objects.map((o) => ({
      ...o,
      metadata: { ...o.metadata, uid: "uid", generation: 1, resourceVersion: "1" },
    })) as unknown as Raw;
  return new MemoryNetpolStore(
    withVersions(policies),
    withVersions(pods),
    withVersions([namespace("web")]),
  );
}

/** Runs `change` once, right after the store first lists a table kind by label. */
function changeAfterIndexRead(store: MemoryNetpolStore, change: () => void): void {
  const list = store.listTables.bind(store);
  let done = false;
  store.listTables = (kind: TableKind, ns: string | null, selector?: string) => {
    const result = list(kind, ns, selector);
    if (selector !== undefined && !done) {
      done = true;
      change();
    }
    return result;
  };
}

const relabelClient = (store: MemoryNetpolStore, role: string, version: string): void => {
  const client = store.pods[1];
  if (client === undefined) throw new Error("no client");
  store.pods[1] = {
    ...client,
    metadata: { ...client.metadata, labels: { role }, resourceVersion: version },
  };
};

describe("a Pod event's Pod-only path", () => {
  it("joins the Pod to the peer set it now belongs to, writing nothing else", async () => {
    const store = world();
    await applyNetpolTrigger({ kind: "resync" }, store);
    relabelClient(store, "client", "2");
    store.requests.length = 0;
    const result = await applyNetpolTrigger(
      { kind: "pod", namespace: "web", name: "client" },
      store,
    );
    expect(result.path).toBe("pod");
    expect(result.writes).toEqual({ create: 0, replace: 1, delete: 0 });
    expect(store.requests).not.toContain("list pods");
    expect(store.requests).not.toContain("list namespaces");
  });

  it("re-runs as a lost race when the Pod changed between its reads", async () => {
    const store = world();
    await applyNetpolTrigger({ kind: "resync" }, store);
    relabelClient(store, "client", "2");
    changeAfterIndexRead(store, () => relabelClient(store, "visitor", "3"));
    const before = store.snapshot();
    const error = await applyNetpolTrigger(
      { kind: "pod", namespace: "web", name: "client" },
      store,
    ).catch((e: unknown) => e);
    expect(isKubeError(error, "conflict")).toBe(true);
    expect(store.snapshot()).toBe(before);
  });

  it("re-runs when a peer set reflects a newer policy spec than the one listed", async () => {
    const store = world();
    await applyNetpolTrigger({ kind: "resync" }, store);
    const set = store.tables.get("peerSet/web/api-from-clients");
    if (set === undefined) throw new Error("no peer set");
    set.metadata = { ...set.metadata, annotations: { [POLICY_GENERATION_ANNOTATION]: "2" } };
    relabelClient(store, "client", "2");
    const error = await applyNetpolTrigger(
      { kind: "pod", namespace: "web", name: "client" },
      store,
    ).catch((e: unknown) => e);
    expect(isKubeError(error, "conflict")).toBe(true);
  });

  it("leaves a peer set from an older policy spec to the full recompute", async () => {
    const store = world();
    await applyNetpolTrigger({ kind: "resync" }, store);
    const first = store.policies[0];
    if (first === undefined) throw new Error("no policy");
    store.policies[0] = {
      ...first,
      metadata: { ...first.metadata, generation: 2, resourceVersion: "2" },
    } as Raw[number];
    relabelClient(store, "client", "2");
    const result = await applyNetpolTrigger(
      { kind: "pod", namespace: "web", name: "client" },
      store,
    );
    expect(result.path).toMatch(/^full: peer set web\/api-from-clients reflects an older spec/);
    expect(store.tables.get("peerSet/web/api-from-clients")?.metadata).toMatchObject({
      annotations: { [POLICY_GENERATION_ANNOTATION]: "2" },
    });
  });

  it("hands a peer set written before the member index to the full recompute, which indexes it", async () => {
    const store = world();
    await applyNetpolTrigger({ kind: "resync" }, store);
    const set = store.tables.get("peerSet/web/api-from-clients");
    if (set === undefined) throw new Error("no peer set");
    set.metadata = { ...set.metadata, labels: {} }; // as an older version wrote it
    relabelClient(store, "client", "2");
    const result = await applyNetpolTrigger(
      { kind: "pod", namespace: "web", name: "client" },
      store,
    );
    expect(result.path).toBe("full: peer sets written by an older version");
    expect(store.tables.get("peerSet/web/api-from-clients")?.metadata).toMatchObject({
      labels: { [TABLE_FORMAT_LABEL]: TABLE_FORMAT },
    });
    relabelClient(store, "visitor", "3");
    const next = await applyNetpolTrigger({ kind: "pod", namespace: "web", name: "client" }, store);
    expect(next).toMatchObject({ path: "pod", writes: { create: 0, replace: 1, delete: 0 } });
  });
});
