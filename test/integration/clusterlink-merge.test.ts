// Merge mode (import.clusterlink.net/merge: "true", reference B.3): a merge Import makes no
// Services; it needs the user's own Service named like it, and keeps a copy of every dataplane
// EndpointSlice of the ClusterLink namespace next to that Service, with the leased target port.
// The copies follow the dataplane, heal when someone deletes them, and go with the Import (its
// delete event, or the resync after a lost one). Endpoint addresses are TEST-NET-1 (192.0.2.0/24):
// only data, no proxy routes them.
import {
  DATAPLANE_SLICE_LABEL,
  MERGE_LABEL,
  SERVICE_NAME_LABEL,
} from "../../shared/clusterlink/index.js";
import { ENDPOINT_SLICES, SERVICES, type KubeObject } from "../../shared/kube/index.js";
import { ClusterLinkWorld, IMPORTS, objectEvent } from "./clusterlink-harness.js";

const world = new ClusterLinkWorld();
const CL = world.clNamespace;
const run = world.run;
const sliceA = `dp-${run}-a`;
const sliceB = `dp-${run}-b`;
let ns: string;

interface Slice extends KubeObject {
  endpoints?: { addresses: string[] }[];
  ports?: { name?: string; port: number; protocol: string }[];
  addressType?: string;
}

const endpoints = (...ips: string[]) => ips.map((ip) => ({ addresses: [ip] }));

async function dataplaneSlice(name: string, ips: string[]): Promise<void> {
  await world.kube.create(ENDPOINT_SLICES, {
    metadata: { name, namespace: CL, labels: { [SERVICE_NAME_LABEL]: "clusterlink" } },
    addressType: "IPv4",
    endpoints: endpoints(...ips),
    ports: [{ name: "dataplane", port: 8443, protocol: "TCP" }],
  });
}

const sliceEvent = (namespace: string, name: string, action: "add" | "update" | "delete") =>
  world.send(
    world.importer,
    objectEvent(action, {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      namespace,
      name,
    }),
  );

/** This run's copies, by the dataplane slice each copies (other files' slices are not ours). */
async function copies(): Promise<Map<string, Slice>> {
  const all = (await world.kube.list(ENDPOINT_SLICES, {
    namespace: ns,
    labelSelector: { [SERVICE_NAME_LABEL]: "db" },
  })) as Slice[];
  return new Map(all.map((s) => [s.metadata.labels?.[DATAPLANE_SLICE_LABEL] ?? "", s] as const));
}

const targetPort = async (): Promise<number> =>
  ((await world.kube.get(IMPORTS, { namespace: ns, name: "db" }))?.spec as { targetPort: number })
    .targetPort;

beforeAll(async () => {
  await world.setUp();
  ns = await world.namespace("merge");
  await dataplaneSlice(sliceA, ["192.0.2.10", "192.0.2.11"]);
  await dataplaneSlice(sliceB, ["192.0.2.20"]);
  await world.kube.create(IMPORTS, {
    metadata: { name: "db", namespace: ns, labels: { [MERGE_LABEL]: "true" } },
    spec: { port: 5432, sources: [{ peer: "east", exportName: "db", exportNamespace: "data" }] },
  });
});

