/**
 * Field building blocks shared by the kind modules. Each field carries its description so the
 * generated CRD answers `kubectl explain`.
 */
import { z } from "zod";
import { NetworkNotMappedError } from "../errors.js";
import type { NetworkInterfaceMap } from "../network-map.js";

/** An optional string option, as upstream's omitempty string fields. */
export const opt = (description: string): z.ZodOptional<z.ZodString> =>
  z.string().optional().describe(description);

/** "0" or "1", the CNF's flag values. */
export const flag = (description: string): z.ZodOptional<z.ZodEnum<{ "0": "0"; "1": "1" }>> =>
  z.enum(["0", "1"]).optional().describe(description);

/** A decimal integer > 0 written as a string (ports, timeouts), as the CNF checks it. */
export const positiveIntText = (description: string): z.ZodOptional<z.ZodString> =>
  z
    .string()
    .regex(/^[1-9][0-9]*$/, { message: 'must be an integer > 0 written as a string, e.g. "80"' })
    .optional()
    .describe(description);

/** Upstream's "list of names" fields (zone networks, proposals). */
export const nameList = (description: string): z.ZodArray<z.ZodString> =>
  z.array(z.string().min(1)).describe(description);

/**
 * A Kubernetes name as the CNF stores it when the name is a UCI section name ([A-Za-z0-9_]):
 * "-" becomes "_". Kubernetes names never hold "_", so the mapping is one-to-one and a name
 * without "-" is stored as it is (no rule written before the mapping changes on the CNF).
 */
export const uciSectionName = (name: string): string => name.replaceAll("-", "_");

/** Kubernetes names are lowercase DNS subdomains; "." has no UCI counterpart and is refused. */
export const UCI_SECTION_NAME_RULE = {
  pattern: /^[a-z0-9-]+$/,
  reason:
    "the CNF stores it as a UCI section name: lowercase letters, digits and - (stored as _), no .",
  cnfName: uciSectionName,
} as const;

/** Translates a network name through the CNF Deployment's nfn-network map. */
export function interfaceOf(networks: NetworkInterfaceMap, network: string, field: string): string {
  const iface = networks.get(network);
  if (iface === undefined) throw new NetworkNotMappedError(network, field, [...networks.keys()]);
  return iface;
}

/** Examples (RuleExample): a port 1..60000 chosen by `n`. */
export const examplePort = (n: number): string => String(1 + (n % 60_000));

/** Examples: the last two octets of an IPv4 address chosen by `n`, e.g. `3.17`. */
export const exampleOctets = (n: number): string => `${(n >> 8) & 255}.${n & 255}`;
