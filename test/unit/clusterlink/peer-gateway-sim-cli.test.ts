// `npm run peer-gateway-sim`: the simulated gateways on their own, for a local run. Its command
// line (every mistake says what to type instead), and the process itself: it writes the Peers
// and the client identity, answers a real heartbeat, takes a mode change through its control
// listener, and exits 0 on SIGTERM. As a Pod (test/node/fixtures): the fabric written once
// (--fabric-only), then the gateways served from a mounted identity on fixed ports (--tls-dir,
// --port), writing nothing.
import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { parseSimArgs, USAGE } from "../../../dev/peer-gateway-sim/cli.js";
import { heartbeat, readPeerTls } from "../../../shared/clusterlink/heartbeat.js";
import { loopbackAddress } from "../../../dev/world/index.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../../..");
const TSX = join(ROOT, "node_modules/tsx/dist/cli.mjs");

describe("the command line", () => {
  it("peers with modes and labels", () => {
    expect(
      parseSimArgs(["--label", "east:region=eu", "east", "west=silent", "s=fail:502"]),
    ).toEqual({
      kind: "run",
      args: {
        peers: [
          { name: "east", mode: { mode: "healthy" }, labels: { region: "eu" } },
          { name: "west", mode: { mode: "silent" }, labels: {} },
          { name: "s", mode: { mode: "fail", status: 502 }, labels: {} },
        ],
        host: "127.0.0.1",
        controlPort: 0,
        namespace: "clusterlink-system",
      },
    });
  });

  it.each([
    [[], /name at least one Peer/],
    [["east=bogus"], /Peer 'east': unknown mode 'bogus': healthy, silent, hang, refuse, fail/],
    [["east=fail:200"], /the status of fail must be an HTTP error status, 400-599/],
    [["East"], /'East' is not a Peer name/],
    [["east", "east"], /named twice/],
    [["--label", "region=eu", "east"], /write it as <peer>:<key>=<value>/],
    [["--label", "west:region=eu", "east"], /no Peer 'west' is simulated/],
    [["--control-port", "99999", "east"], /--control-port must be a port number/],
    [["--bogus", "east"], /Unknown option '--bogus'/],
    [["--port", "0x10", "east"], /--port must be a port number/],
    [["--port", "65535", "east", "west"], /--port 65535: 2 Peers need ports up to 65536/],
    [["--tls-dir", "/x", "--dir", "/y", "east"], /--tls-dir serves a given identity/],
    [["--tls-dir", "/x", "--fabric-only", "east"], /--fabric-only writes a new fabric/],
  ])("%j: %s", (argv, message) => {
    const parsed = parseSimArgs(argv);
    expect(parsed.kind).toBe("error");
    expect(parsed.kind === "error" ? parsed.message : "").toMatch(message);
  });

  it("as a Pod: a mounted identity, fixed ports; or the fabric only", () => {
    const argv = ["--tls-dir", "/etc/tls", "--port", "8443", "--host", "0.0.0.0", "east"];
    expect(parseSimArgs(argv)).toEqual({
      kind: "run",
      args: {
        peers: [{ name: "east", mode: { mode: "healthy" }, labels: {} }],
        host: "0.0.0.0",
        controlPort: 0,
        namespace: "clusterlink-system",
        tlsDir: "/etc/tls",
        firstPort: 8443,
      },
    });
    expect(parseSimArgs(["--fabric-only", "--dir", "/f", "east"])).toMatchObject({
      kind: "run",
      args: { dir: "/f", fabricOnly: true },
    });
  });

  it("--help: the usage names every option and the control paths", () => {
    expect(parseSimArgs(["--help"])).toEqual({ kind: "help" });
    for (const option of [
      "--label",
      "--dir",
      "--host",
      "--control-port",
      "--namespace",
      "--tls-dir",
      "--port",
      "--fabric-only",
    ]) {
      expect(USAGE).toContain(option);
    }
    expect(USAGE).toMatch(/gateways\/<peer>\/mode/);
  });
});

/** The process's stdout up to its "ready" line. */
function readyOutput(child: ChildProcessWithoutNullStreams, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    const timer = setTimeout(
      () => reject(new Error(`not ready in ${timeoutMs} ms:\n${out}`)),
      timeoutMs,
    );
    child.stdout.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("ready; Ctrl-C stops")) {
        clearTimeout(timer);
        resolve(out);
      }
    });
  });
}

