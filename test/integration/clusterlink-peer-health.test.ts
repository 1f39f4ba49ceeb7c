// User story "Service Load Balancing and Failover", the Peer side: clusterlink-peer-health
// heartbeats every Peer's gateways over mutual TLS on its heartbeat tick (its resync) and reports
// which Peers are reachable, with upstream's thresholds carried in status across ticks. A steady
// Peer costs no write, and a Peer event that is only our own status write probes nothing (issue
// 24: that echo made the function trigger itself without end). The gateways are
// dev/peer-gateway-sim: HTTPS on loopback that verifies our client certificate, told to go
// silent or fail at will.
import { createServer as createTcpServer, type AddressInfo } from "node:net";
import { copyFile, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { jest } from "@jest/globals";
import { PeerGatewayFleet } from "../../dev/peer-gateway-sim/index.js";
import { createClusterLinkPeerHealth } from "../../functions/clusterlink-peer-health/index.js";
import { clusterLinkResource } from "../../shared/kube/index.js";
import type { EventFunction } from "../../shared/runtime/function.js";
import { ClusterLinkWorld, objectEvent } from "./clusterlink-harness.js";

jest.setTimeout(60_000);

const PEERS = clusterLinkResource("Peer");
const world = new ClusterLinkWorld();
const run = world.run;
const healthy = `east-${run}`;
const flaky = `flaky-${run}`;
const wrongCert = `wrongcert-${run}`;
const hanging = `hang-${run}`;
const blip = `blip-${run}`;
let fleet: PeerGatewayFleet;
let closedPort: number;
let fn: EventFunction;
/**
 * This file's ClusterLink namespace (CL_NAMESPACE of its peer-health): its resync heartbeats
 * every Peer there, so not the shared one, where other files keep Peers of their own.
 */
let clNs: string;

beforeAll(async () => {
  await world.setUp();
  clNs = await world.namespace("cl-peer-health");
  fleet = await PeerGatewayFleet.start({
    peers: [
      { name: healthy, labels: { region: "east" } },
      { name: flaky },
      { name: blip },
      { name: wrongCert },
      { name: hanging, mode: { mode: "hang" } },
      { name: "silent", mode: { mode: "silent" } },
    ],
  });
  const closed = createTcpServer();
  await new Promise<void>((r) => closed.listen(0, "127.0.0.1", r));
  closedPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  fn = peerHealth(fleet.identityDir);
});

afterAll(() => fleet.close());

/** The first tick of a 10 s window: every Peer is due, the unreachable ones too. */
const windowStart = () => new Date(Math.floor(Date.now() / 10_000) * 10_000);
/** A tick in the middle of a 10 s window: only reachable (or new) Peers are due. */
const midWindow = () => new Date(Math.floor(Date.now() / 10_000) * 10_000 + 5_000);

function peerHealth(dir: string, timeoutMs = 500, now = windowStart): EventFunction {
  const env = {
    CL_NAMESPACE: clNs,
    CL_PEER_TLS_DIR: dir,
    CL_HEARTBEAT_TIMEOUT_MS: String(timeoutMs),
  };
  return createClusterLinkPeerHealth({ kube: () => world.kube, env, now });
}

/** One heartbeat tick (the function's resync) over every Peer of this file's namespace. */
const tick = (with_: EventFunction = fn) => world.resync(with_);

const portOf = (simulated: string): number => fleet.gateway(simulated).port;
const keyOf = (dir: string): Promise<string> => readFile(path.join(dir, "tls.key"), "utf8");

async function peer(name: string, ports: readonly number[], namespace = clNs) {
  await world.kube.create(PEERS, {
    metadata: { name, namespace },
    spec: { gateways: ports.map((port) => ({ host: "127.0.0.1", port })) },
  });
}

const peerEvent = (name: string, with_: EventFunction = fn, namespace = clNs) =>
  world.send(
    with_,
    objectEvent("update", {
      apiVersion: "clusterlink.net/v1alpha1",
      kind: "Peer",
      namespace,
      name,
    }),
  );

async function status(name: string, namespace = clNs) {
  const object = await world.kube.get(PEERS, { namespace, name });
  return object?.status as {
    conditions?: { type: string; status: string; reason: string; message: string }[];
    labels?: Record<string, string>;
  };
}
const reachable = async (name: string) =>
  (await status(name)).conditions?.find((c) => c.type === "PeerReachable");
const versionOf = async (name: string) =>
  (await world.kube.get(PEERS, { namespace: clNs, name }))?.metadata.resourceVersion;

/**
 * `step`, then what the event source does with our writes: each status write is a Peer update
 * event, delivered to peer-health again (the connector and ApiServerSource both watch Peers).
 * Returns how many such echoes there were (bounded: a loop shows as `limit`).
 */
async function withEchoes(name: string, step: () => Promise<unknown>, limit = 8): Promise<number> {
  let before = await versionOf(name);
  await step();
  let echoes = 0;
  for (let after = await versionOf(name); after !== before && echoes < limit;) {
    echoes += 1;
    before = after;
    await peerEvent(name);
    after = await versionOf(name);
  }
  return echoes;
}

describe("Peer heartbeats over mutual TLS", () => {
  it("a new Peer is heartbeaten on its event: PeerReachable True Heartbeat and its labels", async () => {
    await peer(healthy, [closedPort, portOf(healthy)]); // one dead gateway: the other wins
    expect(await peerEvent(healthy)).toMatchObject({ kind: "done" });
    expect(await reachable(healthy)).toMatchObject({ status: "True", reason: "Heartbeat" });
    expect((await status(healthy)).labels).toEqual({ region: "east" });
  });

  it("the echo of our own status write probes nothing and writes nothing (no self-triggering)", async () => {
    const checks = fleet.gateway(healthy).counters.healthChecks;
    const version = await versionOf(healthy);
    const outcome = await peerEvent(healthy);
    expect(outcome.kind).toBe("done");
    expect(outcome.kind === "done" && outcome.result).toMatch(/unchanged since its last heartbeat/);
    expect(fleet.gateway(healthy).counters.healthChecks).toBe(checks);
    expect(await versionOf(healthy)).toBe(version);
  });

  it("a steady Peer costs no write: ten heartbeat ticks probe it ten times and leave it as it was", async () => {
    const checks = fleet.gateway(healthy).counters.healthChecks;
    const version = await versionOf(healthy);
    for (let i = 0; i < 10; i += 1) await tick(peerHealth(fleet.identityDir, 500, midWindow));
    expect(fleet.gateway(healthy).counters.healthChecks - checks).toBe(10);
    expect(await versionOf(healthy)).toBe(version);
  });

  it("labels reported in another order are no change, and a changed spec is heartbeaten on its event", async () => {
    fleet.gateway(healthy).setLabels({ zone: "a", region: "east" });
    await tick();
    const version = await versionOf(healthy);
    fleet.gateway(healthy).setLabels({ region: "east", zone: "a" });
    await tick();
    expect(await versionOf(healthy)).toBe(version);
    const checks = fleet.gateway(healthy).counters.healthChecks;
    await world.kube.mergePatch(
      PEERS,
      { namespace: clNs, name: healthy },
      {
        spec: { gateways: [{ host: "127.0.0.1", port: portOf(healthy) }] },
      },
    );
    await peerEvent(healthy);
    expect(fleet.gateway(healthy).counters.healthChecks).toBe(checks + 1);
    fleet.gateway(healthy).setLabels({ region: "east" });
    await tick();
  });

  it("a Peer that never answered is unreachable at once (upstream showed no condition)", async () => {
    await peer(`silent-${run}`, [portOf("silent")]);
    await peerEvent(`silent-${run}`);
    expect(await reachable(`silent-${run}`)).toMatchObject({
      status: "False",
      reason: "Heartbeat",
    });
  });

  it("an unreachable Peer is probed once per 10 s window, a reachable one on every tick (upstream's 1 s / 10 s)", async () => {
    const silent = fleet.gateway("silent").counters;
    const east = fleet.gateway(healthy).counters;
    const [silentBefore, eastBefore] = [silent.connections, east.healthChecks];
    await tick(peerHealth(fleet.identityDir, 500, midWindow));
    expect(silent.connections).toBe(silentBefore);
    expect(east.healthChecks).toBe(eastBefore + 1);
    await tick(peerHealth(fleet.identityDir, 500, windowStart));
    expect(silent.connections).toBeGreaterThan(silentBefore);
  });

  it("silent gateways do not serialize: every silent connection of one resync is open at once", async () => {
    const silent = fleet.gateway("silent");
    silent.counters.maxSilentHeld = 0;
    for (let i = 0; i < 4; i += 1) await peer(`mute-${i}-${run}`, [portOf("silent")]);
    expect(await tick()).toMatchObject({ kind: "done" });
    // Serialized probes would hold one connection at a time (each dropped at its timeout).
    expect(silent.counters.maxSilentHeld).toBeGreaterThanOrEqual(4);
  });

  it("thresholds hold across ticks: 4 failures leave it reachable, the 5th does not; 3 successes bring it back", async () => {
    await peer(flaky, [portOf(flaky)]);
    await peerEvent(flaky);
    expect((await reachable(flaky))?.status).toBe("True");
    fleet.gateway(flaky).setMode({ mode: "fail", status: 503 });
    const seen: string[] = [];
    for (let i = 0; i < 5; i += 1) {
      await tick();
      seen.push((await reachable(flaky))?.status ?? "");
    }
    expect(seen).toEqual(["True", "True", "True", "True", "False"]);
    expect((await reachable(flaky))?.message).toMatch(/HTTP 503/);
    fleet.gateway(flaky).setMode({ mode: "healthy" });
    const back: string[] = [];
    for (let i = 0; i < 3; i += 1) {
      await tick();
      back.push((await reachable(flaky))?.status ?? "");
    }
    expect(back).toEqual(["False", "False", "True"]);
  });

  it("a 1 s blip of HTTP 502 does not mark a Peer down, even with every status write echoed back", async () => {
    await peer(blip, [portOf(blip)]);
    await peerEvent(blip);
    expect((await reachable(blip))?.status).toBe("True");
    fleet.gateway(blip).setMode({ mode: "fail", status: 502 });
    // The blip spans two ticks a second apart; each failure count written comes back as events.
    const echoes = [await withEchoes(blip, () => tick()), await withEchoes(blip, () => tick())];
    fleet.gateway(blip).setMode({ mode: "healthy" });
    await withEchoes(blip, () => tick());
    expect(echoes).toEqual([1, 1]); // one write per tick, and its echo ended there
    expect((await reachable(blip))?.status).toBe("True");
  });

  it("a hanging gateway (handshake done, no answer) is a failure at the timeout", async () => {
    await peer(hanging, [portOf(hanging)]);
    await peerEvent(hanging);
    expect(await reachable(hanging)).toMatchObject({ status: "False", reason: "Heartbeat" });
    expect((await reachable(hanging))?.message).toMatch(/no answer within 500 ms/);
    expect(fleet.gateway(hanging).counters.healthChecks).toBeGreaterThan(0);
  });

  it("a client certificate the gateway does not trust is a failed heartbeat, not a crash", async () => {
    await peer(wrongCert, [portOf(wrongCert)]);
    const refusedBefore = fleet.gateway(wrongCert).counters.rejectedHandshakes;
    expect(await peerEvent(wrongCert, peerHealth(fleet.strangerDir))).toMatchObject({
      kind: "done",
    });
    expect((await reachable(wrongCert))?.status).toBe("False");
    // Said as what it is (it read "socket hang up" before).
    expect((await reachable(wrongCert))?.message).toMatch(
      /closed the TLS connection after our client certificate.*does not accept our identity/,
    );
    expect(fleet.gateway(wrongCert).counters.rejectedHandshakes).toBeGreaterThan(refusedBefore);
    // The fabric's own identity: reachable again after upstream's 3 successes.
    for (let i = 0; i < 3; i += 1) await tick();
    expect((await reachable(wrongCert))?.status).toBe("True");
  });

  it("no client certificate to read: 503, and the Peers say why (no key material in it)", async () => {
    const outcome = await tick(peerHealth(path.join(fleet.identityDir, "absent")));
    expect(outcome).toMatchObject({ kind: "retry" });
    const stalled = (await status(healthy)).conditions?.find((c) => c.type === "Stalled");
    expect(stalled).toMatchObject({ status: "True", reason: "TlsMaterialMissing" });
    expect(stalled?.message).not.toMatch(/BEGIN/);
  });

  it.each([
    { title: "a key that is not its certificate's", key: () => keyOf(fleet.strangerDir) },
    {
      title: "a key that is not a key",
      key: () => "-----BEGIN PRIVATE KEY-----\nbm90IGEga2V5\n-----END PRIVATE KEY-----\n",
    },
  ])(
    "$title: 503 and Stalled TlsMaterialInvalid (no crash, no hang), no key material in status or logs",
    async ({ key }) => {
      const name = `badkey-${run}-${Math.random().toString(36).slice(2, 6)}`;
      await peer(name, [portOf(healthy)]);
      const dir = await mkdtemp(path.join(tmpdir(), "cl-badkey-"));
      for (const file of ["ca.crt", "tls.crt"]) {
        await copyFile(path.join(fleet.identityDir, file), path.join(dir, file));
      }
      const material = await key();
      await writeFile(path.join(dir, "tls.key"), material);
      const logged: string[] = [];
      const capture = (...args: unknown[]) => logged.push(JSON.stringify(args));
      const log = { info: capture, warn: capture, error: capture, debug: capture };
      const event = objectEvent("update", {
        apiVersion: "clusterlink.net/v1alpha1",
        kind: "Peer",
        namespace: clNs,
        name,
      });
      const outcome = await peerHealth(dir).handle(event, {
        correlationId: event.id,
        log,
        calls: world.calls,
        signal: new AbortController().signal,
      });
      expect(outcome).toMatchObject({ kind: "retry" });
      const stalled = (await status(name)).conditions?.find((c) => c.type === "Stalled");
      expect(stalled).toMatchObject({ status: "True", reason: "TlsMaterialInvalid" });
      expect(stalled?.message).toMatch(/are no TLS identity: /);
      const body = material.split("\n")[1] ?? "";
      const written = JSON.stringify(await status(name)) + logged.join("\n");
      expect(written).not.toContain("BEGIN");
      expect(written).not.toContain(body);
    },
  );

  it("a Peer outside the ClusterLink namespace is not heartbeaten, and its status says so", async () => {
    const ns = await world.namespace("elsewhere");
    await peer(`out-${run}`, [portOf(healthy)], ns);
    await peerEvent(`out-${run}`, fn, ns);
    expect(
      (await status(`out-${run}`, ns)).conditions?.find((c) => c.type === "Stalled"),
    ).toMatchObject({
      status: "True",
      reason: "OutsideClusterLinkNamespace",
    });
  });
});
