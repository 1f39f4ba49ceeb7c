import request from "supertest";
import { createFunctionApp, logProcessFaults } from "../../../shared/runtime/index.js";
import type { Outcome } from "../../../shared/core/outcome.js";
import {
  BATCH,
  binaryRefHeaders,
  capturingRuntime,
  eventFunction,
  refData,
  structuredRef,
} from "./helpers.js";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe("a handler that throws is answered 500 with an error id, and the server goes on", () => {
  const throwsOnBoom = eventFunction("throws", (event): Outcome => {
    if (event.type === "object" && event.ref.name === "boom") {
      throw new Error("CNF client exploded");
    }
    return { kind: "done", result: "unchanged" };
  });

  it("500 with X-Sdewan-Error-Id, logged once with the same id and the stack", async () => {
    const { runtime, lines } = capturingRuntime();
    const app = createFunctionApp(throwsOnBoom, runtime);
    const res = await request(app).post("/").set(binaryRefHeaders("boom")).send(refData("boom"));
    expect(res.status).toBe(500);
    expect(res.text).toBe("");
    expect(res.headers["x-sdewan-outcome"]).toBe("error");
    const errorId = String(res.headers["x-sdewan-error-id"]);
    expect(errorId).toMatch(UUID);
    const logged = lines.filter((line) => line["errorId"] === errorId);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({
      level: "error",
      correlationId: "id-boom",
      function: "throws",
      object: "Mwan3Rule ns1/boom",
      outcome: "error",
      err: {
        message: "CNF client exploded",
        stack: expect.stringContaining("Error: CNF client exploded") as unknown,
      },
    });

    const next = await request(app).post("/").set(binaryRefHeaders("fine")).send(refData("fine"));
    expect(next.status).toBe(202);
  });

  it("in a batch the error outranks every outcome, and the other events still run", async () => {
    const { runtime, lines } = capturingRuntime();
    const res = await request(createFunctionApp(throwsOnBoom, runtime))
      .post("/")
      .set("content-type", BATCH)
      .send(JSON.stringify([structuredRef("boom"), structuredRef("after")]));
    expect(res.status).toBe(500);
    expect(lines.filter((line) => line["function"] === "throws")).toHaveLength(2);
  });

  it("a handler that returns something that is not an Outcome is a 500 too", async () => {
    const sloppy = eventFunction("sloppy", () => Promise.resolve(undefined as unknown as Outcome));
    const { runtime } = capturingRuntime();
    const res = await request(createFunctionApp(sloppy, runtime))
      .post("/")
      .set(binaryRefHeaders("x"))
      .send(refData("x"));
    expect(res.status).toBe(500);
  });

  it("an unhandled promise rejection is logged, not fatal", () => {
    const { runtime, lines } = capturingRuntime();
    const before = process.listeners("unhandledRejection");
    logProcessFaults(runtime.logger);
    const added = process
      .listeners("unhandledRejection")
      .filter((listener) => !before.includes(listener));
    try {
      expect(added).toHaveLength(1);
      added[0]?.(new Error("forgotten await"), Promise.resolve());
      expect(lines).toContainEqual(
        expect.objectContaining({
          level: "error",
          msg: "unhandled promise rejection",
          err: expect.objectContaining({ message: "forgotten await" }) as unknown,
        }),
      );
    } finally {
      for (const listener of added) process.off("unhandledRejection", listener);
    }
  });
});
