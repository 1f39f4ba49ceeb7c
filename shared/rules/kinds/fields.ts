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

/** Kubernetes names are lowercase DNS subdomains; UCI section names allow only [A-Za-z0-9_]. */
export const UCI_SECTION_NAME_RULE = {
  pattern: /^[a-z0-9]+$/,
  reason: "the CNF stores it as a UCI section name: letters and digits only, no - or .",
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
