// clusterlink-import may create, patch and delete any Service (an Import's user Service lives in
// the Import's own namespace), so what keeps it off a user's Service is the label check on what it
// read. These tests put a user between that read and the write: the Service the function read as
// its own is replaced by the user's own Service of the same name just before the function writes
// (test/integration/support/acting-before.ts). Written without a precondition, the user's Service
// was overwritten or deleted; with the resourceVersion read, the API server refuses the write, the
// function reads again, finds a Service that is not its own, and leaves it alone.
import { jest } from "@jest/globals";
import { importLabels, MANAGED_BY_LABEL } from "../../shared/clusterlink/index.js";
import {
  createKubeClient,
  SERVICES,
  type ObjectKey,
  type Service,
} from "../../shared/kube/index.js";
import { ClusterLinkWorld, IMPORTS } from "./clusterlink-harness.js";
import { actingBefore, type KubeMethod } from "./support/acting-before.js";
import { adminKubeConfig } from "./support/cluster.js";

jest.setTimeout(60_000);

const world = new ClusterLinkWorld();
let ns: string;

beforeAll(async () => {
  await world.setUp();
  ns = await world.namespace("svc-race");
});

/** The user's own Service at `name`: deletes what is there and creates theirs (no labels of ours). */
async function userReplaces(name: string): Promise<void> {
  await world.kube.delete(SERVICES, { namespace: ns, name });
  await world.service(ns, name, [8080], { app: "users-own" });
}

/** An import function whose client lets the user act just before its first `method` on ns/name. */
function importerRacedBy(method: KubeMethod, name: string, act: () => Promise<void>) {
  const onThatService = (type: unknown, key: unknown): boolean =>
    type === SERVICES && (key as ObjectKey).namespace === ns && (key as ObjectKey).name === name;
  const kube = actingBefore(createKubeClient(adminKubeConfig()), method, act, onThatService);
  return world.instance("import", kube);
}

/** The user's Service is as they made it: none of our labels, their type, selector and port. */
function expectUsersOwn(svc: Service | undefined): void {
  expect(svc?.metadata.labels?.[MANAGED_BY_LABEL]).toBeUndefined();
  expect(svc?.metadata.labels).toEqual({ app: "users-own" });
  expect(svc?.spec?.type).toBe("ClusterIP");
  expect(svc?.spec?.selector).toEqual({ app: svc?.metadata.name });
  expect(svc?.spec?.ports?.map((p) => p.port)).toEqual([8080]);
}

describe("a user's Service replaced between our read and our write is never written", () => {
  it("update: our drifted ExternalName Service, replaced by the user's before our patch, is not overwritten", async () => {
    await world.importOf(ns, "drift", { port: 5432 });
    expect(await world.importEvent(ns, "drift", "add")).toMatchObject({ kind: "done" });
    // Someone edits our Service (labels kept): the next event reads it as ours and must repair it.
    await world.kube.mergePatch(
      SERVICES,
      { namespace: ns, name: "drift" },
      { spec: { externalName: "elsewhere.example" } },
    );
    const raced = importerRacedBy("mergePatch", "drift", () => userReplaces("drift"));
    const outcome = await world.importEvent(ns, "drift", "update", raced);
    expectUsersOwn(await world.getService(ns, "drift"));
    // Read again after the refused patch: the name is taken by a Service that is not ours.
    expect(outcome).toMatchObject({ kind: "permanent", code: "ServiceConflict" });
    expect((await world.conditions(IMPORTS, ns, "drift"))["ImportServiceValid"]).toMatchObject({
      status: "False",
      message: `service '${ns}/drift' already exists and managed by ''`,
    });
  });

  it("delete event: the user's Service that replaced ours before our delete survives", async () => {
    await world.importOf(ns, "gone", { port: 5433 });
    expect(await world.importEvent(ns, "gone", "add")).toMatchObject({ kind: "done" });
    expect((await world.getService(ns, "gone"))?.metadata.labels).toEqual(
      importLabels({ namespace: ns, name: "gone" }),
    );
    await world.kube.delete(IMPORTS, { namespace: ns, name: "gone" });
    const raced = importerRacedBy("delete", "gone", () => userReplaces("gone"));
    expect(await world.importEvent(ns, "gone", "delete", raced)).toMatchObject({ kind: "done" });
    expectUsersOwn(await world.getService(ns, "gone"));
  });

  it("resync sweep: an orphan of ours, replaced by the user's after the list, survives the sweep", async () => {
    await world.importOf(ns, "orphan", { port: 5434 });
    expect(await world.importEvent(ns, "orphan", "add")).toMatchObject({ kind: "done" });
    // The Import goes without its delete event (a lost delivery): the resync's sweep finds our
    // labelled Service by list, and the user takes the name before the sweep deletes it.
    await world.kube.delete(IMPORTS, { namespace: ns, name: "orphan" });
    const raced = importerRacedBy("delete", "orphan", () => userReplaces("orphan"));
    expect(await world.resync(raced)).toMatchObject({ kind: "done" });
    expectUsersOwn(await world.getService(ns, "orphan"));
  });
});
