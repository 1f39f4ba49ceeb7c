// User story "Service Sharing" (the design proposal): an application owner exports one port of a
// multi-port Service. clusterlink-export verifies each Export against its live Service, with
// upstream's ExportValid strings, and goes beyond upstream by checking the port.
import { SERVICES } from "../../shared/kube/index.js";
import { ClusterLinkWorld, EXPORTS } from "./clusterlink-harness.js";

const world = new ClusterLinkWorld();
let ns: string;

beforeAll(async () => {
  await world.setUp();
  ns = await world.namespace("share");
  await world.service(ns, "db", [5432, 8080]);
});

const valid = { status: "True", reason: "Verified", message: "" };

describe("Service Sharing: exporting one port of a multi-port Service", () => {
  it("the exported port is verified, and Ready says which port is exported", async () => {
    await world.exportOf(ns, "db", { port: 5432 });
    expect(await world.exportEvent(ns, "db", "add")).toMatchObject({ kind: "done" });
    const conditions = await world.conditions(EXPORTS, ns, "db");
    expect(conditions["ExportValid"]).toEqual(valid);
    expect(conditions["Ready"]).toEqual({
      status: "True",
      reason: "Verified",
      message: "exports port 5432",
    });
    expect(conditions["Stalled"]?.status).toBe("False");
  });

  it("a repeated event writes nothing (the resourceVersion stays)", async () => {
    const before = await world.kube.get(EXPORTS, { namespace: ns, name: "db" });
    await world.exportEvent(ns, "db");
    const after = await world.kube.get(EXPORTS, { namespace: ns, name: "db" });
    expect(after?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
  });

  it("a port the Service lacks is Stalled naming the Service's ports (upstream said Verified)", async () => {
    await world.kube.mergePatch(EXPORTS, { namespace: ns, name: "db" }, { spec: { port: 9999 } });
    expect(await world.exportEvent(ns, "db")).toMatchObject({
      kind: "permanent",
      code: "PortNotFound",
    });
    const conditions = await world.conditions(EXPORTS, ns, "db");
    const message = `export service '${ns}/db' has no port 9999 (its ports: 5432, 8080)`;
    expect(conditions["ExportValid"]).toEqual({ status: "False", reason: "Error", message });
    expect(conditions["Stalled"]).toEqual({ status: "True", reason: "PortNotFound", message });
  });

  it("port omitted on a multi-port Service: Stalled, listing the ports to choose from", async () => {
    await world.kube.mergePatch(EXPORTS, { namespace: ns, name: "db" }, { spec: { port: null } });
    await world.exportEvent(ns, "db");
    const conditions = await world.conditions(EXPORTS, ns, "db");
    expect(conditions["Stalled"]).toMatchObject({
      status: "True",
      reason: "PortAmbiguous",
      message: `export service '${ns}/db' has ports 5432, 8080: set spec.port to one of them`,
    });
  });

  it("port omitted on a single-port Service: that port is exported", async () => {
    await world.service(ns, "cache", [6379]);
    await world.exportOf(ns, "cache", {});
    await world.exportEvent(ns, "cache", "add");
    expect((await world.conditions(EXPORTS, ns, "cache"))["Ready"]).toMatchObject({
      status: "True",
      message: "exports port 6379, the Service's only port",
    });
  });
});

describe("a Service created, changed or deleted later re-validates the Export named like it", () => {
  it("no Service: upstream's message; the Service appears: Verified on the Service event", async () => {
    await world.exportOf(ns, "late", { port: 80 });
    expect(await world.exportEvent(ns, "late", "add")).toMatchObject({ kind: "permanent" });
    expect((await world.conditions(EXPORTS, ns, "late"))["ExportValid"]).toEqual({
      status: "False",
      reason: "Error",
      message: `export service '${ns}/late' does not exist`,
    });
    await world.service(ns, "late", [80]);
    expect(await world.serviceEvent(world.exporter, ns, "late", "add")).toMatchObject({
      kind: "done",
    });
    expect((await world.conditions(EXPORTS, ns, "late"))["ExportValid"]).toEqual(valid);
  });

  it("the Service loses the port: the Service event makes the Export Stalled, still done", async () => {
    const ports = [{ name: "web", port: 8080, protocol: "TCP" }];
    await world.kube.mergePatch(SERVICES, { namespace: ns, name: "late" }, { spec: { ports } });
    expect(await world.serviceEvent(world.exporter, ns, "late")).toMatchObject({ kind: "done" });
    expect((await world.conditions(EXPORTS, ns, "late"))["Stalled"]?.reason).toBe("PortNotFound");
  });

  it("the resync re-verifies every Export (a lost Service delete heals)", async () => {
    await world.kube.delete(SERVICES, {
      namespace: ns,
      name: "cache",
    });
    expect(await world.resync(world.exporter)).toMatchObject({ kind: "done" });
    expect((await world.conditions(EXPORTS, ns, "cache"))["ExportValid"]?.message).toBe(
      `export service '${ns}/cache' does not exist`,
    );
  });

  it("an external host needs no Service", async () => {
    await world.exportOf(ns, "ext", { host: "db.example.com", port: 5432 });
    await world.exportEvent(ns, "ext", "add");
    expect((await world.conditions(EXPORTS, ns, "ext"))["ExportValid"]).toEqual(valid);
  });
});
