/**
 * The command line of `npm run peer-gateway-sim` (main.ts): parsed here, purely, so every
 * mistake gets a message that says what to type instead, and tested without a process.
 */
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import { gatewayModeSchema, type GatewayModeInput } from "./server.js";
import type { SimulatedPeer } from "./fleet.js";

export const USAGE = `Usage: npm run peer-gateway-sim -- [options] <peer>[=<mode>] ...

Simulated ClusterLink peer gateways on loopback, for clusterlink-peer-health to heartbeat: one
HTTPS port per Peer that checks the client certificate and answers GET /healthz with the
ClusterLinkPeerLabels header. It writes the client identity clusterlink-peer-health mounts
(CL_PEER_TLS_DIR), an identity of another CA that every gateway refuses, and the Peers to
apply, then runs until Ctrl-C.

  <peer>[=<mode>]           a Peer to simulate; its name is the TLS server name its gateway
                            answers to. Modes: healthy (default), silent (TCP accepted, nothing
                            sent), hang (handshake, no answer), refuse (connection reset),
                            fail or fail:<status> (an HTTP error, default 503)
  --label <peer>:<k>=<v>    a label the Peer's gateway reports (repeatable)
  --dir <dir>               where certificates, identities and peers.yaml go
                            (default: a new folder under the system's temp folder)
  --host <address>          listen address of the gateways and the control listener
                            (default 127.0.0.1)
  --control-port <port>     the control listener's port (default: any free port)
  --namespace <namespace>   the namespace of the Peers in peers.yaml (default
                            clusterlink-system, CL_NAMESPACE's default)
  --port <port>             the first gateway's port; the next Peers take the ports after it
                            (default: any free port each)
  --fabric-only             write the certificates and identities to --dir, print the
                            Secrets to make of them, and exit
  --tls-dir <dir>           serve with this gateway identity (tls.crt naming every Peer,
                            tls.key, ca.crt to verify clients: a mounted Secret) instead of
                            a new fabric, and write nothing (a Pod, test/node/fixtures)
  -h, --help                this text

Change a gateway while it runs (the control listener, plain HTTP):
  curl -X POST <control>/gateways/<peer>/mode -d '{"mode":"fail","status":502}'
  curl -X POST <control>/gateways/<peer>/labels -d '{"region":"eu"}'
  curl <control>/gateways                      every gateway, its mode and counters

Example:
  npm run peer-gateway-sim -- --dir /tmp/peers --label east:region=eu east west=silent
  kubectl apply -f /tmp/peers/peers.yaml
  CL_PEER_TLS_DIR=/tmp/peers/identity npm start

As a Pod: npm run peer-gateway-sim -- --fabric-only --dir /tmp/fabric east west, then the
gateway folder as a Secret mounted at <dir> and --tls-dir <dir> --port 8443 east west.`;

export interface SimArgs {
  readonly peers: readonly SimulatedPeer[];
  readonly dir?: string;
  readonly host: string;
  readonly controlPort: number;
  readonly namespace: string;
  /** The first gateway's port (the next Peers take the ports after it); unset: any free port. */
  readonly firstPort?: number;
  /** Serve with the gateway identity in this folder, writing nothing (no fabric is made). */
  readonly tlsDir?: string;
  /** Write the fabric to `dir` and stop. */
  readonly fabricOnly?: true;
}

export type ParsedSimArgs =
  | { readonly kind: "run"; readonly args: SimArgs }
  | { readonly kind: "help" }
  | { readonly kind: "error"; readonly message: string };

const PEER_NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

function modeOf(text: string): GatewayModeInput | string {
  const [mode, status] = text.split(":");
  const input =
    mode === "fail" && status !== undefined ? { mode, status: Number(status) } : { mode };
  const parsed = gatewayModeSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  return status === undefined
    ? `unknown mode '${text}': healthy, silent, hang, refuse, fail or fail:<status>`
    : `'${text}': the status of fail must be an HTTP error status, 400-599`;
}

function portOf(option: string, text: string | undefined): number | string {
  if (text === undefined) return 0;
  const port = /^\d+$/.test(text) ? Number(text) : NaN;
  return port <= 65535 ? port : `${option} must be a port number 0-65535, not '${text}'`;
}

