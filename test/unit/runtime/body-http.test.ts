// How the runtime reads a request body and matches a route, now that it serves with node:http
// alone (shared/runtime/body.ts, app.ts): the behaviours express gave and callers rely on.
import { request as httpRequest } from "node:http";
import type { AddressInfo } from "node:net";
import { brotliCompressSync, deflateSync, gzipSync } from "node:zlib";
import request from "supertest";
import {
  createCombinedApp,
  createFunctionApp,
  type FunctionApp,
} from "../../../shared/runtime/index.js";
import { createServer } from "../../../shared/runtime/server.js";
import { binaryRefHeaders, capturingRuntime, outcomeByName, refData } from "./helpers.js";

const app = (maxBodyBytes?: number) =>
  createFunctionApp(
    outcomeByName,
    capturingRuntime(maxBodyBytes === undefined ? {} : { maxBodyBytes }).runtime,
  );

interface Answer {
  readonly status: number | undefined;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

/**
 * POSTs `chunks` as they are (supertest turns a Buffer sent as JSON into JSON text), chunked
 * when there is more than one.
 */
async function post(
  listener: FunctionApp,
  headers: Record<string, string>,
  chunks: readonly Buffer[],
): Promise<Answer> {
  const server = createServer(listener);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const single = chunks.length === 1 ? chunks[0] : undefined;
    return await new Promise<Answer>((resolve, reject) => {
      const req = httpRequest(
        {
          port,
          host: "127.0.0.1",
          method: "POST",
          path: "/",
          headers: single ? { ...headers, "content-length": String(single.length) } : headers,
        },
        (res) => {
          const body: Buffer[] = [];
          res.on("data", (chunk: Buffer) => body.push(chunk));
          res.on("end", () =>
            resolve({
              status: res.statusCode,
              headers: res.headers,
              body: Buffer.concat(body).toString("utf8"),
            }),
          );
        },
      );
      req.on("error", reject);
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });
  } finally {
    server.close();
  }
}

const verbose = { "X-Sdewan-Verbose": "1" };

describe("request bodies", () => {
  it.each([
    ["gzip", gzipSync],
    ["deflate", deflateSync],
    ["br", brotliCompressSync],
  ] as const)("a %s body is decoded before it is parsed", async (encoding, encode) => {
    const res = await post(app(), { ...binaryRefHeaders("done-1"), "content-encoding": encoding }, [
      encode(Buffer.from(refData("done-1"))),
    ]);
    expect(res.status).toBe(202);
  });

  it("an unknown Content-Encoding -> 415 naming it", async () => {
    const res = await post(
      app(),
      { ...binaryRefHeaders("x"), ...verbose, "content-encoding": "compress" },
      [Buffer.from("abc")],
    );
    expect(res.status).toBe(415);
    expect(JSON.parse(res.body)).toMatchObject({
      code: "unsupported-content-type",
      reason: expect.stringContaining('"compress"') as unknown,
    });
  });

  it("a body that is not the gzip it claims -> 400 with zlib's reason", async () => {
    const res = await post(app(), { ...binaryRefHeaders("x"), "content-encoding": "gzip" }, [
      Buffer.from("not gzip at all"),
    ]);
    expect(res.status).toBe(400);
    expect(res.headers["x-sdewan-reason"]).toBe("could not read the body: incorrect header check");
  });

  it("a decoded body over the limit -> 413, however small it was on the wire", async () => {
    const big = JSON.stringify({ kind: "Mwan3Rule", name: "x".repeat(5_000) });
    const res = await post(
      app(1_000),
      { ...binaryRefHeaders("x"), ...verbose, "content-encoding": "gzip" },
      [gzipSync(Buffer.from(big))],
    );
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toMatchObject({ code: "body-too-large" });
  });

  it("a chunked body (no Content-Length) over the limit -> 413, and the reply arrives", async () => {
    const chunks = Array.from({ length: 10 }, () => Buffer.from("x".repeat(500)));
    const res = await post(app(1_000), binaryRefHeaders("x"), chunks);
    expect(res.status).toBe(413);
    expect(res.headers["x-sdewan-code"]).toBe("body-too-large");
  });
});

describe("routes", () => {
  const combined = () =>
    createCombinedApp([outcomeByName], capturingRuntime().runtime) as Parameters<typeof request>[0];

  it("a trailing slash, upper case and a query match the route, as they did with express", async () => {
    for (const path of ["/by-name/", "/BY-NAME", "/by-name?x=1", "/?x=1"]) {
      await request(combined())
        .post(path)
        .set(binaryRefHeaders("done-1"))
        .send(refData("done-1"))
        .expect(202);
    }
  });

  it("HEAD answers as GET; other methods and paths are 404", async () => {
    await request(combined()).head("/_/health").expect(200);
    await request(combined()).get("/by-name").expect(404);
    await request(combined()).put("/by-name").send("{}").expect(404);
    await request(combined()).post("/_/health").expect(404);
    await request(combined()).get("/nowhere").expect(404);
  });

  it("health answers text/plain with a charset", async () => {
    const res = await request(combined()).get("/_/health").expect(200);
    expect(res.headers["content-type"]).toBe("text/plain; charset=utf-8");
    expect(res.text).toBe("ok");
  });
});
