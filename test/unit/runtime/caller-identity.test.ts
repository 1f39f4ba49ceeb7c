// What a JSON function learns about its caller from the connection (ctx.caller): with
// TlsOptions.clientCaFile the server asks for a client certificate and passes the verified one's
// names; a certificate of another CA, none at all, or plain HTTP is never "verified".
import { readFileSync } from "node:fs";
import { request as httpsRequest } from "node:https";
import path from "node:path";
import request from "supertest";
import { PeerGatewayFleet } from "../../../dev/peer-gateway-sim/index.js";
import {
  createFunctionApp,
  startServer,
  type RunningServer,
} from "../../../shared/runtime/index.js";
import { capturingRuntime, jsonFunction } from "./helpers.js";

const whoAsks = jsonFunction("who-asks", (_body, ctx) => ({ status: 200, body: ctx.caller }));

let fleet: PeerGatewayFleet;
let server: RunningServer;
let ca: Buffer;
const files = (dir: string) => ({
  cert: readFileSync(path.join(dir, "tls.crt")),
  key: readFileSync(path.join(dir, "tls.key")),
});

beforeAll(async () => {
  fleet = await PeerGatewayFleet.start({ peers: [] });
  const serving = await fleet.issueIdentity("authz", { usage: "server", ips: ["127.0.0.1"] });
  ca = readFileSync(path.join(serving, "ca.crt"));
  const { runtime } = capturingRuntime();
  server = await startServer(createFunctionApp(whoAsks, runtime), runtime, {
    port: 0,
    host: "127.0.0.1",
    tls: {
      certFile: path.join(serving, "tls.crt"),
      keyFile: path.join(serving, "tls.key"),
      clientCaFile: path.join(serving, "ca.crt"),
    },
  });
});

afterAll(async () => {
  await server.close();
  await fleet.close();
});

function ask(identity?: { cert: Buffer; key: Buffer }): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      `${server.url}/`,
      {
        method: "POST",
        ca,
        agent: false,
        headers: { "content-type": "application/json" },
        ...identity,
      },
      (res) => {
        let text = "";
        res.on("data", (chunk: Buffer) => (text += chunk.toString()));
        res.on("end", () => resolve(JSON.parse(text)));
      },
    );
    req.on("error", reject);
    req.end("{}");
  });
}

describe("ctx.caller: the identity the connection proves", () => {
  it("a fabric certificate: verified, named by its DNS SANs", async () => {
    const dir = await fleet.issueIdentity("ohio", { dnsNames: ["ohio", "ohio.example"] });
    expect(await ask(files(dir))).toEqual({ verified: true, names: ["ohio", "ohio.example"] });
  });

  it("a fabric certificate without DNS SANs: named by its subject CN", async () => {
    expect(await ask(files(fleet.identityDir))).toEqual({
      verified: true,
      names: ["clusterlink-peer-health"],
    });
  });

  it("a certificate of another CA: not verified, with OpenSSL's reason", async () => {
    expect(await ask(files(fleet.strangerDir))).toEqual({
      verified: false,
      names: [],
      problem: expect.any(String) as unknown,
    });
  });

  it("no certificate: not verified", async () => {
    expect(await ask()).toEqual({ verified: false, names: [] });
  });

  it("plain HTTP: not verified", async () => {
    const { runtime } = capturingRuntime();
    const res = await request(createFunctionApp(whoAsks, runtime)).post("/").send({});
    expect(res.body).toEqual({ verified: false, names: [] });
  });
});
