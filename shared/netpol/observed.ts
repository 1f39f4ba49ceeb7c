/**
 * NetworkPolicies, Pods and Namespaces parsed at the boundary into what the compiler reads.
 * Lenient: an object that does not parse is reported by its caller, never makes a list
 * unreadable. NetworkPolicy defaults (policyTypes, protocol, empty = all) are applied here, the
 * way the API server and the networking/v1 docs state them (reference C.7).
 */
import * as z from "zod";
import type { LabelSelector } from "../core/label-selector.js";
import type { Labels } from "../core/labels.js";
import { parseIpv4 } from "./ipv4.js";

export type Protocol = "TCP" | "UDP" | "SCTP";
export type Direction = "ingress" | "egress";

export interface NamedPort {
  readonly name: string;
  readonly protocol: Protocol;
  readonly port: number;
}

/** A Pod reduced to what enforcement needs. */
export interface NetpolPod {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly labels: Labels;
  /** IPv4 addresses only (status.podIPs, else status.podIP). */
  readonly ips: readonly string[];
  /** status.hostIP when IPv4. */
  readonly nodeIP: string | null;
  readonly hostNetwork: boolean;
  readonly phase: string;
  /** Container ports that have a name, over all containers. */
  readonly namedPorts: readonly NamedPort[];
}

export interface NetpolNamespace {
  readonly name: string;
  readonly labels: Labels;
}

export interface PolicyPort {
  readonly protocol: Protocol;
  /** null: every port of the protocol. */
  readonly port: number | string | null;
  readonly endPort: number | null;
}

export type PolicyPeer =
  | { readonly kind: "ipBlock"; readonly cidr: string; readonly except: readonly string[] }
  | {
      readonly kind: "selector";
      /** null: absent (with a namespaceSelector: every Pod; alone: never both null). */
      readonly podSelector: LabelSelector | null;
      readonly namespaceSelector: LabelSelector | null;
    };

export interface PolicyRule {
  /** null: all ports (the list was absent or empty). */
  readonly ports: readonly PolicyPort[] | null;
  /** null: all peers (the list was absent or empty). */
  readonly peers: readonly PolicyPeer[] | null;
}

export interface NetpolPolicy {
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  /** metadata.generation: changes with the spec, so a peer set can say which spec it reflects. */
  readonly generation: number;
  readonly podSelector: LabelSelector;
  /** Effective policyTypes: as written, or defaulted as the API server does. */
  readonly ingressIsolation: boolean;
  readonly egressIsolation: boolean;
  readonly ingress: readonly PolicyRule[];
  readonly egress: readonly PolicyRule[];
}

/** A Pod that can be an endpoint or a label-selected peer: has an IPv4, own network, running. */
export const isEligiblePod = (pod: NetpolPod): boolean =>
  pod.ips.length > 0 && !pod.hostNetwork && pod.phase !== "Succeeded" && pod.phase !== "Failed";

const stringMap = z.record(z.string(), z.string());
const selectorSchema = z.looseObject({
  matchLabels: stringMap.nullish(),
  matchExpressions: z
    .array(
      z.looseObject({
        key: z.string(),
        operator: z.string(),
        values: z.array(z.string()).nullish(),
      }),
    )
    .nullish(),
});
const protocolSchema = z.enum(["TCP", "UDP", "SCTP"]);
const metaSchema = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().optional(),
  uid: z.string().optional(),
  generation: z.int().optional(),
  labels: stringMap.nullish(),
});

const portSchema = z.looseObject({
  protocol: protocolSchema.nullish(),
  port: z.union([z.int(), z.string()]).nullish(),
  endPort: z.int().nullish(),
});
const peerSchema = z.looseObject({
  podSelector: selectorSchema.nullish(),
  namespaceSelector: selectorSchema.nullish(),
  ipBlock: z.looseObject({ cidr: z.string(), except: z.array(z.string()).nullish() }).nullish(),
});
const ruleSchema = z.looseObject({
  ports: z.array(portSchema).nullish(),
  from: z.array(peerSchema).nullish(),
  to: z.array(peerSchema).nullish(),
});
const networkPolicySchema = z.looseObject({
  metadata: metaSchema,
  spec: z.looseObject({
    podSelector: selectorSchema.nullish(),
    policyTypes: z.array(z.enum(["Ingress", "Egress"])).nullish(),
    ingress: z.array(ruleSchema).nullish(),
    egress: z.array(ruleSchema).nullish(),
  }),
});

