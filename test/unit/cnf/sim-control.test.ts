import { startCnfSim, totalWrites, type CnfSim } from "../../../dev/cnf-sim/index.js";
import { LUCI, raw, restApi, samples, tryJson, waitFor } from "./support.js";

const zones = `${LUCI}/sdewan/firewall/v1/zones`;

describe("CNF simulator control: injected faults", () => {
  let sim: CnfSim;
  let api: Awaited<ReturnType<typeof restApi>>;
  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.27" });
    api = await restApi(sim);
  });
  afterEach(() => sim.close());

  it("fails the next N requests with a status, then serves normally", async () => {
    sim.failNext({ kind: "status", status: 500, count: 2 });
    expect((await api.get("firewall/zones")).status).toBe(500);
    expect((await api.get("firewall/zones")).status).toBe(500);
    expect((await api.get("firewall/zones")).status).toBe(200);
  });

  it("filters faults by method and by collection", async () => {
    sim.failNext({ kind: "status", status: 503, method: "post", collection: "firewall/zones" });
    sim.failNext({ kind: "status", status: 502, collection: "rules" });
    expect((await api.get("firewall/zones")).status).toBe(200);
    expect((await api.post("mwan3/policies", samples.policy)).status).toBe(201);
    expect((await api.get("mwan3/rules")).status).toBe(502);
    expect((await api.post("firewall/zones", samples.zone)).status).toBe(503);
    expect((await api.post("firewall/zones", samples.zone)).status).toBe(201);
  });

  it("can fail the login and the restart endpoint", async () => {
    sim.failNext({ kind: "status", status: 500, collection: "login" });
    sim.failNext({ kind: "status", status: 500, collection: "restart/firewall" });
    const login = await raw(sim, "POST", `${LUCI}/`, { body: "luci_username=root&luci_password=" });
    expect(login.status).toBe(500);
    expect(
      (await api.call("PUT", `${LUCI}/sdewan/v1/service/mwan3`, { action: "restart" })).status,
    ).toBe(200);
    expect(
      (await api.call("PUT", `${LUCI}/sdewan/v1/service/firewall`, { action: "restart" })).status,
    ).toBe(500);
  });

  it("hangs a request past the caller's timeout and records it unanswered", async () => {
    sim.failNext({ kind: "hang" });
    await expect(
      raw(sim, "GET", zones, { cookie: api.cookie, signal: AbortSignal.timeout(100) }),
    ).rejects.toThrow(/abort/i);
    expect(sim.requests().at(-1)).toMatchObject({ path: zones, status: null, fault: "hang" });
    expect((await api.get("firewall/zones")).status).toBe(200);
  });

  it("slows a request down and then answers it normally", async () => {
    sim.failNext({ kind: "delay", ms: 150 });
    const started = Date.now();
    const reply = await api.get("firewall/zones");
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
    expect(reply).toMatchObject({ status: 200, json: { zones: [] } });
  });

  it("lies: answers each write as the CNF would, and keeps nothing it changed", async () => {
    sim.failNext({ kind: "lie", collection: "firewall/zones" });
    const created = await api.post("firewall/zones", samples.zone);
    expect(created).toMatchObject({ status: 201, json: samples.zone });
    expect((await api.get("firewall/zones")).json).toEqual({ zones: [] });
    expect((await api.post("firewall/zones", samples.zone)).status).toBe(201);
    sim.failNext({ kind: "lie", method: "PUT" });
    sim.failNext({ kind: "lie", method: "DELETE" });
    const changed = { ...samples.zone, input: "DROP" };
    expect(await api.put("firewall/zones/lan0", changed)).toMatchObject({ status: 200 });
    expect((await api.delete("firewall/zones/lan0")).status).toBe(200);
    expect((await api.get("firewall/zones")).json).toEqual({ zones: [samples.zone] });
  });

  it("answers garbage that is not JSON", async () => {
    sim.failNext({ kind: "garbage" });
    const reply = await api.get("firewall/zones");
    expect(reply.status).toBe(200);
    expect(tryJson(reply.text)).toBeUndefined();
  });

  it("resets the connection of one request", async () => {
    sim.failNext({ kind: "reset" });
    await expect(api.get("firewall/zones")).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect((await api.get("firewall/zones")).status).toBe(200);
  });

  it("rejects an invalid fault description", () => {
    expect(() => sim.failNext({ kind: "status", status: 42 })).toThrow();
  });
});

