/**
 * IPv4 addresses and CIDRs as 32-bit numbers, for the compiler's containment sums and the
 * datapath's longest-prefix lookups. The tables are IPv4 only: an IPv6 CIDR can never match an
 * IPv4 packet, so leaving it out changes no IPv4 decision (docs/netpol.md).
 */

export interface Cidr {
  /** Network address, host bits cleared, as an unsigned 32-bit number. */
  readonly network: number;
  readonly prefix: number;
}

/**
 * "10.1.2.3" -> unsigned 32-bit number, or null when not a dotted-quad IPv4 address (no leading
 * zeros). Reads character codes: the datapath asks this once per packet.
 */
export function parseIpv4(text: string): number | null {
  let value = 0;
  let octet = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 46 /* . */) {
      if (digits === 0 || dots === 3) return null;
      value = value * 256 + octet;
      octet = 0;
      digits = 0;
      dots += 1;
    } else if (code >= 48 && code <= 57) {
      if (digits > 0 && octet === 0) return null; // a leading zero
      octet = octet * 10 + (code - 48);
      digits += 1;
      if (octet > 255) return null;
    } else {
      return null;
    }
  }
  if (digits === 0 || dots !== 3) return null;
  return value * 256 + octet;
}

export function formatIpv4(value: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".");
}

function maskOf(prefix: number): number {
  return prefix === 0 ? 0 : (0xffffffff << (32 - prefix)) >>> 0;
}

/** "10.1.0.0/16" -> Cidr with host bits cleared (the API server accepts them set), or null. */
export function parseCidr(text: string): Cidr | null {
  const slash = text.indexOf("/");
  if (slash === -1) return null;
  const address = parseIpv4(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (address === null || !/^[0-9]{1,2}$/.test(prefixText)) return null;
  const prefix = Number(prefixText);
  if (prefix > 32) return null;
  return { network: (address & maskOf(prefix)) >>> 0, prefix };
}

export const formatCidr = (cidr: Cidr): string => `${formatIpv4(cidr.network)}/${cidr.prefix}`;

export function cidrContainsIp(cidr: Cidr, ip: number): boolean {
  return (ip & maskOf(cidr.prefix)) >>> 0 === cidr.network;
}

/** Whether `outer` contains (or equals) `inner`. */
export function cidrContains(outer: Cidr, inner: Cidr): boolean {
  return outer.prefix <= inner.prefix && cidrContainsIp(outer, inner.network);
}

/** CIDRs are nested or disjoint: they overlap exactly when one contains the other. */
export const cidrsOverlap = (a: Cidr, b: Cidr): boolean => cidrContains(a, b) || cidrContains(b, a);
