import { startCnfSim, type CnfSim } from "../../../dev/cnf-sim/index.js";
import {
  CnfClient,
  CnfCredentials,
  CnfHttpError,
  CnfLoginError,
  CnfSessionCache,
  classifyCnfFailure,
  type CnfClientOptions,
} from "../../../shared/cnf/index.js";

const zones = { module: "firewall", collection: "zones" } as const;
const zone = { name: "lan0", network: ["net0"], input: "ACCEPT" };

describe("CNF client: login and cookie reuse", () => {
  let sim: CnfSim;
  let sessions: CnfSessionCache;
  const client = (extra: Partial<CnfClientOptions> = {}) =>
    new CnfClient({
      baseUrl: sim.url,
      credentials: new CnfCredentials("root", "pw"),
      sessions,
      retry: { minDelayMs: 1, maxDelayMs: 2 },
      ...extra,
    });

  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.41", password: "pw" });
    sessions = new CnfSessionCache();
  });
  afterEach(() => sim.close());

  it("logs in once for many calls, across client instances of the same process", async () => {
    await client().update(zones, zone);
    for (let i = 0; i < 5; i++) await client().get(zones, "lan0");
    await client().list(zones);
    expect(sim.counters().logins).toBe(1);
    expect(sessions.size).toBe(1);
  });

  it("shares one login between concurrent first calls", async () => {
    const c = client();
    await Promise.all(Array.from({ length: 8 }, () => c.list(zones)));
    expect(sim.counters().logins).toBe(1);
    expect(sim.counters().collections["firewall/zones"]?.reads).toBe(8);
  });

  it("logs in again exactly once when the cookie has expired, and the call succeeds", async () => {
    const c = client();
    await c.update(zones, zone);
    sim.expireSessions();
    expect(await c.get(zones, "lan0")).toMatchObject({ name: "lan0" });
    expect(sim.counters().logins).toBe(2);
    expect(sim.counters().unauthorized).toBe(1);
  });

  it("logs in again after the CNF restarted (its sessions are gone)", async () => {
    const c = client();
    await c.update(zones, zone);
    sim.restartCnf();
    expect(await c.get(zones, "lan0")).toBeUndefined();
    expect(sim.counters().logins).toBe(2);
  });

  it("gives up after one re-login when the CNF still answers 403: a transient 'unauthorized' error", async () => {
    sim.failNext({ kind: "status", status: 403, collection: "firewall/zones", count: 2 });
    const error = await client()
      .list(zones)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CnfHttpError);
    expect(error).toMatchObject({ status: 403, rejection: "unauthorized", attempts: 1 });
    expect(classifyCnfFailure(error)).toBe("transient");
    expect(sim.counters().logins).toBe(2);
  });

  it("reports a refused login as login-failed with the status, without retrying it", async () => {
    const bad = client({ credentials: new CnfCredentials("root", "wrong") });
    const error = await bad.list(zones).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CnfLoginError);
    expect(error).toMatchObject({ code: "login-failed", status: 403 });
    expect(sim.counters().failedLogins).toBe(1);
    expect(sim.counters().collections).toEqual({});
  });

  it("counts every HTTP call, the login included, on the caller's counter", async () => {
    const calls = { api: 0, cnf: 0 };
    const c = client({ calls });
    await c.update(zones, zone);
    await c.get(zones, "lan0");
    expect(calls).toEqual({ api: 0, cnf: 3 });
    sim.expireSessions();
    await c.get(zones, "lan0");
    expect(calls.cnf).toBe(3 + 3); // 403, login, repeat
  });
});
