/**
 * `npm run peer-gateway-sim -- [options] <peer>[=<mode>] ...` (cli.ts says what each option
 * does; `--help` prints it): the simulated gateways of fleet.ts on their own, for a local run of
 * clusterlink-peer-health (docs/local-run.md). Writes <dir>/peers.yaml, prints where the client
 * identity is and how to change a gateway, then runs until SIGINT or SIGTERM (exit 0).
 * Exit 2 on a bad command line, with what to type instead.
 */
import { mkdtemp, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { parseSimArgs, peersManifest, USAGE } from "./cli.js";
import { PeerGatewayFleet } from "./fleet.js";

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
const dir = args.dir ?? (await mkdtemp(path.join(os.tmpdir(), "peer-gateway-sim-")));
const fleet = await PeerGatewayFleet.start({
  peers: args.peers,
  dir,
  host: args.host,
  controlPort: args.controlPort,
});
const peersFile = path.join(dir, "peers.yaml");
await writeFile(peersFile, peersManifest(args.namespace, fleet.peers));

const width = Math.max(...fleet.peers.map((p) => p.peer.length));
const lines = [
  `peer-gateway-sim: ${fleet.peers.length} simulated gateway(s)`,
  ...fleet.peers.map((p, i) => {
    const peer = args.peers[i];
    const labels =
      Object.keys(peer?.labels ?? {}).length === 0 ? "" : ` labels ${JSON.stringify(peer?.labels)}`;
    const mode = JSON.stringify(fleet.gateway(p.peer).currentMode());
    return `  ${p.peer.padEnd(width)}  ${p.host}:${p.port}  ${mode}${labels}`;
  }),
  `client identity (CL_PEER_TLS_DIR): ${fleet.identityDir}`,
  `an identity of another CA, refused by every gateway: ${fleet.strangerDir}`,
  `the Peers (namespace ${args.namespace}): kubectl apply -f ${peersFile}`,
  `control: ${fleet.controlUrl} (POST gateways/<peer>/mode, gateways/<peer>/labels; GET gateways)`,
  "ready; Ctrl-C stops",
];
console.log(lines.join("\n"));

const stop = (): void => {
  void fleet.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
