/** Inputs `npm run fuzz` found answered 500; each must be a 400 that names the problem. */
import request from "supertest";
import { createFunctionApp } from "../../../shared/runtime/index.js";
import { headerSafe } from "../../../shared/runtime/reply.js";
import { malformed } from "../../../shared/core/outcome.js";
import { binaryRefHeaders, capturingRuntime, eventFunction, jsonFunction } from "./helpers.js";

const refusesEveryKind = eventFunction("refuses", (event) =>
  malformed("UnknownKind", `does not handle ${event.type === "object" ? event.ref.kind : ""}`),
);

describe("inputs the fuzz found", () => {
  it("a kind with an emoji or a lone surrogate in a malformed reason -> 400, percent-encoded", async () => {
    for (const kind of ["K\u{1F600}nd", "\ud800Pod", "Pod\udc00"]) {
      const res = await request(createFunctionApp(refusesEveryKind, capturingRuntime().runtime))
        .post("/")
        .set(binaryRefHeaders("x"))
        .send(JSON.stringify({ kind, namespace: "default", name: "x" }));
      expect(res.status).toBe(400);
      expect(res.headers["x-sdewan-reason"]).toMatch(/^does not handle [\x20-\x7e]+$/);
    }
    expect(headerSafe("K\u{1F600}")).toBe("K%F0%9F%98%80");
    expect(headerSafe("a\ud800")).toBe("a%EF%BF%BD");
  });

  it("a reason cut in the middle of a surrogate pair is still a valid header", () => {
    const text = `${"a".repeat(510)}\u{1F600}tail`;
    expect(headerSafe(text)).toBe(`${"a".repeat(510)}%EF%BF%BD%E2%80%A6`);
  });

  it.each([
    ["event", refusesEveryKind],
    ["json", jsonFunction("echo", () => ({ status: 200, body: {} }))],
  ] as const)("a %s body that is not the gzip it claims -> 400 bad-event", async (_kind, fn) => {
    const { runtime, lines } = capturingRuntime();
    const res = await request(createFunctionApp(fn, runtime))
      .post("/")
      .set({ ...binaryRefHeaders("x"), "content-encoding": "gzip" })
      .send(Buffer.from("not gzip at all"));
    expect(res.status).toBe(400);
    expect(lines.find((line) => line["code"] === "bad-event")?.["reason"]).toMatch(
      /^could not read the body: /,
    );
  });
});