describe("CNF simulator control: connections, CNF restart, counters, state", () => {
  let sim: CnfSim;
  let api: Awaited<ReturnType<typeof restApi>>;
  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.28" });
    api = await restApi(sim);
  });
  afterEach(() => sim.close());

  it("refuses connections while closed and serves the same state on the same port once reopened", async () => {
    await api.post("firewall/zones", samples.zone);
    await sim.refuseConnections();
    await expect(api.get("firewall/zones")).rejects.toMatchObject({ code: "ECONNREFUSED" });
    await sim.acceptConnections();
    expect((await api.get("firewall/zones")).json).toEqual({ zones: [samples.zone] });
  });

  it("destroys every CNF request's socket while resetting, but keeps the control API", async () => {
    sim.resetConnections(true);
    await expect(api.get("firewall/zones")).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect((await raw(sim, "GET", "/_sim/counters")).status).toBe(200);
    sim.resetConnections(false);
    expect((await api.get("firewall/zones")).status).toBe(200);
  });

  it("drops every object and session on a CNF restart, and keeps the counters", async () => {
    await api.post("mwan3/policies", samples.policy);
    await api.post("firewall/zones", samples.zone);
    sim.restartCnf();
    expect((await api.get("firewall/zones")).status).toBe(403);
    const fresh = await restApi(sim);
    expect((await fresh.get("mwan3/policies")).json).toEqual({ policies: [] });
    expect(sim.state().collections["firewall/zones"]).toEqual([]);
    expect(sim.counters().collections["mwan3/policies"]).toEqual({ reads: 1, writes: 1 });
  });

  it("counts reads and writes per collection, whatever the status", async () => {
    await api.post("mwan3/policies", samples.policy);
    await api.post("mwan3/policies", samples.policy); // 409, still a write
    await api.get("mwan3/policies/balance1");
    await api.get("mwan3/policies");
    await api.put("firewall/zones/lan0", samples.zone);
    await api.delete("firewall/zones/lan0");
    const counters = sim.counters();
    expect(counters.collections).toEqual({
      "mwan3/policies": { reads: 2, writes: 2 },
      "firewall/zones": { reads: 0, writes: 2 },
    });
    expect(counters.logins).toBe(1);
    expect(totalWrites(counters)).toBe(4);
    expect(totalWrites(counters, ["firewall/zones"])).toBe(2);
    sim.resetCounters();
    expect(sim.counters().collections).toEqual({});
  });

  it("does not count requests refused by a fault or by the login check", async () => {
    sim.failNext({ kind: "status", status: 500 });
    await api.post("firewall/zones", samples.zone);
    await raw(sim, "POST", zones, { body: samples.zone });
    expect(sim.counters().collections).toEqual({});
    expect(sim.requests().map((r) => [r.status, r.fault])).toEqual([
      [302, null],
      [500, "status"],
      [403, null],
    ]);
  });

  it("shows the full state keyed by collection", async () => {
    await api.post("mwan3/policies", samples.policy);
    await api.post("ipsec/proposals", samples.proposal);
    await api.post("service/services", samples.service);
    const { collections } = sim.state();
    expect(Object.keys(collections).sort()).toEqual([
      "firewall/forwardings",
      "firewall/redirects",
      "firewall/rules",
      "firewall/zones",
      "ipsec/proposals",
      "ipsec/remotes",
      "mwan3/policies",
      "mwan3/rules",
      "service/services",
    ]);
    expect(collections["ipsec/proposals"]).toEqual([samples.proposal]);
    expect(collections["service/services"]).toEqual([samples.service]);
  });
});

describe("CNF simulator control API over HTTP (/_sim/)", () => {
  let sim: CnfSim;
  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.29" });
  });
  afterEach(() => sim.close());

  it("injects faults, reads counters, restarts the CNF and expires sessions", async () => {
    const api = await restApi(sim);
    expect(
      (
        await raw(sim, "POST", "/_sim/faults", {
          body: [{ kind: "status", status: 503, count: 1 }],
        })
      ).status,
    ).toBe(201);
    expect((await api.get("firewall/zones")).status).toBe(503);
    await api.post("firewall/zones", samples.zone);
    const counters = tryJson((await raw(sim, "GET", "/_sim/counters")).text);
    expect(counters).toMatchObject({ collections: { "firewall/zones": { writes: 1 } } });
    expect((await raw(sim, "POST", "/_sim/restart")).status).toBe(200);
    expect(sim.state().collections["firewall/zones"]).toEqual([]);
    const again = await restApi(sim);
    expect((await raw(sim, "POST", "/_sim/sessions/expire")).status).toBe(200);
    expect((await again.get("firewall/zones")).status).toBe(403);
    expect((await raw(sim, "POST", "/_sim/faults", { body: { kind: "nonsense" } })).status).toBe(
      400,
    );
  });

  it("refuses connections for a while and comes back by itself", async () => {
    const reply = await raw(sim, "POST", "/_sim/connections", {
      body: { mode: "refuse", forMs: 200 },
    });
    expect(reply.status).toBe(200);
    await waitFor(async () => {
      const error = await raw(sim, "GET", "/_sim/state").then(
        () => undefined,
        (e: unknown) => e,
      );
      return (error as { code?: string } | undefined)?.code === "ECONNREFUSED";
    });
    await waitFor(
      async () => (await raw(sim, "GET", "/_sim/state").catch(() => undefined))?.status === 200,
    );
  });
});

describe("one simulator per CNF pod on its own loopback address", () => {
  it("runs several simulators on 127.0.0.x with the same port and separate state", async () => {
    const first = await startCnfSim({ host: "127.0.0.30", port: 0 });
    const second = await startCnfSim({ host: "127.0.0.31", port: first.port });
    try {
      expect(second.port).toBe(first.port);
      expect(second.url).toBe(`http://127.0.0.31:${first.port}/cgi-bin/luci/`);
      await (await restApi(first)).post("firewall/zones", samples.zone);
      expect(first.state().collections["firewall/zones"]).toHaveLength(1);
      expect(second.state().collections["firewall/zones"]).toHaveLength(0);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });
});
