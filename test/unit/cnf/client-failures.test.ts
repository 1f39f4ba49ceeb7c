import { startCnfSim, type CnfSim } from "../../../dev/cnf-sim/index.js";
import {
  CnfAbortedError,
  CnfBadReplyError,
  CnfClient,
  CnfCredentials,
  CnfHttpError,
  CnfSessionCache,
  CnfTimeoutError,
  CnfUnreachableError,
  DEFAULT_CNF_TUNING,
  classifyCnfFailure,
  cnfFailureReason,
  isTransient,
  type CnfClientOptions,
} from "../../../shared/cnf/index.js";
import { samples } from "./support.js";

const zones = { module: "firewall", collection: "zones" } as const;

describe("CNF client: transient failures, retry and typed errors", () => {
  let sim: CnfSim;
  const client = (extra: Partial<CnfClientOptions> = {}) =>
    new CnfClient({
      baseUrl: sim.url,
      credentials: new CnfCredentials("root", ""),
      sessions: new CnfSessionCache(),
      retry: { retries: 2, minDelayMs: 1, maxDelayMs: 2 },
      ...extra,
    });
  const zoneRequests = () => sim.requests().filter((r) => r.path.endsWith("/firewall/v1/zones"));

  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.43" });
  });
  afterEach(() => sim.close());

  it("retries a 5xx and succeeds on the next attempt", async () => {
    sim.failNext({ kind: "status", status: 500, collection: "firewall/zones", count: 2 });
    expect(await client().list(zones)).toEqual([]);
    expect(zoneRequests().map((r) => r.status)).toEqual([500, 500, 200]);
  });

  it("gives up when the retry budget is spent, with a transient typed error that says how often it tried", async () => {
    sim.failNext({ kind: "status", status: 503, message: "busy", collection: "zones", count: 10 });
    const error = await client()
      .list(zones)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CnfHttpError);
    expect(error).toMatchObject({
      code: "cnf-http",
      status: 503,
      cnfMessage: "busy",
      rejection: "server-error",
      attempts: 3,
    });
    expect(isTransient(error)).toBe(true);
  });

  it("spends well under a second with the default budget against a CNF that always fails", async () => {
    sim.failNext({ kind: "status", status: 500, collection: "zones", count: 100 });
    const started = Date.now();
    const error = await client({ retry: DEFAULT_CNF_TUNING.retry })
      .list(zones)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500, attempts: DEFAULT_CNF_TUNING.retry.retries + 1 });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("does not repeat a POST that got a 5xx (the CNF may have created it)", async () => {
    sim.failNext({ kind: "status", status: 500, method: "POST", collection: "zones" });
    const error = await client()
      .create(zones, samples.zone)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500, attempts: 1 });
    expect(zoneRequests()).toHaveLength(1);
  });

  it("times out a hanging request, retries, and succeeds", async () => {
    sim.failNext({ kind: "hang", collection: "firewall/zones" });
    // A second per attempt and a budget that leaves room for a retry: the attempt after the
    // hang must not race a short timeout on a busy CI worker (100 ms flaked there).
    const retry = { retries: 2, minDelayMs: 1, maxDelayMs: 2, budgetMs: 5_000 };
    expect(await client({ timeoutMs: 1_000, retry }).list(zones)).toEqual([]);
    expect(zoneRequests().map((r) => r.status)).toEqual([null, 200]);
  });

  it("waits longer for a write, and never sends a write again after a timeout (it may still land)", async () => {
    sim.failNext({ kind: "delay", ms: 300, method: "PUT", collection: "zones" });
    const written = await client({ timeoutMs: 100, writeTimeoutMs: 2000 }).update(
      zones,
      samples.zone,
    );
    expect(written.name).toBe(samples.zone.name);
    sim.failNext({ kind: "hang", method: "PUT", collection: "zones" });
    const error = await client({ timeoutMs: 50, writeTimeoutMs: 100 })
      .update(zones, samples.zone)
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "timeout", timeoutMs: 100, inDoubt: true, attempts: 1 });
    expect(classifyCnfFailure(error)).toBe("transient");
    const puts = sim.requests().filter((r) => r.method === "PUT");
    expect(puts.map((r) => r.fault)).toEqual(["delay", "hang"]);
  });

  it("reports a CNF that keeps hanging as a transient timeout", async () => {
    sim.failNext({ kind: "hang", collection: "zones", count: 5 });
    const error = await client({ timeoutMs: 50, retry: { retries: 0 } })
      .list(zones)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CnfTimeoutError);
    expect(error).toMatchObject({ code: "timeout", timeoutMs: 50 });
    expect(classifyCnfFailure(error)).toBe("transient");
  });

  it("reports a refused connection as unreachable", async () => {
    const c = client();
    await sim.refuseConnections();
    const error = await c.list(zones).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CnfUnreachableError);
    expect(error).toMatchObject({
      code: "unreachable",
      systemCode: "ECONNREFUSED",
      notSent: true,
      attempts: 3,
    });
    expect(isTransient(error)).toBe(true);
    await sim.acceptConnections();
    expect(await c.list(zones)).toEqual([]);
  });

  it("reports connections reset by the CNF as unreachable, and recovers from a single reset", async () => {
    sim.failNext({ kind: "reset", collection: "firewall/zones" });
    expect(await client().list(zones)).toEqual([]);
    sim.resetConnections(true);
    const error = await client()
      .list(zones)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CnfUnreachableError);
    expect(error).toMatchObject({ systemCode: "ECONNRESET", notSent: false });
  });

  it("reports garbage in a success reply as bad-reply (transient)", async () => {
    sim.failNext({ kind: "garbage", collection: "firewall/zones", count: 3 });
    const error = await client()
      .list(zones)
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(CnfBadReplyError);
    expect(error).toMatchObject({ code: "bad-reply", status: 200 });
    expect((error as Error).message).toMatch(/not JSON/);
    expect(isTransient(error)).toBe(true);
  });

  it("reports well-formed JSON of the wrong shape as bad-reply", async () => {
    sim.failNext({ kind: "garbage", body: '{"policies": []}', collection: "zones", count: 3 });
    await expect(client().list(zones)).rejects.toBeInstanceOf(CnfBadReplyError);
    sim.failNext({ kind: "garbage", body: '{"name": "other"}', collection: "zones", count: 3 });
    await expect(client().get(zones, "lan0")).rejects.toThrow(/expected "lan0"/);
  });

  it("stops at once when the caller's signal aborts", async () => {
    const controller = new AbortController();
    sim.failNext({ kind: "hang", collection: "zones" });
    const pending = client({ signal: controller.signal, timeoutMs: 10_000 })
      .list(zones)
      .catch((e: unknown) => e);
    controller.abort();
    const error = await pending;
    expect(error).toBeInstanceOf(CnfAbortedError);
    expect(isTransient(error)).toBe(true);
  });

  it("names the CNF and the operation in every error message", async () => {
    sim.failNext({ kind: "status", status: 500, message: "boom", collection: "zones", count: 3 });
    const error = (await client()
      .get(zones, "lan0")
      .catch((e: unknown) => e)) as Error;
    expect(error.message).toBe(`CNF ${sim.url} GET sdewan/firewall/v1/zones/lan0: HTTP 500 boom`);
  });
});

