import { startCnfSim, type CnfSim } from "../../../dev/cnf-sim/index.js";
import { LUCI, login, raw, restApi, tryJson } from "./support.js";

describe("CNF simulator: login with the sysauth cookie (reference 2.1)", () => {
  let sim: CnfSim;
  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.21", password: "s3cret" });
  });
  afterEach(() => sim.close());

  it("answers a correct form login with 302 and a sysauth cookie", async () => {
    const reply = await raw(sim, "POST", `${LUCI}/`, {
      body: "luci_username=root&luci_password=s3cret",
      contentType: "application/x-www-form-urlencoded",
    });
    expect(reply.status).toBe(302);
    expect(String(reply.headers["set-cookie"])).toMatch(
      /^sysauth=[0-9a-f]{32}; path=\/cgi-bin\/luci\//,
    );
  });

  it("refuses a wrong password with 403 and no cookie", async () => {
    const reply = await raw(sim, "POST", LUCI, {
      body: "luci_username=root&luci_password=wrong",
      contentType: "application/x-www-form-urlencoded",
    });
    expect(reply.status).toBe(403);
    expect(reply.headers["set-cookie"]).toBeUndefined();
    expect(sim.counters().failedLogins).toBe(1);
  });

  it("answers 403 without a cookie, with an unknown cookie, and after the session expired", async () => {
    const path = `${LUCI}/sdewan/mwan3/v1/policies`;
    expect((await raw(sim, "GET", path)).status).toBe(403);
    expect((await raw(sim, "GET", path, { cookie: "0123456789abcdef" })).status).toBe(403);
    const token = await login(sim, "s3cret");
    expect((await raw(sim, "GET", path, { cookie: token })).status).toBe(200);
    sim.expireSessions();
    expect((await raw(sim, "GET", path, { cookie: token })).status).toBe(403);
    expect(sim.counters().unauthorized).toBe(3);
  });

  it("ends the session on admin/logout", async () => {
    const token = await login(sim, "s3cret");
    expect((await raw(sim, "GET", `${LUCI}/admin/logout`, { cookie: token })).status).toBe(302);
    expect((await raw(sim, "GET", `${LUCI}/sdewan/v1/services`, { cookie: token })).status).toBe(
      403,
    );
  });

  it("drops its sessions when the CNF restarts", async () => {
    const token = await login(sim, "s3cret");
    sim.restartCnf();
    expect((await raw(sim, "GET", `${LUCI}/sdewan/v1/services`, { cookie: token })).status).toBe(
      403,
    );
  });
});

describe("CNF simulator without login enforcement (as upstream LuCI probably behaves)", () => {
  it("serves REST calls without a cookie", async () => {
    const sim = await startCnfSim({ host: "127.0.0.21", requireLogin: false });
    try {
      const reply = await raw(sim, "GET", `${LUCI}/sdewan/firewall/v1/zones`);
      expect(reply.status).toBe(200);
      expect(tryJson(reply.text)).toEqual({ zones: [] });
    } finally {
      await sim.close();
    }
  });
});

describe("CNF simulator: URI and method rules (reference 2.2)", () => {
  let sim: CnfSim;
  let api: Awaited<ReturnType<typeof restApi>>;
  beforeAll(async () => {
    sim = await startCnfSim({ host: "127.0.0.22" });
    api = await restApi(sim);
  });
  afterAll(() => sim.close());

  const base = `${LUCI}/sdewan/mwan3/v1/rules`;

  it.each([
    ["POST", `${base}/x`, "POST needs the 6-segment collection URI"],
    ["PUT", base, "PUT needs the 7-segment item URI"],
    ["DELETE", base, "DELETE needs the 7-segment item URI"],
    ["GET", `${base}/x/y`, "GET accepts only 6 or 7 segments"],
  ])("%s %s -> 400 Bad request URI (%s)", async (method, path) => {
    const reply = await api.call(method, path, {});
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({ message: "Bad request URI" });
    expect(reply.headers["content-type"]).toBe("text/plain");
  });

  it("ignores empty segments, so a trailing or doubled slash is harmless", async () => {
    expect((await api.call("GET", `${base}/`)).json).toEqual({ rules: [] });
    expect((await api.call("GET", `${LUCI}//sdewan/mwan3//v1/rules`)).status).toBe(200);
  });

  it("answers 405 Method Not Allowed for other methods", async () => {
    const reply = await api.call("PATCH", base, {});
    expect(reply.status).toBe(405);
    expect(reply.json).toEqual({ message: "Method Not Allowed" });
  });

  it("answers 404 for a collection the CNF does not have, like the removed ipsec sites", async () => {
    expect((await api.call("GET", `${LUCI}/sdewan/ipsec/v1/sites`)).status).toBe(404);
  });

  it("answers the help endpoints", async () => {
    for (const path of [
      "sdewan/v1",
      "sdewan/mwan3/v1",
      "sdewan/firewall/v1",
      "sdewan/ipsec/v1",
      "sdewan/service/v1",
    ]) {
      expect((await api.call("GET", `${LUCI}/${path}`)).json).toEqual({
        message: "sdewan restful API service v1",
      });
    }
  });

  it("puts the error message in the status line, as LuCI does", async () => {
    const reply = await api.call("POST", `${LUCI}/sdewan/mwan3/v1/rules`, { policy: "p" });
    expect(reply.status).toBe(400);
    expect(reply.reason).toBe(
      "Field[policy] checked failed: invalid policy [Policy[p] is not definied]",
    );
  });
});

// A CNF Deployment's readiness probe (manifests/samples/cnf-deployment.yaml: GET / on port 80)
// asks the web server's front page, which OpenWrt's uhttpd serves without a login: a page that
// sends the browser on to LuCI. The simulator as a Pod is probed the same way.
describe("CNF simulator: the web server's front page, as a kubelet probes it", () => {
  let sim: CnfSim;
  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.23", password: "s3cret" });
  });
  afterEach(() => sim.close());

  it("answers GET / with 200 and a page that leads to LuCI, without a login", async () => {
    const reply = await raw(sim, "GET", "/");
    expect(reply.status).toBe(200);
    expect(reply.headers["content-type"]).toBe("text/html");
    expect(reply.text).toContain(`${LUCI}/`);
  });

  it("is not a CNF request: not logged, not counted, not failed by an injected fault", async () => {
    sim.failNext({ kind: "status", status: 500 });
    expect((await raw(sim, "GET", "/")).status).toBe(200);
    expect(sim.requests()).toEqual([]);
    expect(sim.counters().unauthorized).toBe(0);
    // The fault is still there for the next CNF request.
    expect((await raw(sim, "GET", `${LUCI}/sdewan/v1`)).status).toBe(500);
  });

  it("stops answering when the CNF refuses connections, as a dead CNF's probe fails", async () => {
    await sim.refuseConnections();
    await expect(raw(sim, "GET", "/")).rejects.toThrow(/ECONNREFUSED/);
  });
});
