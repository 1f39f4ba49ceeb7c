/**
 * Schemas of the compiled NetworkPolicy tables (netpol.sdewan.akraino.org/v1alpha1), written by
 * network-policy-sync and read by the node agent (and `npm run netpol -- check`) without reading
 * any NetworkPolicy, Pod or Namespace: NetworkPolicyEndpoint (per selected Pod, the bitmap tables
 * of reference C.4) and NetworkPolicyPeerSet (per policy, the Pod IPs its peers select). Output
 * only: all in `spec`, problems in `status`. Why this shape: docs/adr/0005-netpol-table-shape.md.
 */
import * as z from "zod";
import {
  NETPOL_API_VERSION,
  NETPOL_ENDPOINT_KIND,
  NETPOL_PEER_SET_KIND,
} from "../core/api-groups.js";

export {
  NETPOL_API_GROUP,
  NETPOL_VERSION,
  NETPOL_API_VERSION,
  NETPOL_ENDPOINT_KIND,
  NETPOL_ENDPOINT_PLURAL,
  NETPOL_PEER_SET_KIND,
  NETPOL_PEER_SET_PLURAL,
} from "../core/api-groups.js";

/** The datapath's bitmap width: rule bits per endpoint and direction. */
export const MAX_RULE_BITS = 64;

/** A u64 bitmap as 16 lowercase hex digits (JSON numbers cannot hold 64 bits). */
export const ruleBitsSchema = z
  .string()
  .regex(/^[0-9a-f]{16}$/)
  .describe("Rule bitmap: 16 hex digits, bit i = rules[i].");

const ipv4CidrSchema = z
  .string()
  .regex(/^[0-9]{1,3}(\.[0-9]{1,3}){3}\/[0-9]{1,2}$/)
  .describe("IPv4 CIDR, host bits zero.");

export const cidrEntrySchema = z
  .object({ cidr: ipv4CidrSchema, bits: ruleBitsSchema })
  .describe("A longest-prefix-match entry: its bits include those of every containing CIDR.");
export type CidrEntry = z.infer<typeof cidrEntrySchema>;

export const portEntrySchema = z
  .object({
    protocol: z.enum(["TCP", "UDP", "SCTP", "any"]).describe("TCP, UDP, SCTP, or any."),
    port: z.int().min(1).max(65535).optional().describe("First port; absent: every port."),
    endPort: z.int().min(1).max(65535).optional().describe("Last port of a range (inclusive)."),
    bits: ruleBitsSchema,
  })
  .describe("Destination ports the rules of `bits` allow.");
export type PortEntry = z.infer<typeof portEntrySchema>;

export const peerGroupRefSchema = z
  .object({
    peerSet: z.string().min(1).describe("NetworkPolicyPeerSet (= NetworkPolicy) name."),
    group: z.string().min(1).describe("Address group in that peer set."),
    bits: ruleBitsSchema,
  })
  .describe("Peers selected by labels: any address of the group sets `bits`.");
export type PeerGroupRef = z.infer<typeof peerGroupRefSchema>;

export const ruleBitSchema = z
  .object({
    bit: z.int().min(0).max(63).describe("Bit index."),
    name: z
      .string()
      .min(1)
      .describe("<namespace>:<policy>_<direction>_<rule index>, plus :<PROTO>/<port> for a split."),
  })
  .describe("One (policy, rule) bit.");
export type RuleBit = z.infer<typeof ruleBitSchema>;

export const directionTableSchema = z
  .object({
    isolated: z.boolean().describe("A policy of this direction selects the endpoint."),
    failClosed: z
      .boolean()
      .describe("More rule bits than the datapath holds: this direction denies everything."),
    rules: z.array(ruleBitSchema).describe("The rule bits, by bit."),
    cidrs: z.array(cidrEntrySchema).describe("ipBlocks without except (and allow-all peers)."),
    cidrsWithExcept: z.array(cidrEntrySchema).describe("ipBlocks with except."),
    excepts: z.array(cidrEntrySchema).describe("Except CIDRs: they clear their bits."),
    peerGroups: z.array(peerGroupRefSchema).describe("Label-selected peers, by address group."),
    ports: z.array(portEntrySchema).describe("Port entries; rules without ports use `any`."),
  })
  .describe(
    "allow = isolated ? !failClosed && ((cidrs | groups | (cidrsWithExcept & ~excepts)) & ports) != 0 : true",
  );
export type DirectionTable = z.infer<typeof directionTableSchema>;

export const endpointSpecSchema = z
  .object({
    podIPs: z.array(z.string()).describe("The endpoint's IPv4 addresses."),
    nodeIP: z.string().optional().describe("Its Node's IP: ingress from it is always allowed."),
    ingress: directionTableSchema,
    egress: directionTableSchema,
  })
  .describe("The endpoint's enforcement tables.");
export type EndpointSpec = z.infer<typeof endpointSpecSchema>;

export const netpolProblemSchema = z
  .object({
    reason: z.string().min(1).describe("One CamelCase word, e.g. TooManyRules."),
    message: z.string().describe("Detail for people."),
  })
  .describe("A problem found while compiling.");
export type NetpolProblem = z.infer<typeof netpolProblemSchema>;

export const endpointStatusSchema = z
  .object({ problems: z.array(netpolProblemSchema).describe("Empty when enforced as written.") })
  .describe("What the compiler could not express.");

export const addressGroupSchema = z
  .object({
    name: z.string().min(1).describe("<direction>_<rule index>[:<PROTO>/<port>]."),
    addresses: z.array(z.string()).describe("Sorted IPv4 addresses of the selected Pods."),
  })
  .describe("The Pods one rule's selector peers select.");
export type AddressGroup = z.infer<typeof addressGroupSchema>;

export const peerSetSpecSchema = z
  .object({ groups: z.array(addressGroupSchema).describe("Address groups, by name.") })
  .describe("Peer addresses of one NetworkPolicy, shared by all its endpoints.");
export type PeerSetSpec = z.infer<typeof peerSetSpecSchema>;

export const peerSetStatusSchema = z
  .object({
    problems: z
      .array(netpolProblemSchema)
      .describe("E.g. endpoints where this policy failed closed."),
  })
  .describe("What the compiler could not express for this policy.");

const tableMetadataSchema = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().min(1),
  uid: z.string().optional(),
  resourceVersion: z.string().optional(),
});

export const netpolEndpointSchema = z.object({
  apiVersion: z.literal(NETPOL_API_VERSION),
  kind: z.literal(NETPOL_ENDPOINT_KIND),
  metadata: tableMetadataSchema,
  spec: endpointSpecSchema,
  status: endpointStatusSchema.optional(),
});
export type NetpolEndpointObject = z.infer<typeof netpolEndpointSchema>;

export const netpolPeerSetSchema = z.object({
  apiVersion: z.literal(NETPOL_API_VERSION),
  kind: z.literal(NETPOL_PEER_SET_KIND),
  metadata: tableMetadataSchema,
  spec: peerSetSpecSchema,
  status: peerSetStatusSchema.optional(),
});
export type NetpolPeerSetObject = z.infer<typeof netpolPeerSetSchema>;
