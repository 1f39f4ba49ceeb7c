// Runs a program inside a network namespace of its own (started as `unshare -n -- node --import
// tsx netns-relay.ts <socket dir> <port>,... -- <program> <args...>`): brings loopback up, relays
// each listed 127.0.0.1 port to the same port of the outer namespace through the Unix socket
// <socket dir>/<port>.sock (served outside by KnativeAdapter's relays: Unix sockets are files, so
// they cross network namespaces), then runs the program, passing SIGTERM on and exiting with it.
// So a program that binds fixed ports (Knative's adapters: *:8080, *:8008) collides with nothing,
// and still reaches the API server and the functions at their usual loopback addresses.
import { execFileSync, spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import { once } from "node:events";
import path from "node:path";

const [socketDir, portList, separator, program, ...args] = process.argv.slice(2);
if (socketDir === undefined || portList === undefined || separator !== "--" || !program) {
  process.stderr.write("usage: netns-relay.ts <socket dir> <port>,... -- <program> [args]\n");
  process.exit(2);
}

execFileSync("ip", ["link", "set", "lo", "up"]);
for (const port of portList.split(",").map(Number)) {
  const server = createServer((inner) => {
    const outer = connect(path.join(socketDir, `${port}.sock`));
    inner.pipe(outer).pipe(inner);
    const drop = () => {
      inner.destroy();
      outer.destroy();
    };
    inner.on("error", drop).on("close", drop);
    outer.on("error", drop).on("close", drop);
  });
  server.listen(port, "127.0.0.1");
  await once(server, "listening");
}

const child = spawn(program, args, { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.on(signal, () => child.kill(signal));
}
child.on("exit", (code, signal) => process.exit(code ?? (signal === null ? 1 : 128 + 15)));
