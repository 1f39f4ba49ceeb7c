import request from "supertest";
import { createFunctionApp } from "../../../shared/runtime/index.js";
import { loadEventFixture } from "../../fixtures/events/index.js";
import type { Outcome } from "../../../shared/core/outcome.js";
import {
  STRUCTURED,
  binaryRefHeaders,
  capturingRuntime,
  eventFunction,
  outcomeByName,
} from "./helpers.js";

describe("unusable requests are refused before the function runs", () => {
  const cases = [
    {
      title: "bad JSON",
      headers: binaryRefHeaders("x"),
      body: "{",
      expected: { status: 400, code: "bad-json", message: /^body is not valid JSON/ },
    },
    {
      title: "missing ce-type",
      headers: { "content-type": "application/json", "ce-id": "1", "ce-specversion": "1.0" },
      body: "{}",
      expected: { status: 400, code: "missing-type", message: /^CloudEvent has no type/ },
    },
    {
      title: "unknown type",
      headers: { ...binaryRefHeaders("x"), "ce-type": "com.example.other" },
      body: "{}",
      expected: {
        status: 400,
        code: "unknown-type",
        message: /^unknown CloudEvent type "com\.example\.other"/,
      },
    },
    {
      title: "wrong content type",
      headers: { "content-type": "text/plain" },
      body: "kind=Pod",
      expected: {
        status: 415,
        code: "unsupported-content-type",
        message: /^Content-Type "text\/plain": send application\/json/,
      },
    },
    {
      title: "missing name",
      headers: binaryRefHeaders("x"),
      body: JSON.stringify({ kind: "Mwan3Rule" }),
      expected: { status: 400, code: "missing-ref-field", message: /missing "name"/ },
    },
  ];

  it.each(cases)(
    "$title -> $expected.status $expected.code with the message in X-Sdewan-Reason",
    async ({ headers, body, expected }) => {
      const { runtime, lines } = capturingRuntime();
      let ran = false;
      const fn = eventFunction("must-not-run", (): Outcome => {
        ran = true;
        return { kind: "done", result: "unchanged" };
      });
      const res = await request(createFunctionApp(fn, runtime)).post("/").set(headers).send(body);
      expect(res.status).toBe(expected.status);
      expect(res.headers["x-sdewan-outcome"]).toBe("malformed");
      expect(res.headers["x-sdewan-code"]).toBe(expected.code);
      expect(decodeURIComponent(String(res.headers["x-sdewan-reason"]))).toMatch(expected.message);
      expect(res.text).toBe("");
      expect(ran).toBe(false);
      expect(lines).toContainEqual(
        expect.objectContaining({ code: expected.code, outcome: "malformed" }),
      );
    },
  );

  it("a body over the limit -> 413 without reading it", async () => {
    const { runtime } = capturingRuntime({ maxBodyBytes: 100 });
    const app = createFunctionApp(outcomeByName, runtime);
    const res = await request(app)
      .post("/")
      .set(binaryRefHeaders("big"))
      .set("X-Sdewan-Verbose", "1")
      .send(JSON.stringify({ kind: "Mwan3Rule", name: "x".repeat(200) }));
    expect(res.status).toBe(413);
    expect(res.body).toMatchObject({
      outcome: "malformed",
      code: "body-too-large",
      reason: "body is larger than the limit of 100 bytes",
    });
  });

  it("the structured fixture with '; charset=utf-8' is accepted over HTTP", async () => {
    const { headers, body } = loadEventFixture("structured-ref-add");
    expect(headers["content-type"]).toBe(STRUCTURED);
    const res = await request(createFunctionApp(outcomeByName, capturingRuntime().runtime))
      .post("/")
      .set(headers)
      .send(body);
    expect(res.status).toBe(202);
  });

  it("non-ASCII text in a reason is percent-encoded, never a broken header", async () => {
    const res = await request(createFunctionApp(outcomeByName, capturingRuntime().runtime))
      .post("/")
      .set("content-type", STRUCTURED)
      .send(JSON.stringify({ specversion: "1.0", id: "1", source: "t", type: "ref.üpdate" }));
    expect(res.status).toBe(400);
    expect(res.headers["x-sdewan-reason"]).toContain("%C3%BC");
  });
});
