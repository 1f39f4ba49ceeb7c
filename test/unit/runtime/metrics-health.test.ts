import request from "supertest";
import { createFunctionApp } from "../../../shared/runtime/index.js";
import type { Outcome } from "../../../shared/core/outcome.js";
import { binaryRefHeaders, capturingRuntime, eventFunction, refData } from "./helpers.js";

const callsTwoApisAndOneCnf = eventFunction("counting", (_event, ctx): Outcome => {
  ctx.calls.api += 2;
  ctx.calls.cnf += 1;
  return { kind: "done", result: "updated" };
});

describe("GET /metrics", () => {
  it("counts events by function, type and outcome, durations, API and CNF calls", async () => {
    const { runtime } = capturingRuntime();
    const app = createFunctionApp(callsTwoApisAndOneCnf, runtime);
    await request(app).post("/").set(binaryRefHeaders("a")).send(refData("a")).expect(202);
    await request(app).post("/").set(binaryRefHeaders("b")).send(refData("b")).expect(202);
    await request(app).post("/").set("content-type", "application/json").send("{").expect(400);

    const res = await request(app).get("/metrics").expect(200);
    expect(res.headers["content-type"]).toMatch(/^text\/plain/);
    const text = res.text;
    expect(text).toContain(
      'sdewan_events_total{function="counting",type="dev.knative.apiserver.ref.update",outcome="done"} 2',
    );
    expect(text).toContain(
      'sdewan_event_duration_seconds_count{function="counting",outcome="done"} 2',
    );
    expect(text).toContain('sdewan_api_calls_total{function="counting"} 4');
    expect(text).toContain('sdewan_cnf_calls_total{function="counting"} 2');
    expect(text).toContain('sdewan_intake_errors_total{function="counting",code="bad-json"} 1');
    expect(text).toContain("sdewan_requests_in_flight 0");
  });

  it("logs one JSON line per event with correlation id, object, outcome, duration and calls", async () => {
    const { runtime, lines } = capturingRuntime();
    await request(createFunctionApp(callsTwoApisAndOneCnf, runtime))
      .post("/")
      .set(binaryRefHeaders("a", "ce-id-1"))
      .send(refData("a"))
      .expect(202);
    const eventLines = lines.filter((line) => line["function"] === "counting");
    expect(eventLines).toEqual([
      expect.objectContaining({
        level: "info",
        correlationId: "ce-id-1",
        eventType: "dev.knative.apiserver.ref.update",
        action: "update",
        object: "Mwan3Rule ns1/a",
        outcome: "done",
        result: "updated",
        durationMs: expect.any(Number) as unknown,
        calls: { api: 2, cnf: 1 },
        msg: "Mwan3Rule ns1/a updated",
      }),
    ]);
  });
});

describe("health and readiness", () => {
  const app = (isReady?: () => boolean) =>
    createFunctionApp(callsTwoApisAndOneCnf, capturingRuntime(isReady ? { isReady } : {}).runtime);

  it("GET /_/health is 200 while the process runs", async () => {
    await request(app()).get("/_/health").expect(200, "ok");
  });

  it("GET /_/ready is 200 when ready", async () => {
    await request(app()).get("/_/ready").expect(200, "ready");
  });

  it("GET /_/ready is 503 when the readiness check says no", async () => {
    await request(app(() => false))
      .get("/_/ready")
      .expect(503);
  });

  it("GET /_/ready is 503 once shutdown has begun, while health stays 200", async () => {
    const { runtime } = capturingRuntime();
    const served = createFunctionApp(callsTwoApisAndOneCnf, runtime);
    runtime.beginShutdown();
    await request(served).get("/_/ready").expect(503);
    await request(served).get("/_/health").expect(200);
  });

  it("other paths are 404", async () => {
    await request(app()).post("/elsewhere").send("{}").expect(404);
  });
});
