// Plain Kubernetes objects for the netpol tests, as the API server would list them, plus one
// call that compiles them and asks `decide` over the stored tables only.
import type {
  RefNamespace,
  RefPacket,
  RefPod,
  RefPolicy,
  RefRule,
  RefSelector,
  RefWorld,
} from "../../../dev/netpol-oracle/reference.js";
import {
  compileObjects,
  decide,
  parseNetpolPod,
  parseNetworkPolicy,
  planNodeEnforcement,
  planNodeScript,
  tableKey,
  type NetpolPod,
  type ObservedPolicy,
  type Packet,
  type PlannedScript,
  type StoredTables,
} from "../../../shared/netpol/index.js";

export function namespace(name: string, labels: Record<string, string> = {}): RefNamespace {
  return { metadata: { name, labels: { "kubernetes.io/metadata.name": name, ...labels } } };
}

export interface PodOptions {
  readonly node?: string;
  readonly ports?: readonly { name: string; port: number; protocol?: string }[];
  readonly hostNetwork?: boolean;
  readonly phase?: string;
}

export function pod(
  ns: string,
  name: string,
  ip: string,
  labels: Record<string, string> = {},
  options: PodOptions = {},
): RefPod {
  return {
    metadata: { name, namespace: ns, labels },
    spec: {
      hostNetwork: options.hostNetwork ?? false,
      containers: [
        {
          ports: (options.ports ?? []).map((p) => ({
            name: p.name,
            containerPort: p.port,
            protocol: p.protocol ?? "TCP",
          })),
        },
      ],
    },
    status: {
      phase: options.phase ?? "Running",
      hostIP: options.node ?? "192.168.0.1",
      podIP: ip,
      podIPs: [{ ip }],
    },
  };
}

export function policy(
  ns: string,
  name: string,
  spec: {
    podSelector?: RefSelector;
    policyTypes?: string[];
    ingress?: RefRule[];
    egress?: RefRule[];
  },
): RefPolicy {
  return { metadata: { name, namespace: ns }, spec: { podSelector: {}, ...spec } };
}

/** Compiles the world, then judges the packet from the stored tables alone. */
export function compiledDecision(world: RefWorld, packet: RefPacket): boolean {
  const compiled = compileObjects(world);
  const tables = {
    endpoints: new Map(compiled.endpoints.map((e) => [tableKey(e.namespace, e.name), e.spec])),
    peerSets: new Map(compiled.peerSets.map((p) => [tableKey(p.namespace, p.name), p.spec])),
  };
  return decide(tables, packet satisfies Packet).allow;
}

/** The agent's table name in the tests. */
export const AGENT_TABLE = "sdewan_netpol";

/**
 * Every Pod of the world on one node: its tables compiled, then the node agent's planners, as
 * the agent would plan them from those tables (`podInterfaces`: the guard's interfaces).
 */
export function nodeRulesetOf(
  world: RefWorld,
  podInterfaces: readonly string[] = [],
): PlannedScript & { readonly tables: StoredTables } {
  const compiled = compileObjects(world);
  const pods = world.pods.flatMap((raw): NetpolPod[] => {
    const parsed = parseNetpolPod(raw);
    return parsed.ok ? [parsed.value] : [];
  });
  const policies = new Map<string, ObservedPolicy[]>();
  for (const raw of world.policies) {
    const parsed = parseNetworkPolicy(raw);
    if (!parsed.ok) continue;
    const list = policies.get(parsed.value.namespace) ?? [];
    list.push({ readable: true, policy: parsed.value });
    policies.set(parsed.value.namespace, list);
  }
  const tables = {
    endpoints: new Map(compiled.endpoints.map((e) => [tableKey(e.namespace, e.name), e.spec])),
    peerSets: new Map(compiled.peerSets.map((p) => [tableKey(p.namespace, p.name), p.spec])),
  };
  const endpoints = new Map(
    [...tables.endpoints].map(([key, spec]) => [
      key,
      { readable: true as const, ownerUid: "", spec },
    ]),
  );
  const enforcement = planNodeEnforcement({ pods, endpoints, policies });
  return {
    ...planNodeScript(enforcement, tables.peerSets, { table: AGENT_TABLE, podInterfaces }),
    tables,
  };
}
