import { once } from "node:events";
import { Agent, request as httpRequest } from "node:http";
import { createServer as createNetServer, type Socket } from "node:net";
import request from "supertest";
import {
  createFunctionApp,
  startServer,
  type RunningServer,
} from "../../../shared/runtime/index.js";
import { binaryRefHeaders, capturingRuntime, eventFunction, refData } from "./helpers.js";

interface Reply {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
}

function post(running: RunningServer, name: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      `${running.url}/`,
      { method: "POST", headers: binaryRefHeaders(name), agent: false },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(refData(name));
  });
}

/** GETs `url` through a keep-alive agent and returns the socket, idle in the agent's pool. */
function keptAliveSocket(agent: Agent, url: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent }, (res) => {
      res.resume();
      res.on("end", () => {
        if (req.socket === null) reject(new Error("the request has no socket"));
        else resolve(req.socket);
      });
    });
    req.on("error", reject);
    req.end();
  });
}

function withinMs<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`waited ${ms} ms for ${what}`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Listens on `port` of 127.0.0.1 and closes again: rejects with EADDRINUSE while it is held. */
function listenOn(port: number): Promise<void> {
  const probe = createNetServer();
  return new Promise<void>((resolve, reject) => {
    probe.once("error", reject);
    probe.listen(port, "127.0.0.1", () => probe.close(() => resolve()));
  });
}

/** A handler that reports when it has started and finishes only when the test says so. */
function gatedFunction() {
  let started!: () => void;
  let release!: () => void;
  const startedPromise = new Promise<void>((resolve) => (started = resolve));
  const gate = new Promise<void>((resolve) => (release = resolve));
  const fn = eventFunction("gated", async (_event, ctx) => {
    started();
    await Promise.race([
      gate,
      new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve())),
    ]);
    return ctx.signal.aborted
      ? { kind: "retry", reason: "aborted by shutdown", retryAfterSeconds: 1 }
      : { kind: "done", result: "updated" };
  });
  return { fn, started: startedPromise, release };
}

describe("graceful shutdown: stop accepting, finish in-flight, then close", () => {
  it("an in-flight event finishes with its real outcome after close() began", async () => {
    const { runtime } = capturingRuntime();
    const gated = gatedFunction();
    const app = createFunctionApp(gated.fn, runtime);
    const running = await startServer(app, runtime, { port: 0, host: "127.0.0.1" });
    const inFlight = post(running, "r1");
    await gated.started;
    await request(app).get("/_/ready").expect(200);

    const closed = running.close();
    // The closing server takes no new connection, so ask the same app through another one.
    await request(app).get("/_/ready").expect(503);
    await expect(post(running, "late")).rejects.toMatchObject({ code: "ECONNREFUSED" });

    gated.release();
    const reply = await inFlight;
    expect(reply.status).toBe(202);
    expect(reply.headers["connection"]).toBe("close");
    await closed;
    expect(runtime.requestsInFlight).toBe(0);
  });

  it("at the deadline the handler's signal is aborted and close() still resolves", async () => {
    const { runtime, lines } = capturingRuntime();
    const gated = gatedFunction();
    const running = await startServer(createFunctionApp(gated.fn, runtime), runtime, {
      port: 0,
      host: "127.0.0.1",
      shutdownTimeoutMs: 50,
    });
    const inFlight = post(running, "r1");
    await gated.started;
    await running.close();
    const reply = await inFlight;
    expect(reply.status).toBe(503);
    expect(lines).toContainEqual(expect.objectContaining({ drained: false }));
  });

  it("a handler that ignores its aborted signal has its connection cut, and close() resolves", async () => {
    const { runtime } = capturingRuntime();
    let started!: () => void;
    const startedPromise = new Promise<void>((resolve) => (started = resolve));
    const stuck = eventFunction("stuck", () => {
      started();
      return new Promise<never>(() => undefined);
    });
    const running = await startServer(createFunctionApp(stuck, runtime), runtime, {
      port: 0,
      host: "127.0.0.1",
      shutdownTimeoutMs: 50,
    });
    const inFlight = post(running, "r1");
    await startedPromise;
    await withinMs(running.close(), 3_000, "close() to resolve");
    await expect(inFlight).rejects.toMatchObject({ code: "ECONNRESET" });
    expect(running.server.listening).toBe(false);
  });

  it("close() twice is one shutdown: the same promise, one log line, idle keep-alive sockets closed, the port free again", async () => {
    const { runtime, lines } = capturingRuntime();
    const running = await startServer(createFunctionApp(gatedFunction().fn, runtime), runtime, {
      port: 0,
      host: "127.0.0.1",
    });
    const agent = new Agent({ keepAlive: true });
    const idle = await keptAliveSocket(agent, `${running.url}/_/health`);
    const socketClosed = once(idle, "close");

    const first = running.close();
    expect(running.close()).toBe(first);
    await first;

    await withinMs(socketClosed, 1_000, "the idle keep-alive socket to close");
    expect(lines.filter((l) => l.msg === "in-flight requests finished")).toHaveLength(1);
    expect(running.server.listening).toBe(false);
    await expect(listenOn(running.port)).resolves.toBeUndefined();
    agent.destroy();
  });
});

describe("keep-alive: an idle connection outlives the callers' own idle timeout", () => {
  it("advertises and keeps a keep-alive timeout longer than Go's 90 s, so a reused socket is open", async () => {
    const { runtime } = capturingRuntime();
    const running = await startServer(createFunctionApp(gatedFunction().fn, runtime), runtime, {
      port: 0,
      host: "127.0.0.1",
    });
    const agent = new Agent({ keepAlive: true });
    const keepAlive = await new Promise<string | undefined>((resolve, reject) => {
      const req = httpRequest(`${running.url}/_/health`, { agent });
      req.on("response", (res) => {
        res.resume();
        resolve(String(res.headers["keep-alive"]));
      });
      req.on("error", reject);
      req.end();
    }).finally(() => agent.destroy());
    await running.close();

    // Knative's dispatchers, OpenFaaS and the API server reuse a connection idle up to 90 s; a
    // server that closes it sooner races their next POST (Node's default: timeout=5).
    expect(Number(/timeout=(\d+)/.exec(keepAlive ?? "")?.[1])).toBeGreaterThan(90);
    expect(running.server.headersTimeout).toBeGreaterThan(running.server.keepAliveTimeout);
  });
});
