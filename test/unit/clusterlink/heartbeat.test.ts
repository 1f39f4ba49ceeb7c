// The heartbeat against dev/peer-gateway-sim: what each way a gateway can misbehave becomes, and
// that a gateway which never answers costs the configured timeout once, not twice (a socket idle
// timeout restarts when the TCP connect completes and again for the TLS handshake; the probe
// needs one deadline for the whole exchange).
import { copyFile, mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { PeerGatewayFleet } from "../../../dev/peer-gateway-sim/index.js";
import {
  describeProbeFailure,
  heartbeat,
  InvalidPeerTlsError,
  readPeerTls,
  type PeerTls,
} from "../../../shared/clusterlink/heartbeat.js";

let fleet: PeerGatewayFleet;
let tls: PeerTls;

beforeAll(async () => {
  fleet = await PeerGatewayFleet.start({
    peers: [
      { name: "healthy", labels: { region: "east" } },
      { name: "silent", mode: { mode: "silent" } },
      { name: "hanging", mode: { mode: "hang" } },
      { name: "failing", mode: { mode: "fail", status: 500 } },
      { name: "refusing", mode: { mode: "refuse" } },
    ],
  });
  tls = await readPeerTls(fleet.identityDir);
});

afterAll(() => fleet.close());

const beat = (peer: string, timeoutMs = 300) =>
  heartbeat(peer, [fleet.gateway(peer).gateway], tls, timeoutMs);

it("a healthy gateway: success with its labels", async () => {
  expect(await beat("healthy")).toEqual({ ok: true, labels: { region: "east" } });
});

it.each([
  ["silent", /no answer within 300 ms/],
  ["hanging", /no answer within 300 ms/],
  ["failing", /HTTP 500/],
  ["refusing", /ECONNRESET|socket hang up/],
])("a %s gateway is a failed heartbeat naming why", async (peer, why) => {
  const result = await beat(peer);
  expect(result.ok).toBe(false);
  expect(result.ok ? "" : result.error).toMatch(why);
});

it("one deadline per probe: a silent gateway fails at its timeout, not at twice it", async () => {
  const started = performance.now();
  await beat("silent", 400);
  // 1.5 x the timeout leaves room for a loaded machine; the bug this guards against took 2 x.
  expect(performance.now() - started).toBeLessThan(600);
});

it("first success wins: a silent gateway next to a healthy one does not delay the answer", async () => {
  const gateways = [fleet.gateway("silent").gateway, fleet.gateway("healthy").gateway];
  // The Peer's name is the TLS server name; the one certificate names every simulated Peer.
  expect(await heartbeat("healthy", gateways, tls, 5_000)).toMatchObject({ ok: true });
});

describe("a client identity TLS cannot use", () => {
  it("a key that is not the certificate's: readPeerTls says so, naming no key bytes", async () => {
    const dir = await mkdtemp(path.join(tmpdir(), "cl-mismatch-"));
    for (const file of ["ca.crt", "tls.crt"]) {
      await copyFile(path.join(fleet.identityDir, file), path.join(dir, file));
    }
    await copyFile(path.join(fleet.strangerDir, "tls.key"), path.join(dir, "tls.key"));
    const error = await readPeerTls(dir).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(InvalidPeerTlsError);
    expect((error as Error).message).toMatch(/key values mismatch/);
    expect((error as Error).message).not.toMatch(/BEGIN/);
  });

  it("handed to the heartbeat anyway: a failed heartbeat, not an exception out of the probe", async () => {
    const stranger = await readFile(path.join(fleet.strangerDir, "tls.key"), "utf8");
    const result = await heartbeat(
      "healthy",
      [fleet.gateway("healthy").gateway],
      {
        ...tls,
        key: stranger,
      },
      300,
    );
    expect(result).toMatchObject({ ok: false });
    expect(result.ok ? "" : result.error).toMatch(/key values mismatch/);
  });
});

describe("what a refused identity looks like to the operator", () => {
  it("our client certificate from another CA: the gateway's refusal is named, not 'socket hang up'", async () => {
    // strangerDir trusts the fabric's CA (the handshake completes on our side) but its own
    // certificate is another CA's: the gateway checks it and closes the connection.
    const stranger = await readPeerTls(fleet.strangerDir);
    const refusedBefore = fleet.gateway("healthy").counters.rejectedHandshakes;
    const result = await heartbeat("healthy", [fleet.gateway("healthy").gateway], stranger, 2_000);
    expect(fleet.gateway("healthy").counters.rejectedHandshakes).toBeGreaterThan(refusedBefore);
    const error = result.ok ? "" : result.error;
    expect(error).toMatch(
      /the gateway closed the TLS connection after our client certificate, without answering: it does not accept our identity \(signed by another CA\?\)/,
    );
    expect(error).not.toMatch(/socket hang up/);
  });

  it("a gateway that answers with a TLS alert about our certificate: the alert is quoted, the same diagnosis", () => {
    const alert = Object.assign(new Error("tlsv1 alert unknown ca"), {
      code: "ERR_SSL_TLSV1_ALERT_UNKNOWN_CA",
    });
    expect(describeProbeFailure(alert, false)).toBe(
      "the gateway refused our client certificate (tlsv1 alert unknown ca): it does not accept our identity (signed by another CA?)",
    );
  });

  it("a reset before any handshake stays a reset: no claim about our certificate", () => {
    const reset = Object.assign(new Error("socket hang up"), { code: "ECONNRESET" });
    expect(describeProbeFailure(reset, false)).toBe("socket hang up");
  });

  it("a Peer name that is not in the gateway's certificate is still reported as such", async () => {
    const result = await heartbeat("not-simulated", [fleet.gateway("healthy").gateway], tls, 2_000);
    expect(result.ok ? "" : result.error).toMatch(
      /Host: not-simulated\. is not in the cert's altnames: DNS:healthy/,
    );
  });
});
