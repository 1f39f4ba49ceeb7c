/**
 * `npm run cnf-sim -- --host 127.0.0.2 --port 8080 [--username root] [--interfaces net0,net1]
 *  [--no-login]`. The password comes from CNF_SIM_PASSWORD (default "", as upstream),
 * never from the command line, so it does not show in process listings.
 */
import { parseArgs } from "node:util";
import { startCnfSim } from "./index.js";

const { values } = parseArgs({
  options: {
    host: { type: "string", default: "127.0.0.1" },
    port: { type: "string", default: "8080" },
    username: { type: "string", default: "root" },
    interfaces: { type: "string" },
    "no-login": { type: "boolean", default: false },
  },
});

const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`cnf-sim: --port must be 0..65535, got ${values.port}`);
  process.exit(2);
}

const sim = await startCnfSim({
  host: values.host,
  port,
  username: values.username,
  password: process.env["CNF_SIM_PASSWORD"] ?? "",
  requireLogin: !values["no-login"],
  ...(values.interfaces === undefined
    ? {}
    : { interfaces: values.interfaces.split(",").filter(Boolean) }),
});
console.log(`cnf-sim listening on ${sim.url} (control API: ${sim.origin}/_sim/)`);

const stop = (): void => {
  void sim.close().then(() => process.exit(0));
};
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
