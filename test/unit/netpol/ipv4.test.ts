// IPv4 addresses and CIDRs as the compiler and the datapath read them.
import { formatCidr, parseCidr, parseIpv4 } from "../../../shared/netpol/index.js";

describe("IPv4 parsing", () => {
  it.each([
    ["0.0.0.0", 0],
    ["10.1.2.3", 0x0a010203],
    ["255.255.255.255", 0xffffffff],
  ])("%s is %d", (text, value) => {
    expect(parseIpv4(text)).toBe(value);
  });

  it.each([
    "",
    "10.1.2",
    "10.1.2.3.4",
    "10.1.2.256",
    "10.01.2.3",
    "10..2.3",
    "10.1.2.",
    ".1.2.3",
    "fd00::1",
    "10.1.2.3 ",
  ])("%j is not an address", (text) => {
    expect(parseIpv4(text)).toBeNull();
  });

  it("clears host bits of a CIDR and refuses bad prefixes", () => {
    expect(formatCidr(parseCidr("10.1.2.3/16") ?? { network: 1, prefix: 1 })).toBe("10.1.0.0/16");
    expect(parseCidr("10.1.2.3/33")).toBeNull();
    expect(parseCidr("10.1.2.3")).toBeNull();
    expect(parseCidr("0.0.0.0/0")).toEqual({ network: 0, prefix: 0 });
  });
});