describe("merge mode: EndpointSlice copies next to the user's own Service", () => {
  it("without the user's Service: Stalled, upstream's message, a lease but no Service and no copy", async () => {
    expect(await world.importEvent(ns, "db", "add")).toMatchObject({
      kind: "permanent",
      code: "ServiceNotFound",
    });
    expect(await world.conditions(IMPORTS, ns, "db")).toMatchObject({
      ImportTargetPortValid: { status: "True", reason: "Leased" },
      ImportServiceValid: {
        status: "False",
        reason: "Error",
        message: `import service '${ns}/db' does not exist`,
      },
      Stalled: { status: "True", reason: "ServiceNotFound" },
    });
    expect(await targetPort()).toBeGreaterThanOrEqual(1024);
    expect(await world.getService(ns, "db")).toBeUndefined();
    expect((await copies()).size).toBe(0);
  });

  it("the user's Service appears: one copy per dataplane slice, endpoints copied, the leased port named like the Service port", async () => {
    await world.kube.create(SERVICES, {
      metadata: { name: "db", namespace: ns },
      spec: {
        type: "ClusterIP",
        selector: { app: "db" },
        ports: [
          { name: "sql", port: 5432, protocol: "TCP" },
          { name: "metrics", port: 9187, protocol: "TCP" },
        ],
      },
    });
    expect(await world.serviceEvent(world.importer, ns, "db", "add")).toMatchObject({
      kind: "done",
    });
    const port = await targetPort();
    const found = await copies();
    expect([...found.keys()].filter((k) => k.startsWith(`dp-${run}`)).sort()).toEqual([
      sliceA,
      sliceB,
    ]);
    const a = found.get(sliceA);
    expect(a?.metadata.name).toBe(`clusterlink-2-db-${sliceA}`);
    expect(a?.metadata.labels).toMatchObject({
      [SERVICE_NAME_LABEL]: "db",
      "endpointslice.kubernetes.io/managed-by": "clusterlink.net",
    });
    expect(a?.addressType).toBe("IPv4");
    expect(a?.endpoints?.map((e) => e.addresses[0])).toEqual(["192.0.2.10", "192.0.2.11"]);
    expect(a?.ports).toEqual([{ name: "sql", port, protocol: "TCP" }]);
    // A repeated event finds the copies as wanted and writes nothing.
    const versions = [...found.values()].map((s) => s.metadata.resourceVersion);
    await world.importEvent(ns, "db");
    expect([...(await copies()).values()].map((s) => s.metadata.resourceVersion)).toEqual(versions);
    expect(await world.conditions(IMPORTS, ns, "db")).toMatchObject({
      ImportServiceValid: { status: "True", reason: "Valid" },
      Ready: { status: "True", reason: "Merged" },
      Stalled: { status: "False" },
    });
    // The user's Service is theirs: untouched, and no system Service was made.
    const svc = await world.getService(ns, "db");
    expect(svc?.metadata.labels ?? {}).toEqual({});
    expect(svc?.spec?.type).toBe("ClusterIP");
    const ours = await world.kube.list(SERVICES, {
      namespace: CL,
      labelSelector: { "clusterlink.net/import-namespace": ns },
    });
    expect(ours).toHaveLength(0);
  });

  it("a dataplane slice changes: its copy follows; one deleted: its copy goes", async () => {
    await world.kube.mergePatch(
      ENDPOINT_SLICES,
      { namespace: CL, name: sliceA },
      { endpoints: endpoints("192.0.2.12") },
    );
    expect(await sliceEvent(CL, sliceA, "update")).toMatchObject({ kind: "done" });
    expect((await copies()).get(sliceA)?.endpoints?.map((e) => e.addresses)).toEqual([
      ["192.0.2.12"],
    ]);

    await world.kube.delete(ENDPOINT_SLICES, { namespace: CL, name: sliceB });
    await sliceEvent(CL, sliceB, "delete");
    expect((await copies()).has(sliceB)).toBe(false);
    expect((await copies()).has(sliceA)).toBe(true);
  });

  it("a copy deleted by someone is made again from its delete event", async () => {
    const name = `clusterlink-2-db-${sliceA}`;
    await world.kube.delete(ENDPOINT_SLICES, { namespace: ns, name });
    expect(await sliceEvent(ns, name, "delete")).toMatchObject({ kind: "done" });
    expect((await copies()).get(sliceA)?.metadata.name).toBe(name);
  });

  it("an EndpointSlice that is not a copy of ours is left alone", async () => {
    await world.kube.create(ENDPOINT_SLICES, {
      metadata: { name: "theirs", namespace: ns, labels: { [SERVICE_NAME_LABEL]: "db" } },
      addressType: "IPv4",
      endpoints: endpoints("192.0.2.99"),
      ports: [{ name: "sql", port: 5432, protocol: "TCP" }],
    });
    expect(await sliceEvent(ns, "theirs", "add")).toMatchObject({ kind: "done" });
    expect(await world.kube.get(ENDPOINT_SLICES, { namespace: ns, name: "theirs" })).toBeDefined();
    await world.resync(world.importer);
    expect(await world.kube.get(ENDPOINT_SLICES, { namespace: ns, name: "theirs" })).toBeDefined();
    expect((await copies()).has(sliceA)).toBe(true);
  });

  it("the merge label removed: its copies go at once (the user's Service blocks a normal Import); put back: copied again", async () => {
    const setMerge = (value: string | null) =>
      world.kube.mergePatch(
        IMPORTS,
        { namespace: ns, name: "db" },
        { metadata: { labels: { [MERGE_LABEL]: value } } },
      );
    await setMerge(null);
    await world.importEvent(ns, "db");
    expect((await copies()).has(sliceA)).toBe(false);
    expect(await world.conditions(IMPORTS, ns, "db")).toMatchObject({
      Stalled: { status: "True", reason: "ServiceConflict" },
    });
    await setMerge("true");
    await world.importEvent(ns, "db");
    expect((await copies()).has(sliceA)).toBe(true);
    expect(await world.conditions(IMPORTS, ns, "db")).toMatchObject({
      Ready: { status: "True", reason: "Merged" },
    });
  });

  it("the Import deleted with its event lost: the resync removes the copies, the user's Service stays", async () => {
    await world.kube.delete(IMPORTS, { namespace: ns, name: "db" });
    await world.resync(world.importer);
    const left = [...(await copies()).values()].filter(
      (s) => s.metadata.labels?.["endpointslice.kubernetes.io/managed-by"] === "clusterlink.net",
    );
    expect(left).toHaveLength(0);
    expect(await world.getService(ns, "db")).toBeDefined();
    expect(await world.kube.get(ENDPOINT_SLICES, { namespace: ns, name: "theirs" })).toBeDefined();
  });
});
