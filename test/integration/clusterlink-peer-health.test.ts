// User story "Service Load Balancing and Failover", the Peer side: clusterlink-peer-health
// heartbeats every Peer's gateways over mutual TLS and reports which Peers are reachable, with
// upstream's thresholds carried in status across events. Gateways here are HTTPS servers on
// loopback that verify our client certificate, a socket that never answers, and a closed port.
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer as createHttpsServer, type Server } from "node:https";
import {
  createServer as createTcpServer,
  type AddressInfo,
  type Server as TcpServer,
} from "node:net";
import os from "node:os";
import path from "node:path";
import { jest } from "@jest/globals";
import {
  createCertificateAuthority,
  issueCertificate,
  type IssuedCertificate,
} from "../../dev/control-plane/certs.js";
import { createClusterLinkPeerHealth } from "../../functions/clusterlink-peer-health/index.js";
import { clusterLinkResource } from "../../shared/kube/index.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import { ClusterLinkWorld, objectEvent } from "./clusterlink-harness.js";

jest.setTimeout(60_000);

const PEERS = clusterLinkResource("Peer");
const world = new ClusterLinkWorld();
const run = world.run;
const healthy = `east-${run}`;
let tlsDir: string;
let wrongTlsDir: string;
let gateway: Server;
let silent: TcpServer;
let closedPort: number;
let fn: EventFunction;

const portOf = (server: { address(): AddressInfo | string | null }): number =>
  (server.address() as AddressInfo).port;

async function identityDir(dir: string, ca: string, client: IssuedCertificate): Promise<string> {
  await writeFile(path.join(dir, "ca.crt"), ca);
  await writeFile(path.join(dir, "tls.crt"), client.certPem);
  await writeFile(path.join(dir, "tls.key"), client.keyPem);
  return dir;
}

beforeAll(async () => {
  await world.setUp();
  const dir = await mkdtemp(path.join(os.tmpdir(), "cl-peer-"));
  const ca = await createCertificateAuthority(dir, "clusterlink fabric");
  const server = await issueCertificate(ca, dir, {
    name: "gw",
    commonName: healthy,
    dnsNames: [healthy, `flaky-${run}`],
    usage: "server",
  });
  const client = await issueCertificate(ca, dir, { name: "me", commonName: "me", usage: "client" });
  tlsDir = await identityDir(await mkdtemp(path.join(os.tmpdir(), "cl-id-")), ca.certPem, client);
  const otherDir = await mkdtemp(path.join(os.tmpdir(), "cl-other-"));
  const otherCa = await createCertificateAuthority(otherDir, "another fabric");
  const stranger = await issueCertificate(otherCa, otherDir, {
    name: "stranger",
    commonName: "stranger",
    usage: "client",
  });
  wrongTlsDir = await identityDir(
    await mkdtemp(path.join(os.tmpdir(), "cl-wrong-")),
    ca.certPem,
    stranger,
  );

  const labels = Buffer.from(JSON.stringify({ region: "east" })).toString("base64");
  gateway = createHttpsServer(
    {
      key: server.keyPem,
      cert: server.certPem,
      ca: ca.certPem,
      requestCert: true,
      rejectUnauthorized: true,
    },
    (req, res) => {
      res.writeHead(req.url === "/healthz" ? 200 : 404, { ClusterLinkPeerLabels: labels }).end();
    },
  );
  silent = createTcpServer(() => undefined); // accepts, never answers
  const closed = createTcpServer();
  await Promise.all([
    new Promise<void>((r) => gateway.listen(0, "127.0.0.1", r)),
    new Promise<void>((r) => silent.listen(0, "127.0.0.1", r)),
    new Promise<void>((r) => closed.listen(0, "127.0.0.1", r)),
  ]);
  closedPort = portOf(closed);
  await new Promise<void>((r) => closed.close(() => r()));
  fn = peerHealth(tlsDir);
});

afterAll(async () => {
  silent.close();
  gateway.closeAllConnections();
  await new Promise<void>((r) => gateway.close(() => r()));
});

function peerHealth(dir: string, timeoutMs = 500): EventFunction {
  const env = {
    CL_NAMESPACE: world.clNamespace,
    CL_PEER_TLS_DIR: dir,
    CL_HEARTBEAT_TIMEOUT_MS: String(timeoutMs),
  };
  return createClusterLinkPeerHealth({ kube: () => world.kube, env });
}

