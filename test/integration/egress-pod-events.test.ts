// A Pod event changes only that Pod's entry in the groups that select it or list it, found through
// the groups' member index labels instead of reading every group; against the real API server.
// What the event path guarantees (every group right before the change -> right after it) and
// what it leaves to the resync (anything changed behind its back) are both shown here. Other egress
// test files send cluster-wide resyncs at any time and have Egresses that select every Pod, so
// results are asserted by end state, not by counts or by which of us wrote first.
import { EGRESSES, EGRESS_GROUPS, createKubeClient } from "../../shared/kube/index.js";
import { memberLabelKey } from "../../shared/egress/member-index.js";
import { EgressWorld, RUN_LABEL } from "./egress-harness.js";
import { adminKubeConfig } from "./support/cluster.js";
import { StaleCache } from "./support/stale-cache.js";

const world = new EgressWorld();
const run = { [RUN_LABEL]: world.run };
const selecting = (app: string) => ({ podSelector: { matchLabels: { ...run, app } } });

/** Names of this run's groups that list `namespace/name`, asked through the member index. */
async function groupsIndexing(namespace: string, name: string): Promise<string[]> {
  const groups = await world.kube.list(EGRESS_GROUPS, {
    labelSelector: memberLabelKey({ namespace, name }),
  });
  return groups
    .map((g) => g.metadata.name)
    .filter((n) => n.endsWith(world.run))
    .sort();
}

describe("a Pod's life, one Pod event at a time", () => {
  let ns = "";
  const [web, db, prod] = [world.name("pe-web"), world.name("pe-db"), world.name("pe-prod")];

  beforeAll(async () => {
    ns = await world.namespace("pe", { env: "prod" });
    await world.pod(ns, "keep", { app: "web" });
    await world.egress(web, selecting("web"));
    await world.egress(db, selecting("db"));
    await world.egress(prod, { namespaceSelector: { matchLabels: { ...run, env: "prod" } } });
    for (const name of [web, db, prod]) await world.egressEvent(name, "add");
  }, 30_000);

  it("created matching two Egresses: its add event lists it in both, and each group indexes it", async () => {
    await world.pod(ns, "p", { app: "web" }, { ips: ["100.64.2.1"] });
    expect(await world.podEvent(ns, "p", "add")).toMatchObject({ kind: "done" });
    expect(await world.members(web)).toEqual([`${ns}/keep`, `${ns}/p`]);
    expect(await world.members(prod)).toEqual([`${ns}/keep`, `${ns}/p`]);
    expect(await groupsIndexing(ns, "p")).toEqual([prod, web].sort());
  });

  it("relabelled out of one selector into another: leaves web, joins db, stays in prod", async () => {
    await world.relabelPod(ns, "p", { app: "db" });
    expect(await world.podEvent(ns, "p")).toMatchObject({ kind: "done" });
    expect(await world.members(web)).toEqual([`${ns}/keep`]);
    expect(await world.members(db)).toEqual([`${ns}/p`]);
    expect(await world.members(prod)).toEqual([`${ns}/keep`, `${ns}/p`]);
    expect(await groupsIndexing(ns, "p")).toEqual([db, prod].sort());
  });

  it("the same event delivered again writes nothing", async () => {
    const before = (await world.group(db))?.metadata.resourceVersion;
    expect(await world.podEvent(ns, "p")).toMatchObject({
      kind: "done",
      result: expect.not.stringMatching(/updated|created|deleted/) as unknown,
    });
    expect((await world.group(db))?.metadata.resourceVersion).toBe(before);
  });

  it("deleted: its delete event takes it out of every group that listed it", async () => {
    await world.deletePod(ns, "p");
    expect(await world.podEvent(ns, "p", "delete")).toMatchObject({ kind: "done" });
    expect(await world.members(db)).toEqual([]);
    expect(await world.members(prod)).toEqual([`${ns}/keep`]);
    expect(await groupsIndexing(ns, "p")).toEqual([]);
  });

  it("a late, out-of-order add event of the deleted Pod changes nothing", async () => {
    expect(await world.podEvent(ns, "p", "add")).toEqual({
      kind: "done",
      result: `unchanged: no Egress selects or lists pod ${ns}/p`,
    });
  });

  it("its Namespace relabelled: the Namespace event moves its Pods out of the namespace-selected group", async () => {
    await world.relabelNamespace(ns, { env: "dev" });
    await world.namespaceEvent(ns);
    expect(await world.members(prod)).toEqual([]);
    expect(await world.members(web)).toEqual([`${ns}/keep`]);
    expect(await groupsIndexing(ns, "keep")).toEqual([web]);
  });
});

