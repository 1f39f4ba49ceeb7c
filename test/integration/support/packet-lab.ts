// Real packets between "pods" on a "node", in network namespaces this lab creates and removes:
// a node namespace holding the pod bridge (sdewanbr0, as on dev/node) with br_netfilter on, and
// one namespace per pod, joined to the bridge by a veth pair, running netns-pod.ts (TCP and UDP
// listeners that also probe on request). Addresses are 100.64.x only; nothing touches the host's
// interfaces. The node agent's nftables script is applied inside the node namespace.
// Needs root: outside CI the tests that use it skip without root, in CI they fail (in-ci.ts).
import { spawn, execFile, type ChildProcessWithoutNullStreams } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createInterface } from "node:readline";
import path from "node:path";
import { promisify } from "node:util";
import { labAvailability } from "./lab-availability.js";

const run = promisify(execFile);

const availability = labAvailability();
/** describe, or describe.skip outside CI without root (in CI, loading this file fails instead). */
export const describeWithLab = availability.skip === undefined ? describe : describe.skip;
if (availability.skip !== undefined) console.warn(`SKIPPED: ${availability.skip}`);

export const LAB_BRIDGE = "sdewanbr0";
export const LAB_PORTS = [80, 81];
const POD_SCRIPT = path.join(import.meta.dirname, "netns-pod.ts");

export type ProbeResult = "connected" | "refused" | "timeout" | `error: ${string}`;

export interface LabPod {
  /** "<namespace>/<name>" of the Pod it stands for. */
  readonly key: string;
  readonly ip: string;
}

interface RunningPod extends LabPod {
  readonly netns: string;
  readonly process: ChildProcessWithoutNullStreams;
  readonly waiting: Map<number, (result: ProbeResult) => void>;
}

async function ip(...args: string[]): Promise<void> {
  await run("ip", args);
}

export class PacketLab {
  private readonly pods = new Map<string, RunningPod>();
  private readonly names: string[] = [];
  private nextProbe = 0;
  private nextVeth = 0;

  private constructor(
    readonly node: string,
    /** The bridge's address, the pods' gateway: 100.64.<subnet>.1. */
    readonly gateway: string,
    private readonly prefix: string,
  ) {}

  /** A node namespace with the bridge at 100.64.<subnet>.1/24, and the given pods on it. */
  static async start(subnet: number, pods: readonly LabPod[] = []): Promise<PacketLab> {
    const id = randomBytes(3).toString("hex");
    const lab = new PacketLab(`sdwl-${id}-node`, `100.64.${subnet}.1`, `sdwl-${id}`);
    lab.names.push(lab.node);
    await ip("netns", "add", lab.node);
    await ip("-n", lab.node, "link", "set", "lo", "up");
    await ip("-n", lab.node, "link", "add", LAB_BRIDGE, "type", "bridge");
    await ip("-n", lab.node, "addr", "add", `${lab.gateway}/24`, "dev", LAB_BRIDGE);
    await ip("-n", lab.node, "link", "set", LAB_BRIDGE, "up");
    // As on dev/node: bridged IPv4 goes through the inet hooks (br_netfilter), and is routed.
    await run("ip", ["netns", "exec", lab.node, "sysctl", "-q", "-w", "net.ipv4.ip_forward=1"]);
    await run("ip", [
      "netns",
      "exec",
      lab.node,
      "sysctl",
      "-q",
      "-w",
      "net.bridge.bridge-nf-call-iptables=1",
    ]);
    await Promise.all(pods.map((pod) => lab.addPod(pod)));
    return lab;
  }