async function peer(name: string, ports: readonly number[], namespace = world.clNamespace) {
  await world.kube.create(PEERS, {
    metadata: { name, namespace },
    spec: { gateways: ports.map((port) => ({ host: "127.0.0.1", port })) },
  });
}

const peerEvent = (name: string, with_: EventFunction = fn, namespace = world.clNamespace) =>
  world.send(
    with_,
    objectEvent("update", {
      apiVersion: "clusterlink.net/v1alpha1",
      kind: "Peer",
      namespace,
      name,
    }),
  );

async function status(name: string, namespace = world.clNamespace) {
  const object = await world.kube.get(PEERS, { namespace, name });
  return object?.status as {
    conditions?: { type: string; status: string; reason: string; message: string }[];
    labels?: Record<string, string>;
    lastSeen?: string;
  };
}
const reachable = async (name: string) =>
  (await status(name)).conditions?.find((c) => c.type === "PeerReachable");

describe("Peer heartbeats over mutual TLS", () => {
  it("a healthy gateway: PeerReachable True Heartbeat, its labels and lastSeen in status", async () => {
    await peer(healthy, [closedPort, portOf(gateway)]); // one dead gateway: the other wins
    expect(await peerEvent(healthy)).toMatchObject({ kind: "done" });
    expect(await reachable(healthy)).toMatchObject({ status: "True", reason: "Heartbeat" });
    const s = await status(healthy);
    expect(s.labels).toEqual({ region: "east" });
    expect(s.lastSeen).toBeDefined();
  });

  it("a Peer that never answered is unreachable at once (upstream showed no condition)", async () => {
    await peer(`silent-${run}`, [portOf(silent)]);
    await peerEvent(`silent-${run}`);
    expect(await reachable(`silent-${run}`)).toMatchObject({
      status: "False",
      reason: "Heartbeat",
    });
  });

  it("silent gateways do not serialize: one resync of several Peers takes about one timeout", async () => {
    for (let i = 0; i < 4; i += 1) await peer(`mute-${i}-${run}`, [portOf(silent)]);
    const started = performance.now();
    expect(await world.resync(fn)).toMatchObject({ kind: "done" });
    expect(performance.now() - started).toBeLessThan(2_500);
  });

  it("thresholds hold across events: 4 failures leave it reachable, the 5th does not", async () => {
    const flaky = `flaky-${run}`;
    await peer(flaky, [portOf(gateway)]);
    await peerEvent(flaky);
    expect((await reachable(flaky))?.status).toBe("True");
    await world.kube.mergePatch(
      PEERS,
      { namespace: world.clNamespace, name: flaky },
      {
        spec: { gateways: [{ host: "127.0.0.1", port: closedPort }] },
      },
    );
    const seen: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      await peerEvent(flaky);
      seen.push((await reachable(flaky))?.status ?? "");
    }
    expect(seen).toEqual(["True", "True", "True", "True", "False"]);
  });

  it("a client certificate the gateway does not trust is a failed heartbeat, not a crash", async () => {
    const name = `wrongcert-${run}`;
    await peer(name, [portOf(gateway)]);
    expect(await peerEvent(name, peerHealth(wrongTlsDir))).toMatchObject({ kind: "done" });
    expect((await reachable(name))?.status).toBe("False");
  });

  it("no client certificate to read: 503, and the Peers say why (no key material in it)", async () => {
    const outcome = await peerEvent(healthy, peerHealth(path.join(tlsDir, "absent")));
    expect(outcome).toMatchObject({ kind: "retry" });
    const stalled = (await status(healthy)).conditions?.find((c) => c.type === "Stalled");
    expect(stalled).toMatchObject({ status: "True", reason: "TlsMaterialMissing" });
    expect(stalled?.message).not.toMatch(/BEGIN/);
  });

  it("a Peer outside the ClusterLink namespace is not heartbeaten, and its status says so", async () => {
    const ns = await world.namespace("elsewhere");
    await peer(`out-${run}`, [portOf(gateway)], ns);
    await peerEvent(`out-${run}`, fn, ns);
    expect(
      (await status(`out-${run}`, ns)).conditions?.find((c) => c.type === "Stalled"),
    ).toMatchObject({
      status: "True",
      reason: "OutsideClusterLinkNamespace",
    });
  });
});
