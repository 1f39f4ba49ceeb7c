import { request as httpRequest } from "node:http";
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
    const running = await startServer(createFunctionApp(gated.fn, runtime), runtime, {
      port: 0,
      host: "127.0.0.1",
    });
    const inFlight = post(running, "r1");
    await gated.started;

    const closed = running.close();
    expect(await runtime.isReady()).toBe(false);
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

  it("close() twice is one shutdown", async () => {
    const { runtime } = capturingRuntime();
    const running = await startServer(createFunctionApp(gatedFunction().fn, runtime), runtime, {
      port: 0,
      host: "127.0.0.1",
    });
    await Promise.all([running.close(), running.close()]);
  });
});
