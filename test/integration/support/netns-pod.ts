// A "pod" of the packet lab (packet-lab.ts), run inside the pod's network namespace as
// `ip netns exec <pod> node netns-pod.ts <tcp ports> <udp ports>` (Node strips the types; no
// imports beyond node:, so it starts in ~50 ms). Listens on the TCP ports (accepts, then closes)
// and the UDP ports (echoes each datagram), prints {"ready":true} once bound, then answers probes
// read one JSON object a line from stdin:
//   {"id":7,"protocol":"TCP","host":"100.64.1.3","port":80,"timeoutMs":1000}
//   -> {"id":7,"result":"connected"|"refused"|"timeout"|"error: ..."}
import dgram from "node:dgram";
import net from "node:net";
import { createInterface } from "node:readline";

interface Probe {
  readonly id: number;
  readonly protocol: "TCP" | "UDP";
  readonly host: string;
  readonly port: number;
  readonly timeoutMs: number;
}

const ports = (arg: string | undefined): number[] =>
  (arg ?? "").split(",").filter(Boolean).map(Number);

async function listen(tcp: number[], udp: number[]): Promise<void> {
  const bound: Promise<void>[] = [];
  for (const port of tcp) {
    const server = net.createServer((socket) => socket.end());
    bound.push(new Promise((resolve) => server.listen(port, "0.0.0.0", resolve)));
  }
  for (const port of udp) {
    const socket = dgram.createSocket("udp4");
    socket.on("message", (message, from) => socket.send(message, from.port, from.address));
    bound.push(new Promise((resolve) => socket.bind(port, "0.0.0.0", resolve)));
  }
  await Promise.all(bound);
}

function tcpProbe(probe: Probe): Promise<string> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: probe.host, port: probe.port });
    const done = (result: string): void => {
      clearTimeout(timer);
      socket.destroy();
      resolve(result);
    };
    const timer = setTimeout(() => done("timeout"), probe.timeoutMs);
    socket.once("connect", () => done("connected"));
    socket.once("error", (error: NodeJS.ErrnoException) =>
      done(error.code === "ECONNREFUSED" ? "refused" : `error: ${error.code ?? error.message}`),
    );
  });
}

function udpProbe(probe: Probe): Promise<string> {
  return new Promise((resolve) => {
    const socket = dgram.createSocket("udp4");
    const payload = `probe ${probe.id}`;
    const done = (result: string): void => {
      clearTimeout(timer);
      socket.close();
      resolve(result);
    };
    const timer = setTimeout(() => done("timeout"), probe.timeoutMs);
    socket.on("message", (message) => {
      if (message.toString() === payload) done("connected");
    });
    // Connected, so an ICMP port unreachable arrives as ECONNREFUSED.
    socket.on("error", (error: NodeJS.ErrnoException) =>
      done(error.code === "ECONNREFUSED" ? "refused" : `error: ${error.code ?? error.message}`),
    );
    socket.connect(probe.port, probe.host, () => socket.send(payload));
  });
}

await listen(ports(process.argv[2]), ports(process.argv[3]));
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
const lines = createInterface({ input: process.stdin });
lines.on("line", (line) => {
  const probe = JSON.parse(line) as Probe;
  const run = probe.protocol === "TCP" ? tcpProbe(probe) : udpProbe(probe);
  void run.then((result) => process.stdout.write(`${JSON.stringify({ id: probe.id, result })}\n`));
});
lines.on("close", () => process.exit(0));
