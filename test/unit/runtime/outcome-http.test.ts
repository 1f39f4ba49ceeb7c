import request from "supertest";
import { createFunctionApp, OUTCOME_TABLE } from "../../../shared/runtime/index.js";
import {
  BATCH,
  STRUCTURED,
  binaryRefHeaders,
  capturingRuntime,
  outcomeByName,
  refData,
  structuredRef,
} from "./helpers.js";

const app = () => createFunctionApp(outcomeByName, capturingRuntime().runtime);

const postBinary = (name: string) =>
  request(app()).post("/").set(binaryRefHeaders(name)).send(refData(name));
const postStructured = (name: string) =>
  request(app())
    .post("/")
    .set("content-type", STRUCTURED)
    .send(JSON.stringify(structuredRef(name)));

describe.each([
  ["binary", postBinary],
  ["structured", postStructured],
])("each outcome maps to its HTTP reply (%s mode)", (_mode, post) => {
  it("done -> 202 with an empty body, outcome and result in headers", async () => {
    const res = await post("done-1");
    expect(res.status).toBe(OUTCOME_TABLE.done.httpStatus);
    expect(res.status).toBe(202);
    expect(res.text).toBe("");
    expect(res.headers["content-type"]).toBeUndefined();
    expect(res.headers["x-sdewan-outcome"]).toBe("done");
    expect(res.headers["x-sdewan-reason"]).toBe("unchanged");
    expect(res.headers["x-sdewan-correlation-id"]).toBe("id-done-1");
  });

  it("retry -> 503 with Retry-After and the reason", async () => {
    const res = await post("retry-7");
    expect(res.status).toBe(503);
    expect(res.headers["retry-after"]).toBe("7");
    expect(res.headers["x-sdewan-outcome"]).toBe("retry");
    expect(res.headers["x-sdewan-reason"]).toBe("retry-7 is not ready");
    expect(res.text).toBe("");
  });

  it("permanent -> 422 with code and reason", async () => {
    const res = await post("permanent-1");
    expect(res.status).toBe(422);
    expect(res.headers).toMatchObject({
      "x-sdewan-outcome": "permanent",
      "x-sdewan-code": "InvalidSpec",
      "x-sdewan-reason": "permanent-1 can never apply",
    });
    expect(res.headers["retry-after"]).toBeUndefined();
  });

  it("malformed (decided by the handler) -> 400", async () => {
    const res = await post("malformed-1");
    expect(res.status).toBe(400);
    expect(res.headers["x-sdewan-code"]).toBe("UnknownKind");
  });
});

describe("the verbose body is sent only when asked with X-Sdewan-Verbose: 1", () => {
  it("done + verbose -> 202 with a JSON account of each event", async () => {
    const res = await request(app())
      .post("/")
      .set(binaryRefHeaders("done-1"))
      .set("X-Sdewan-Verbose", "1")
      .send(refData("done-1"));
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({
      function: "by-name",
      status: 202,
      outcome: "done",
      correlationId: "id-done-1",
      events: [
        {
          id: "id-done-1",
          ceType: "dev.knative.apiserver.ref.update",
          action: "update",
          object: { kind: "Mwan3Rule", namespace: "ns1", name: "done-1" },
          outcome: "done",
          result: "unchanged",
          calls: { api: 0, cnf: 0 },
        },
      ],
    });
  });

  it("X-Sdewan-Verbose: 0 keeps the body empty", async () => {
    const res = await request(app())
      .post("/")
      .set(binaryRefHeaders("retry-1"))
      .set("X-Sdewan-Verbose", "0")
      .send(refData("retry-1"));
    expect(res.status).toBe(503);
    expect(res.text).toBe("");
  });
});

describe("a batch is answered with its worst outcome", () => {
  const postBatch = (names: string[]) =>
    request(app())
      .post("/")
      .set("content-type", BATCH)
      .set("X-Sdewan-Verbose", "1")
      .send(JSON.stringify(names.map((name) => structuredRef(name))));

  it.each([
    [["done-1", "done-2"], 202, "done"],
    [["done-1", "malformed-1"], 400, "malformed"],
    [["malformed-1", "permanent-1", "done-1"], 422, "permanent"],
    [["permanent-1", "retry-3", "done-1"], 503, "retry"],
  ])("%j -> %i %s", async (names, status, outcome) => {
    const res = await postBatch(names);
    expect(res.status).toBe(status);
    expect(res.headers["x-sdewan-outcome"]).toBe(outcome);
    expect((res.body as { events: unknown[] }).events).toHaveLength(names.length);
  });

  it("every event of the batch is handled, even after a retry", async () => {
    const res = await postBatch(["retry-1", "done-2"]);
    const events = (res.body as { events: Array<{ outcome: string }> }).events;
    expect(events.map((event) => event.outcome)).toEqual(["retry", "done"]);
  });

  it("the longest Retry-After among retries wins", async () => {
    const res = await postBatch(["retry-2", "retry-30", "retry-5"]);
    expect(res.headers["retry-after"]).toBe("30");
  });

  it("an empty batch is 202: nothing to do", async () => {
    const res = await request(app()).post("/").set("content-type", BATCH).send("[]");
    expect(res.status).toBe(202);
    expect(res.headers["x-sdewan-reason"]).toBe("no events");
  });
});