const containerSchema = z.looseObject({
  ports: z
    .array(
      z.looseObject({
        name: z.string().nullish(),
        containerPort: z.int(),
        protocol: protocolSchema.nullish(),
      }),
    )
    .nullish(),
});
const podSchema = z.looseObject({
  metadata: metaSchema,
  spec: z
    .looseObject({
      hostNetwork: z.boolean().nullish(),
      containers: z.array(containerSchema).nullish(),
    })
    .nullish(),
  status: z
    .looseObject({
      phase: z.string().nullish(),
      hostIP: z.string().nullish(),
      podIP: z.string().nullish(),
      podIPs: z.array(z.looseObject({ ip: z.string() })).nullish(),
    })
    .nullish(),
});
const namespaceSchema = z.looseObject({ metadata: metaSchema });

export type Parsed<T> =
  { readonly ok: true; readonly value: T } | { readonly ok: false; readonly message: string };

const ipv4Only = (ips: readonly string[]): string[] =>
  [...new Set(ips)].filter((ip) => parseIpv4(ip) !== null);

type RawPod = z.infer<typeof podSchema>;

function podAddresses(status: RawPod["status"]): string[] {
  const listed = (status?.podIPs ?? []).map((p) => p.ip);
  if (listed.length > 0) return listed;
  return status?.podIP ? [status.podIP] : [];
}

function namedPortsOf(spec: RawPod["spec"]): NamedPort[] {
  return (spec?.containers ?? []).flatMap((c) =>
    (c.ports ?? []).flatMap((p) =>
      p.name ? [{ name: p.name, protocol: p.protocol ?? "TCP", port: p.containerPort }] : [],
    ),
  );
}

export function parseNetpolPod(object: unknown): Parsed<NetpolPod> {
  const parsed = podSchema.safeParse(object);
  if (!parsed.success) return { ok: false, message: parsed.error.message };
  const { metadata, spec, status } = parsed.data;
  const hostIP = status?.hostIP ?? null;
  return {
    ok: true,
    value: {
      namespace: metadata.namespace ?? "",
      name: metadata.name,
      uid: metadata.uid ?? "",
      labels: metadata.labels ?? {},
      ips: ipv4Only(podAddresses(status)),
      nodeIP: hostIP !== null && parseIpv4(hostIP) !== null ? hostIP : null,
      hostNetwork: spec?.hostNetwork === true,
      phase: status?.phase ?? "Pending",
      namedPorts: namedPortsOf(spec),
    },
  };
}

export function parseNetpolNamespace(object: unknown): Parsed<NetpolNamespace> {
  const parsed = namespaceSchema.safeParse(object);
  if (!parsed.success) return { ok: false, message: parsed.error.message };
  return {
    ok: true,
    value: { name: parsed.data.metadata.name, labels: parsed.data.metadata.labels ?? {} },
  };
}

type RawRule = z.infer<typeof ruleSchema>;
type RawPeer = z.infer<typeof peerSchema>;

function toPeer(raw: RawPeer): PolicyPeer {
  if (raw.ipBlock)
    return { kind: "ipBlock", cidr: raw.ipBlock.cidr, except: raw.ipBlock.except ?? [] };
  return {
    kind: "selector",
    podSelector: raw.podSelector ?? null,
    namespaceSelector: raw.namespaceSelector ?? null,
  };
}

function toRule(raw: RawRule, direction: Direction): PolicyRule {
  const peers = (direction === "ingress" ? raw.from : raw.to) ?? [];
  const ports = raw.ports ?? [];
  return {
    ports:
      ports.length === 0
        ? null
        : ports.map((p) => ({
            protocol: p.protocol ?? "TCP",
            port: p.port ?? null,
            endPort: p.endPort ?? null,
          })),
    peers: peers.length === 0 ? null : peers.map(toPeer),
  };
}

export function parseNetworkPolicy(object: unknown): Parsed<NetpolPolicy> {
  const parsed = networkPolicySchema.safeParse(object);
  if (!parsed.success) return { ok: false, message: parsed.error.message };
  const { metadata, spec } = parsed.data;
  const ingress = spec.ingress ?? [];
  const egress = spec.egress ?? [];
  const declared = spec.policyTypes ?? [];
  // The API server's default: Ingress always, Egress when there are egress rules.
  const types =
    declared.length > 0 ? declared : egress.length > 0 ? ["Ingress", "Egress"] : ["Ingress"];
  return {
    ok: true,
    value: {
      namespace: metadata.namespace ?? "",
      name: metadata.name,
      uid: metadata.uid ?? "",
      generation: metadata.generation ?? 0,
      podSelector: spec.podSelector ?? {},
      ingressIsolation: types.includes("Ingress"),
      egressIsolation: types.includes("Egress"),
      ingress: ingress.map((r) => toRule(r, "ingress")),
      egress: egress.map((r) => toRule(r, "egress")),
    },
  };
}