describe("what the event path leaves to the resync", () => {
  it("a Pod deleted without its event: other Pods' events go on, the next resync removes it", async () => {
    const ns = await world.namespace("lost");
    const name = world.name("lost");
    await world.pod(ns, "a", { app: "lost" });
    await world.pod(ns, "b", { app: "lost" });
    await world.egress(name, selecting("lost"));
    await world.egressEvent(name, "add");
    await world.deletePod(ns, "a"); // its event is lost
    await world.pod(ns, "c", { app: "lost" });
    await world.podEvent(ns, "c", "add");
    expect(await world.members(name)).toEqual(expect.arrayContaining([`${ns}/b`, `${ns}/c`]));

    await world.resync();
    expect(await world.members(name)).toEqual([`${ns}/b`, `${ns}/c`]);
  });

  it("an Egress edit whose event is not delivered yet: a Pod event that must change its group recomputes it in full", async () => {
    const ns = await world.namespace("edit");
    const name = world.name("pe-edit");
    await world.pod(ns, "x", { app: "x" });
    await world.pod(ns, "y", { app: "y" });
    await world.egress(name, selecting("x"));
    await world.egressEvent(name, "add");
    await world.updateEgress(name, selecting("y"));
    await world.relabelPod(ns, "x", { app: "z" });
    // The event reads Egresses from the watch cache: a consistent list first waits until that
    // cache has the edit, as the edit's own watch event would have (ADR 0004, addendum).
    await world.kube.list(EGRESSES);

    await world.podEvent(ns, "x");
    expect((await world.group(name))?.status).toMatchObject({
      observedEgressGeneration: 2,
      members: [{ pod: { name: "y" } }],
    });
  });

  it("a group written without the member index (an older version) is re-indexed by the resync", async () => {
    const ns = await world.namespace("old");
    const name = world.name("pe-old");
    await world.pod(ns, "o", { app: "old" });
    await world.egress(name, selecting("old"));
    await world.egressEvent(name, "add");
    const group = await world.group(name);
    if (group === undefined) throw new Error("no group");
    await world.kube.replace(EGRESS_GROUPS, {
      ...group,
      metadata: { ...group.metadata, labels: {} },
    });

    await world.resync();
    expect(await groupsIndexing(ns, "o")).toEqual([name]);
    await world.deletePod(ns, "o");
    await world.podEvent(ns, "o", "delete");
    expect(await world.members(name)).toEqual([]);
  });
});

describe("a Pod event whose watch-cache read is stale (ADR 0004, addendum)", () => {
  it("writes at the stale version, meets the API server's 409, re-reads consistently and ends right", async () => {
    const ns = await world.namespace("stale");
    const name = world.name("pe-stale");
    await world.pod(ns, "s", { app: "stale" }, { ips: ["100.64.2.9"] });
    await world.egress(name, selecting("stale"));
    await world.egressEvent(name, "add");
    expect(await world.members(name)).toEqual([`${ns}/s`]);
    // The cache keeps the group as it is now; then someone writes it (a write the cache has not
    // seen yet) and the Pod is relabelled out of the Egress's selector.
    const stale = new StaleCache(EGRESS_GROUPS);
    stale.freeze(
      await world.kube.list(EGRESS_GROUPS, {
        labelSelector: memberLabelKey({ namespace: ns, name: "s" }),
      }),
    );
    await world.kube.mergePatch(
      EGRESS_GROUPS,
      { name },
      {
        metadata: { annotations: { "example.invalid/later-write": "yes" } },
      },
    );
    await world.relabelPod(ns, "s", { app: "gone" });
    const instance = new EgressWorld({ kube: stale.client(createKubeClient(adminKubeConfig())) });
    expect(await instance.podEvent(ns, "s")).toMatchObject({ kind: "done" });
    expect(stale.seen.cachedLists).toBeGreaterThanOrEqual(1);
    expect(stale.seen.conflicts).toBeGreaterThanOrEqual(1);
    expect(stale.seen.consistentLists).toBeGreaterThanOrEqual(1);
    expect(await world.members(name)).toEqual([]);
  });
});