/** What the options together cannot mean, in words; undefined when they fit. */
function conflictOf(values: {
  dir?: string | undefined;
  "tls-dir"?: string | undefined;
  "fabric-only": boolean;
}): string | undefined {
  if (values["tls-dir"] !== undefined && values["fabric-only"]) {
    return "--fabric-only writes a new fabric; --tls-dir serves one already made: give one of them";
  }
  if (values["tls-dir"] !== undefined && values.dir !== undefined) {
    return "--tls-dir serves a given identity and writes nothing: --dir is not used with it";
  }
  return undefined;
}

/** The peers of the positionals, with their labels; a message when something is wrong. */
function peersOf(
  positionals: readonly string[],
  labels: readonly string[],
): SimulatedPeer[] | string {
  const peers = new Map<string, { mode: GatewayModeInput; labels: Record<string, string> }>();
  for (const positional of positionals) {
    const [name = "", mode] = positional.split("=");
    if (!PEER_NAME.test(name)) {
      return `'${name}' is not a Peer name (lower-case letters, digits, '-' and '.')`;
    }
    if (peers.has(name)) return `Peer '${name}' is named twice`;
    const parsed = mode === undefined ? { mode: "healthy" as const } : modeOf(mode);
    if (typeof parsed === "string") return `Peer '${name}': ${parsed}`;
    peers.set(name, { mode: parsed, labels: {} });
  }
  for (const label of labels) {
    const match = /^([^:]+):([^=]+)=(.*)$/.exec(label);
    if (match === null) return `--label '${label}': write it as <peer>:<key>=<value>`;
    const [, peer = "", key = "", value = ""] = match;
    const entry = peers.get(peer);
    if (entry === undefined) return `--label '${label}': no Peer '${peer}' is simulated`;
    entry.labels[key] = value;
  }
  return [...peers].map(([name, p]) => ({ name, mode: p.mode, labels: p.labels }));
}

export function parseSimArgs(argv: readonly string[]): ParsedSimArgs {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        label: { type: "string", multiple: true, default: [] },
        dir: { type: "string" },
        host: { type: "string", default: "127.0.0.1" },
        "control-port": { type: "string" },
        namespace: { type: "string", default: "clusterlink-system" },
        port: { type: "string" },
        "tls-dir": { type: "string" },
        "fabric-only": { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    return { kind: "error", message: (error as Error).message };
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: "help" };
  if (positionals.length === 0) {
    return { kind: "error", message: "name at least one Peer to simulate, e.g. `east`" };
  }
  const peers = peersOf(positionals, values.label);
  if (typeof peers === "string") return { kind: "error", message: peers };
  const controlPort = portOf("--control-port", values["control-port"]);
  if (typeof controlPort === "string") return { kind: "error", message: controlPort };
  const firstPort = portOf("--port", values.port);
  if (typeof firstPort === "string") return { kind: "error", message: firstPort };
  if (values.port !== undefined && firstPort === 0) {
    return { kind: "error", message: "--port must be a port number 1-65535, not '0'" };
  }
  const lastPort = firstPort + peers.length - 1;
  if (values.port !== undefined && lastPort > 65535) {
    return {
      kind: "error",
      message: `--port ${firstPort}: ${peers.length} Peers need ports up to ${lastPort}`,
    };
  }
  const conflict = conflictOf(values);
  if (conflict !== undefined) return { kind: "error", message: conflict };
  return {
    kind: "run",
    args: {
      peers,
      host: values.host,
      controlPort,
      namespace: values.namespace,
      ...(values.dir === undefined ? {} : { dir: values.dir }),
      ...(values.port === undefined ? {} : { firstPort }),
      ...(values["tls-dir"] === undefined ? {} : { tlsDir: values["tls-dir"] }),
      ...(values["fabric-only"] ? { fabricOnly: true as const } : {}),
    },
  };
}

/** The Peers as objects to apply: each with its simulated gateway, in `namespace`. */
export function peersManifest(
  namespace: string,
  gateways: readonly { readonly peer: string; readonly host: string; readonly port: number }[],
): string {
  return gateways
    .map((g) =>
      stringify({
        apiVersion: "clusterlink.net/v1alpha1",
        kind: "Peer",
        metadata: { name: g.peer, namespace },
        spec: { gateways: [{ host: g.host, port: g.port }] },
      }),
    )
    .join("---\n");
}