  /** A pod namespace on the bridge, listening on LAB_PORTS (TCP and UDP). */
  async addPod(pod: LabPod): Promise<void> {
    const netns = `${this.prefix}-p${this.nextVeth}`;
    const veth = `vh${this.nextVeth}`;
    this.nextVeth += 1;
    this.names.push(netns);
    await ip("netns", "add", netns);
    await ip("-n", netns, "link", "set", "lo", "up");
    await ip(
      "-n",
      this.node,
      "link",
      "add",
      veth,
      "type",
      "veth",
      "peer",
      "name",
      "eth0",
      "netns",
      netns,
    );
    await ip("-n", this.node, "link", "set", veth, "master", LAB_BRIDGE, "up");
    await ip("-n", netns, "addr", "add", `${pod.ip}/24`, "dev", "eth0");
    await ip("-n", netns, "link", "set", "eth0", "up");
    await ip("-n", netns, "route", "add", "default", "via", this.gateway);
    const ports = LAB_PORTS.join(",");
    const child = spawn(
      "ip",
      ["netns", "exec", netns, process.execPath, "--no-warnings", POD_SCRIPT, ports, ports],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    const running: RunningPod = { ...pod, netns, process: child, waiting: new Map() };
    this.pods.set(pod.key, running);
    const ready = new Promise<void>((resolve, reject) => {
      child.once("exit", (code) => reject(new Error(`pod ${pod.key} exited (${code})`)));
      createInterface({ input: child.stdout }).on("line", (line) => {
        const message = JSON.parse(line) as { ready?: boolean; id?: number; result?: ProbeResult };
        if (message.ready === true) resolve();
        if (message.id !== undefined && message.result !== undefined) {
          running.waiting.get(message.id)?.(message.result);
          running.waiting.delete(message.id);
        }
      });
    });
    await ready;
  }

  /** Runs nft inside the node namespace, the script on stdin. */
  async nft(script: string, args: readonly string[] = ["-f", "-"]): Promise<string> {
    return new Promise((resolve, reject) => {
      const child = spawn("ip", ["netns", "exec", this.node, "nft", ...args]);
      let out = "";
      let err = "";
      child.stdout.on("data", (d: Buffer) => (out += d.toString()));
      child.stderr.on("data", (d: Buffer) => (err += d.toString()));
      child.on("exit", (code) =>
        code === 0 ? resolve(out) : reject(new Error(`nft ${args.join(" ")}: ${err}`)),
      );
      child.stdin.on("error", () => undefined); // `nft list` reads no stdin
      child.stdin.end(script);
    });
  }

  /** The command that runs nft in the node namespace, for an agent's applier. */
  nftCommand(): string[] {
    return ["ip", "netns", "exec", this.node, "nft"];
  }

  /** One connection attempt from a pod. */
  probe(
    from: string,
    host: string,
    protocol: "TCP" | "UDP",
    port: number,
    timeoutMs: number,
  ): Promise<ProbeResult> {
    const pod = this.pods.get(from);
    if (pod === undefined) throw new Error(`no pod ${from} in the lab`);
    const id = (this.nextProbe += 1);
    return new Promise((resolve) => {
      pod.waiting.set(id, resolve);
      pod.process.stdin.write(`${JSON.stringify({ id, protocol, host, port, timeoutMs })}\n`);
    });
  }

  /**
   * Whether a connection gets through. A dropped packet shows as a timeout; one timeout is tried
   * again with a longer wait, so a slow machine cannot pass for a drop (a drop times out twice).
   */
  async connects(
    from: string,
    host: string,
    protocol: "TCP" | "UDP",
    port: number,
  ): Promise<boolean> {
    const first = await this.probe(from, host, protocol, port, 1_000);
    if (first === "connected") return true;
    if (first !== "timeout") throw new Error(`${from} -> ${host} ${protocol}/${port}: ${first}`);
    const second = await this.probe(from, host, protocol, port, 2_500);
    if (second === "timeout") return false;
    if (second === "connected") return true;
    throw new Error(`${from} -> ${host} ${protocol}/${port}: ${second}`);
  }

  ipOf(key: string): string {
    const pod = this.pods.get(key);
    if (pod === undefined) throw new Error(`no pod ${key} in the lab`);
    return pod.ip;
  }

  async close(): Promise<void> {
    for (const pod of this.pods.values()) pod.process.kill();
    await Promise.all(
      [...this.names].reverse().map((name) => ip("netns", "del", name).catch(() => undefined)),
    );
  }
}