describe("npm run peer-gateway-sim as a process", () => {
  it("--help prints the usage and exits 0", async () => {
    const child = spawn(process.execPath, [TSX, "dev/peer-gateway-sim/main.ts", "--help"], {
      cwd: ROOT,
    });
    let out = "";
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    expect(await once(child, "exit")).toEqual([0, null]);
    expect(out.trim()).toBe(USAGE);
  });

  it("serves heartbeats for the Peers it wrote, changes a gateway on request, exits 0 on SIGTERM", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-cli-"));
    const argv = ["--dir", dir, "--label", "east:region=eu", "east", "west=fail:502"];
    const child = spawn(process.execPath, [TSX, "dev/peer-gateway-sim/main.ts", ...argv], {
      cwd: ROOT,
    });
    try {
      const out = await readyOutput(child, 20_000);
      expect(out).toContain(`client identity (CL_PEER_TLS_DIR): ${join(dir, "identity")}`);
      const peers = parseAllDocuments(readFileSync(join(dir, "peers.yaml"), "utf8")).map(
        (d) =>
          d.toJS() as {
            metadata: { name: string; namespace: string };
            spec: { gateways: { host: string; port: number }[] };
          },
      );
      expect(peers.map((p) => [p.metadata.name, p.metadata.namespace])).toEqual([
        ["east", "clusterlink-system"],
        ["west", "clusterlink-system"],
      ]);
      const tls = await readPeerTls(join(dir, "identity"));
      const [east, west] = peers.map((p) => p.spec.gateways);
      expect(await heartbeat("east", east ?? [], tls, 5_000)).toEqual({
        ok: true,
        labels: { region: "eu" },
      });
      expect(await heartbeat("west", west ?? [], tls, 5_000)).toMatchObject({ ok: false });
      const control = /control: (http:\S+)/.exec(out)?.[1] ?? "";
      const changed = await fetch(`${control}/gateways/west/mode`, {
        method: "POST",
        body: JSON.stringify({ mode: "healthy" }),
      });
      expect(changed.status).toBe(200);
      expect(await heartbeat("west", west ?? [], tls, 5_000)).toMatchObject({ ok: true });
    } finally {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      expect(await exited).toEqual([0, null]);
    }
  }, 60_000); // spawns tsx: seconds of start-up on a busy machine
});

describe("npm run peer-gateway-sim as a Pod runs it", () => {
  const run = (argv: readonly string[]) =>
    spawn(process.execPath, [TSX, "dev/peer-gateway-sim/main.ts", ...argv], { cwd: ROOT });

  it("--fabric-only writes the Secrets' files and exits 0; --tls-dir serves them on fixed ports", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sim-fabric-"));
    const fabric = run(["--fabric-only", "--dir", dir, "east", "west"]);
    let printed = "";
    fabric.stdout.on("data", (chunk: Buffer) => (printed += chunk.toString()));
    expect(await once(fabric, "exit")).toEqual([0, null]);
    // Each folder is one Secret, as kubectl create secret generic --from-file=<folder> makes it.
    for (const folder of ["gateway", "identity"]) {
      expect(readdirSync(join(dir, folder)).sort()).toEqual(["ca.crt", "tls.crt", "tls.key"]);
    }
    expect(printed).toContain(`--from-file=${join(dir, "gateway")}`);
    expect(printed).toContain(`--from-file=${join(dir, "identity")}`);

    // A Pod's view: the gateway Secret mounted, ports fixed, a read-only root (nothing written).
    const host = loopbackAddress();
    const argv = ["--tls-dir", join(dir, "gateway"), "--host", host, "--port", "18443"];
    const child = run([
      ...argv,
      "--control-port",
      "18080",
      "--label",
      "east:zone=a",
      "east",
      "west=silent",
    ]);
    try {
      const out = await readyOutput(child, 20_000);
      expect(out).toMatch(new RegExp(`east +${host}:18443`));
      expect(out).toMatch(new RegExp(`west +${host}:18444`));
      expect(out).not.toContain("peers.yaml");
      const tls = await readPeerTls(join(dir, "identity"));
      expect(await heartbeat("east", [{ host, port: 18443 }], tls, 5_000)).toEqual({
        ok: true,
        labels: { zone: "a" },
      });
      expect(await heartbeat("west", [{ host, port: 18444 }], tls, 1_000)).toMatchObject({
        ok: false,
      });
      const gateways = await fetch(`http://${host}:18080/_sim/gateways`);
      expect(gateways.status).toBe(200);
      expect(readdirSync(dir).sort()).toEqual([
        "gateway",
        "identity",
        "other-pki",
        "pki",
        "stranger",
      ]);
    } finally {
      const exited = once(child, "exit");
      child.kill("SIGTERM");
      expect(await exited).toEqual([0, null]);
    }
  }, 60_000); // spawns tsx: seconds of start-up on a busy machine
});
