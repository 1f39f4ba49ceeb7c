import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import { readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import request from "supertest";
import { createFunctionApp, startServer } from "../../../shared/runtime/index.js";
import { capturingRuntime, jsonFunction } from "./helpers.js";

const echoReview = jsonFunction("echo-review", (body) => ({
  status: 200,
  body: {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    response: { allowed: true, seen: body },
  },
}));

describe("a JsonFunction gets the JSON body and its status and body go out as they are", () => {
  it("200 with the function's body, whatever X-Sdewan-Verbose says", async () => {
    const res = await request(createFunctionApp(echoReview, capturingRuntime().runtime))
      .post("/")
      .send({ request: { uid: "u1" } })
      .expect(200);
    expect(res.body).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { allowed: true, seen: { request: { uid: "u1" } } },
    });
  });

  it("a status other than 200 is passed through", async () => {
    const teapot = jsonFunction("teapot", () => ({ status: 418, body: { short: "stout" } }));
    await request(createFunctionApp(teapot, capturingRuntime().runtime))
      .post("/")
      .send({})
      .expect(418, { short: "stout" });
  });

  it.each([
    ["not JSON", "application/json", "{", 400, "bad-json"],
    ["wrong content type", "text/plain", "{}", 415, "unsupported-content-type"],
    ["no body", "application/json", "", 400, "empty-body"],
  ])("%s -> %i with a JSON error", async (_title, type, body, status, code) => {
    const res = await request(createFunctionApp(echoReview, capturingRuntime().runtime))
      .post("/")
      .set("content-type", type)
      .send(body)
      .expect(status);
    expect(res.body).toMatchObject({ error: code });
  });

  it("a throw -> 500 with an error id in header and body", async () => {
    const broken = jsonFunction("broken", () => Promise.reject(new Error("nope")));
    const { runtime, lines } = capturingRuntime();
    const res = await request(createFunctionApp(broken, runtime)).post("/").send({}).expect(500);
    const errorId = String(res.headers["x-sdewan-error-id"]);
    expect(res.body).toEqual({ error: "internal", errorId });
    expect(lines).toContainEqual(expect.objectContaining({ level: "error", errorId }));
  });
});

describe("serving a JsonFunction over HTTPS (admission webhooks need TLS)", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "sdewan-tls-"));
    execFileSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:prime256v1",
        "-nodes",
        "-keyout",
        join(dir, "tls.key"),
        "-out",
        join(dir, "tls.crt"),
        "-days",
        "1",
        "-subj",
        "/CN=127.0.0.1",
        "-addext",
        "subjectAltName=IP:127.0.0.1",
      ],
      { stdio: "ignore" },
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("answers over TLS with the certificate from the files", async () => {
    const { runtime } = capturingRuntime();
    const running = await startServer(createFunctionApp(echoReview, runtime), runtime, {
      port: 0,
      host: "127.0.0.1",
      tls: { certFile: join(dir, "tls.crt"), keyFile: join(dir, "tls.key") },
    });
    try {
      expect(running.url).toBe(`https://127.0.0.1:${running.port}`);
      const reply = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest(
          `${running.url}/`,
          {
            method: "POST",
            ca: readFileSync(join(dir, "tls.crt")),
            headers: { "content-type": "application/json" },
          },
          (res) => {
            let body = "";
            res.on("data", (chunk: Buffer) => (body += chunk.toString()));
            res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on("error", reject);
        req.end(JSON.stringify({ request: { uid: "tls" } }));
      });
      expect(reply.status).toBe(200);
      expect(JSON.parse(reply.body)).toMatchObject({
        response: { seen: { request: { uid: "tls" } } },
      });
    } finally {
      await running.close();
    }
  });
});
