/**
 * `npm run peer-gateway-sim -- [options] <peer>[=<mode>] ...` (cli.ts says what each option
 * does; `--help` prints it): the simulated gateways of fleet.ts on their own, for a local run of
 * clusterlink-peer-health (docs/local-run.md). Writes <dir>/peers.yaml, prints where the client
 * identity is and how to change a gateway, then runs until SIGINT or SIGTERM (exit 0).
 * As a Pod (test/node/fixtures): `--fabric-only` writes the certificates once and exits, and
 * `--tls-dir` serves the gateway identity a Secret mounts, on fixed ports, writing nothing.
 * Exit 2 on a bad command line, with what to type instead.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseSimArgs, peersManifest, USAGE, type SimArgs } from "./cli.js";
import { createFabric, PeerGatewayFleet, readGatewayIdentity, ServedGateways } from "./fleet.js";

const parsed = parseSimArgs(process.argv.slice(2));
if (parsed.kind === "help") {
  console.log(USAGE);
  process.exit(0);
}
if (parsed.kind === "error") {
  console.error(`peer-gateway-sim: ${parsed.message}\n(npm run peer-gateway-sim -- --help)`);
  process.exit(2);
}
const { args } = parsed;
const names = args.peers.map((p) => p.name);
const newDir = async (): Promise<string> =>
  args.dir ?? (await mkdtemp(path.join(os.tmpdir(), "peer-gateway-sim-")));

/** One line per gateway: its Peer, where it listens, its mode and labels. */
function gatewayLines(gateways: ServedGateways | PeerGatewayFleet): string[] {
  const width = Math.max(...gateways.peers.map((p) => p.peer.length));
  return gateways.peers.map((p, i) => {
    const peer = args.peers[i];
    const labels =
      Object.keys(peer?.labels ?? {}).length === 0 ? "" : ` labels ${JSON.stringify(peer?.labels)}`;
    const mode = JSON.stringify(gateways.gateway(p.peer).currentMode());
    return `  ${p.peer.padEnd(width)}  ${p.host}:${p.port}  ${mode}${labels}`;
  });
}

async function fabricOnly(): Promise<void> {
  const fabric = await createFabric(await newDir(), names);
  console.log(
    [
      `peer-gateway-sim: a fabric for ${names.join(", ")} in ${fabric.dir}`,
      `the gateways' identity (tls.crt names every Peer): ${fabric.gatewayDir}`,
      `client identity (CL_PEER_TLS_DIR): ${fabric.identityDir}`,
      `an identity of another CA, refused by every gateway: ${fabric.strangerDir}`,
      "as Secrets (test/node/fixtures/README.md):",
      `  kubectl -n <namespace> create secret generic peer-gateway-sim-tls --from-file=${fabric.gatewayDir}`,
      `  kubectl -n sdewan-system create secret generic clusterlink-peer-tls --from-file=${fabric.identityDir}`,
    ].join("\n"),
  );
}

async function serveIdentity(tlsDir: string): Promise<ServedGateways> {
  const served = await ServedGateways.start({
    peers: args.peers,
    identity: await readGatewayIdentity(tlsDir),
    host: args.host,
    controlPort: args.controlPort,
    ...(args.firstPort === undefined ? {} : { firstPort: args.firstPort }),
  });
  console.log(
    [
      `peer-gateway-sim: ${served.peers.length} simulated gateway(s)`,
      ...gatewayLines(served),
      `gateway identity: ${tlsDir}`,
      `control: ${served.controlUrl} (POST gateways/<peer>/mode, gateways/<peer>/labels; GET gateways)`,
      "ready; Ctrl-C stops",
    ].join("\n"),
  );
  return served;
}

async function serveFabric(simArgs: SimArgs): Promise<PeerGatewayFleet> {
  const dir = await newDir();
  const fleet = await PeerGatewayFleet.start({
    peers: simArgs.peers,
    dir,
    host: simArgs.host,
    controlPort: simArgs.controlPort,
    ...(simArgs.firstPort === undefined ? {} : { firstPort: simArgs.firstPort }),
  });
  const peersFile = path.join(dir, "peers.yaml");
  await writeFile(peersFile, peersManifest(simArgs.namespace, fleet.peers));
  console.log(
    [
      `peer-gateway-sim: ${fleet.peers.length} simulated gateway(s)`,
      ...gatewayLines(fleet),
      `client identity (CL_PEER_TLS_DIR): ${fleet.identityDir}`,
      `an identity of another CA, refused by every gateway: ${fleet.strangerDir}`,
      `the Peers (namespace ${simArgs.namespace}): kubectl apply -f ${peersFile}`,
      `control: ${fleet.controlUrl} (POST gateways/<peer>/mode, gateways/<peer>/labels; GET gateways)`,
      "ready; Ctrl-C stops",
    ].join("\n"),
  );
  return fleet;
}

if (args.fabricOnly === true) {
  await fabricOnly();
} else {
  const running =
    args.tlsDir === undefined ? await serveFabric(args) : await serveIdentity(args.tlsDir);
  const stop = (): void => {
    void running.close().then(() => process.exit(0));
  };
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
}
