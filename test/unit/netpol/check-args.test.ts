// `npm run netpol -- check` arguments: a packet, or a message saying what is wrong.
import {
  USAGE,
  batchSource,
  parseCheckArgs,
  parsePacketFields,
} from "../../../dev/netpol/check.js";

describe("netpol check arguments", () => {
  it("reads a packet, protocol in any case", () => {
    expect(parseCheckArgs(["check", "web/api", "egress", "10.0.0.7", "udp", "53"])).toEqual({
      ok: true,
      packet: {
        namespace: "web",
        pod: "api",
        direction: "egress",
        peerIP: "10.0.0.7",
        protocol: "UDP",
        port: 53,
      },
    });
  });

  it.each([
    [["check"], USAGE],
    [["check", "api", "ingress", "10.0.0.7", "TCP", "80"], "api: want <namespace>/<pod>"],
    [["check", "web/api", "inbound", "10.0.0.7", "TCP", "80"], "inbound: want ingress or egress"],
    [["check", "web/api", "ingress", "fd00::1", "TCP", "80"], "fd00::1: want an IPv4 address"],
    [["check", "web/api", "ingress", "10.0.0.7", "ICMP", "80"], "ICMP: want TCP, UDP or SCTP"],
    [["check", "web/api", "ingress", "10.0.0.7", "TCP", "0"], "0: want a port 1..65535"],
  ])("%j is refused: %s", (args, message) => {
    expect(parseCheckArgs(args)).toEqual({ ok: false, message });
  });
});

describe("netpol check --batch", () => {
  it.each([
    [["check", "--batch"], "-"],
    [["check", "--batch", "-"], "-"],
    [["check", "--batch", "packets.txt"], "packets.txt"],
    [["check", "--batch", "a", "b"], null],
    [["check", "web/api", "ingress", "10.0.0.7", "TCP", "80"], null],
  ])("%j reads packets from %j", (args, source) => {
    expect(batchSource(args)).toBe(source);
  });

  it.each([
    [["not", "a", "packet"], "not: want <namespace>/<pod>"],
    [["web/api", "ingress", "10.0.0.7", "TCP"], "want 5 fields, got 4"],
    [["web/api", "ingress", "10.0.0.7", "TCP", "80", "extra"], "want 5 fields, got 6"],
  ])("a line %j is answered: %s", (fields, message) => {
    expect(parsePacketFields(fields)).toEqual({ ok: false, message });
  });
});
