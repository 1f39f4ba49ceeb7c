// The team's rule for this machine: never configure 10/8, 172.16/12 or 192.168/16 (the team's own
// networks). The sources that configure the local clusters (the control plane's flags, dev/world's
// Pods and simulators, the demo, the benches' and the harnesses' Pods) are scanned for any such
// address, written out or built in a template; the address plan is dev/control-plane/addresses.ts.
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  KUBERNETES_SERVICE_IP,
  NODE_IP,
  POD_RANGE,
  SERVICE_RANGE,
  podAddress,
  serviceAddress,
} from "../../../dev/control-plane/addresses.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");

/** Folders scanned whole, and the files in them left out, each with why. */
const SCANNED = ["dev", "bench", "test/integration/support"];
const HARNESSES = /^test\/integration\/[^/]+-harness\.ts$/;
const LEFT_OUT: Readonly<Record<string, string>> = {
  "dev/fuzz": "admission fuzz cases: addresses in rule specs, data the simulators only store",
  "bench/netpol/world.ts": "a NetworkPolicy ipBlock (172.16.0.0/12): policy data, never routed",
};
const SOURCE = /\.(ts|mjs|js|sh|go|ya?ml|json)$/;

function sources(): string[] {
  const inFolders = SCANNED.flatMap((folder) =>
    readdirSync(path.join(REPO, folder), { recursive: true, encoding: "utf8" }).map((f) =>
      path.posix.join(folder, f.split(path.sep).join("/")),
    ),
  );
  const harnesses = readdirSync(path.join(REPO, "test/integration"))
    .map((f) => `test/integration/${f}`)
    .filter((f) => HARNESSES.test(f));
  return [...inFolders, ...harnesses]
    .filter((f) => SOURCE.test(f))
    .filter((f) => !Object.keys(LEFT_OUT).some((out) => f === out || f.startsWith(`${out}/`)))
    .sort();
}

/** An octet written out, or a template placeholder that computes one. */
const OCTET = String.raw`(\d{1,3}|\$\{[^}]*\})`;
/**
 * Three octets, then a dot for a fourth: `10.0.0.1`, `172.${x}.${y}.1`; a template's three may be
 * the prefix of a subnet (`10.${a}.${b}`), but three numbers alone are a version (10.0.0). Not
 * 1.10.2.3, 10.5 s, 10.x. An escaped one in a regular expression (`10\.0\.0\.1`) is one too.
 */
const DOT = String.raw`\\?\.`; // escaped too, in a regular expression
const ADDRESS = new RegExp(
  String.raw`(?<![\w.$\\])${OCTET}${DOT}${OCTET}${DOT}${OCTET}(${DOT})?`,
  "g",
);

/** Each address (or template of one) in `text` that lies, or may lie, in a forbidden range. */
function forbiddenAddresses(text: string): string[] {
  const found: string[] = [];
  for (const match of text.matchAll(ADDRESS)) {
    const [, first = "", second = "", third = "", fourthDot] = match;
    const known = (octet: string) => (/^\d+$/.test(octet) ? Number(octet) : undefined);
    const [a, b, c] = [known(first), known(second), known(third)];
    if (fourthDot === undefined && a !== undefined && b !== undefined && c !== undefined) continue;
    const forbidden =
      a === 10 ||
      (a === 172 && (b === undefined || (b >= 16 && b <= 31))) ||
      (a === 192 && (b === undefined || b === 168));
    if (forbidden) {
      const start = text.lastIndexOf("\n", match.index) + 1;
      const end = text.indexOf("\n", match.index);
      found.push(text.slice(start, end < 0 ? undefined : end).trim());
    }
  }
  return found;
}

describe("the scan for forbidden ranges", () => {
  it.each([
    '"--service-cluster-ip-range=10.0.0.0/16"',
    'ips: [LOOPBACK, "10.0.0.1"]',
    "`10.${64 + i}.${j}.${k}`",
    "const net = `10.${200 + n}.${m}`;",
    'hostIP: "192.168.0.1"',
    "`192.${a}.${b}.1`",
    '"172.16.0.0/12"',
    '"172.31.255.1"',
    "`172.${16 + (i % 16)}.0.0/24`",
    String.raw`/from 10\.250\.0\.11 TCP/`,
  ])("finds %s", (text) => {
    expect(forbiddenAddresses(text)).toHaveLength(1);
  });

  it.each([
    '"127.0.0.1"',
    '"100.64.1.10"',
    '"172.15.0.1"',
    '"172.32.0.1"',
    '"192.0.2.10"',
    '"198.18.0.1"',
    '"cloudevents": "10.0.0"',
    "// never 10.x, 172.16-31.x or 192.168.x",
    "v1.10.2",
    "took 10.5 s",
  ])("passes %s", (text) => {
    expect(forbiddenAddresses(text)).toEqual([]);
  });
});

describe("the sources that configure the local clusters", () => {
  const files = sources();

  it("include the control plane, dev/world, the demo, the simulators and the harnesses", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        "dev/control-plane/control-plane.ts",
        "dev/world/fleet.ts",
        "dev/world/index.ts",
        "dev/demo/cluster.ts",
        "dev/cnf-sim/services.ts",
        "dev/netpol/demo.ts",
        "bench/soak/workload.ts",
        "test/integration/netpol-harness.ts",
      ]),
    );
  });

  it("configure no address in 10/8, 172.16/12 or 192.168/16", () => {
    const offending = files.flatMap((file) =>
      forbiddenAddresses(readFileSync(path.join(REPO, file), "utf8")).map(
        (line) => `${file}: ${line.trim()}`,
      ),
    );
    expect(offending).toEqual([]);
  });
});

describe("the address plan", () => {
  it("is the real node's: Pods 100.64/16, Services 100.65/16, the node 100.66.0.1", () => {
    expect([POD_RANGE, SERVICE_RANGE, KUBERNETES_SERVICE_IP, NODE_IP]).toEqual([
      "100.64.0.0/16",
      "100.65.0.0/16",
      "100.65.0.1",
      "100.66.0.1",
    ]);
  });

  it("numbers addresses inside its ranges and refuses what would leave them", () => {
    expect([podAddress(0), podAddress(258), podAddress(65_535)]).toEqual([
      "100.64.0.0",
      "100.64.1.2",
      "100.64.255.255",
    ]);
    expect([serviceAddress(1), serviceAddress(65_534)]).toEqual(["100.65.0.1", "100.65.255.254"]);
    expect(() => podAddress(65_536)).toThrow(RangeError);
    expect(() => serviceAddress(0)).toThrow(RangeError);
  });
});
