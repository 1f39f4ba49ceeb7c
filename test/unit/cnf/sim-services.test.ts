import { startCnfSim, type CnfSim } from "../../../dev/cnf-sim/index.js";
import { LUCI, restApi, samples } from "./support.js";

describe("CNF simulator: the service restart endpoint (reference 2.3, 3.3)", () => {
  let sim: CnfSim;
  let api: Awaited<ReturnType<typeof restApi>>;
  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.26" });
    api = await restApi(sim);
  });
  afterEach(() => sim.close());

  const service = (name: string) => `${LUCI}/sdewan/v1/service/${name}`;

  it("records each restart with the command the CNF would run", async () => {
    for (const name of ["mwan3", "firewall", "ipsec"]) {
      expect(await api.call("PUT", service(name), { action: "restart" })).toMatchObject({
        status: 200,
        text: '{"message":"success"}',
      });
    }
    expect(sim.serviceActions().map((a) => [a.service, a.action, a.command])).toEqual([
      ["mwan3", "restart", "/etc/init.d/mwan3 restart"],
      ["firewall", "restart", "/etc/init.d/firewall restart"],
      ["ipsec", "restart", "/etc/init.d/ipsec restart"],
    ]);
  });

  it("maps reload as upstream does: mwan3 and ipsec restart, firewall runs fw3 reload", async () => {
    for (const name of ["mwan3", "firewall", "ipsec"])
      await api.call("PUT", service(name), { action: "reload" });
    expect(sim.serviceActions().map((a) => a.command)).toEqual([
      "/etc/init.d/mwan3 restart",
      "fw3 reload",
      "/etc/init.d/ipsec restart",
    ]);
  });

  it("refuses an unknown service, an unknown action, and methods other than PUT", async () => {
    expect((await api.call("PUT", service("dnsmasq"), { action: "restart" })).json).toEqual({
      message: "Bad request URI",
    });
    expect((await api.call("PUT", service("mwan3"), { action: "bounce" })).json).toEqual({
      message: "Field[action] checked failed: wrong action",
    });
    expect((await api.call("PUT", service("mwan3"), {})).json).toEqual({
      message: "Field[action] checked failed: required",
    });
    expect((await api.call("GET", service("mwan3"))).status).toBe(405);
    expect(sim.serviceActions()).toEqual([]);
    expect(sim.counters().serviceActions).toBe(4);
  });

  it("lists the services", async () => {
    expect((await api.call("GET", `${LUCI}/sdewan/v1/services`)).json).toEqual({
      services: ["mwan3", "firewall", "ipsec"],
    });
    expect((await api.call("POST", `${LUCI}/sdewan/v1/services`, {})).status).toBe(405);
  });
});

describe("CNF simulator: CNFService DNAT (sdewan/service/v1/services)", () => {
  let sim: CnfSim;
  let api: Awaited<ReturnType<typeof restApi>>;
  beforeEach(async () => {
    sim = await startCnfSim({
      host: "127.0.0.26",
      resolveService: (name) => (name.startsWith("missing.") ? undefined : "100.65.0.10"),
    });
    api = await restApi(sim);
  });
  afterEach(() => sim.close());

  it("POST answers 200 echoing the body; GET lists and reads it; DELETE answers 200 with an empty body", async () => {
    expect(await api.post("service/services", samples.service)).toMatchObject({
      status: 200,
      json: samples.service,
    });
    expect((await api.get("service/services")).json).toEqual({ services: [samples.service] });
    expect((await api.get("service/services/svc1")).json).toEqual(samples.service);
    expect(await api.delete("service/services/svc1")).toMatchObject({ status: 200, text: "" });
    expect(await api.get("service/services/svc1")).toMatchObject({
      status: 404,
      json: { message: "Cannot find service[svc1]" },
    });
  });

  it("answers DELETE of an absent service with 200 too", async () => {
    expect((await api.delete("service/services/ghost")).status).toBe(200);
  });

  it("has no PUT (405), so an update must be delete + create", async () => {
    expect((await api.put("service/services/svc1", samples.service)).status).toBe(405);
  });

  it("answers 416 for a port outside 1..65534, 409 for a duplicate name, 408 when the name never resolves", async () => {
    const port = await api.post("service/services", { ...samples.service, port: "65535" });
    expect(port.status).toBe(416);
    // Upstream appends the echoed body after the error: the reply is not one JSON document.
    expect(port.text).toBe(
      `{"message":"Invalid Port Range"}${JSON.stringify({ ...samples.service, port: "65535" })}`,
    );
    await api.post("service/services", samples.service);
    expect((await api.post("service/services", { ...samples.service, port: "9000" })).status).toBe(
      409,
    );
    const dns = await api.post("service/services", {
      ...samples.service,
      name: "svc2",
      fullname: "missing.ns.svc",
    });
    expect(dns.status).toBe(408);
    expect(dns.text).toMatch(/^\{"message":"Timeout: waiting for service ready..."\}/);
  });
});