describe("CNF client: failed calls counted by reason for sdewan_cnf_failures_total", () => {
  let sim: CnfSim;
  beforeEach(async () => {
    sim = await startCnfSim({ host: "127.0.0.43" });
  });
  afterEach(() => sim.close());

  it("counts one failure per logical call after the retry, by rejection or error code; a 404 is an answer", async () => {
    const calls: { cnf: number; cnfFailures?: Record<string, number> } = { cnf: 0 };
    const client = new CnfClient({
      baseUrl: sim.url,
      credentials: new CnfCredentials("root", ""),
      sessions: new CnfSessionCache(),
      retry: { retries: 1, minDelayMs: 1, maxDelayMs: 2 },
      calls,
    });
    expect(await client.list(zones)).toEqual([]);
    expect(calls.cnfFailures).toBeUndefined();
    sim.failNext({ kind: "status", status: 500, collection: "zones", count: 2 });
    await expect(client.list(zones)).rejects.toBeInstanceOf(CnfHttpError);
    sim.failNext({ kind: "status", status: 400, message: "bad", collection: "zones", count: 1 });
    await expect(client.list(zones)).rejects.toBeInstanceOf(CnfHttpError);
    expect(await client.delete(zones, "absent-zone")).toBe("absent");
    // A 4xx to a GET is the CNF failing to read (retried), not a verdict on a rule.
    expect(calls.cnfFailures).toEqual({ "server-error": 1, "read-failed": 1 });
  });

  it("names an unreachable CNF", () => {
    expect(
      cnfFailureReason(
        new CnfUnreachableError({ endpoint: "e", operation: "o" }, "ECONNREFUSED", null),
      ),
    ).toBe("unreachable");
    expect(
      cnfFailureReason(new CnfAbortedError({ endpoint: "e", operation: "o" })),
    ).toBeUndefined();
  });
});
