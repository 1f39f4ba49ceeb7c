// fast-check generators of NetworkPolicy worlds and packets for the netpol property tests:
// namespaces with labels; Pods with labels, addresses, nodes, named ports, host network and
// phases; policies of every selector and peer shape, ports with and without names and ranges,
// policyTypes present or absent.
import fc from "fast-check";
import type {
  RefNamespace,
  RefPeer,
  RefPod,
  RefPolicy,
  RefPort,
  RefRule,
  RefSelector,
  RefWorld,
} from "../../../dev/netpol-oracle/reference.js";

export const PACKETS_PER_CASE = 12;

const NAMESPACES = ["ns-a", "ns-b", "ns-c"];
export const NODE_IPS = ["192.168.0.1", "192.168.0.2"];
const OUTSIDE_IPS = ["10.0.0.200", "10.0.0.5", "172.16.5.5", "8.8.8.8", "10.9.0.1"];
const PORTS = [53, 80, 443, 8080, 9090, 9091];
const PORT_NAMES = ["http", "dns", "metrics", "nope"];
const EXCEPTS: Readonly<Record<string, readonly string[]>> = {
  "0.0.0.0/0": ["10.0.0.0/8", "10.0.0.0/28", "172.16.0.0/12"],
  "10.0.0.0/8": ["10.0.0.0/24", "10.0.0.0/28", "10.0.0.8/29"],
  "10.0.0.0/24": ["10.0.0.0/28", "10.0.0.4/30", "10.0.0.8/29"],
  "10.0.0.0/28": ["10.0.0.4/30", "10.0.0.2/31"],
  "10.0.0.4/30": ["10.0.0.4/31"],
  "172.16.0.0/12": ["172.16.5.0/24"],
  "fd00::/8": ["fd00::/16"],
};

const labels = fc.dictionary(
  fc.constantFrom("app", "role", "tier"),
  fc.constantFrom("a", "b", ""),
  {
    maxKeys: 3,
  },
);

const selector: fc.Arbitrary<RefSelector> = fc.record(
  {
    matchLabels: fc.dictionary(fc.constantFrom("app", "role", "tier"), fc.constantFrom("a", "b"), {
      maxKeys: 1,
    }),
    matchExpressions: fc.array(
      fc.oneof(
        fc.record({
          key: fc.constantFrom("app", "role", "tier"),
          operator: fc.constantFrom("In", "NotIn"),
          values: fc.uniqueArray(fc.constantFrom("a", "b", ""), { minLength: 1, maxLength: 2 }),
        }),
        fc.record({
          key: fc.constantFrom("app", "role", "tier"),
          operator: fc.constantFrom("Exists", "DoesNotExist"),
        }),
      ),
      { maxLength: 2 },
    ),
  },
  { requiredKeys: [] },
);

const namespaces: fc.Arbitrary<RefNamespace[]> = fc.tuple(
  ...NAMESPACES.map((name) => labels.map((l): RefNamespace => ({ metadata: { name, labels: l } }))),
);

const namedPorts = fc.record({
  http: fc.constantFrom(null, 80, 8080),
  dns: fc.constantFrom(null, 53),
  metrics: fc.constantFrom(null, 9090, 9091),
  metricsProtocol: fc.constantFrom("TCP", "UDP"),
});

export const podAt = (index: number): fc.Arbitrary<RefPod> =>
  fc
    .record({
      namespace: fc.constantFrom(...NAMESPACES),
      labels,
      node: fc.constantFrom(...NODE_IPS),
      hostNetwork: fc.integer({ min: 0, max: 9 }).map((n) => n === 0),
      phase: fc.constantFrom(...Array<string>(8).fill("Running"), "Pending", "Succeeded", "Failed"),
      ports: namedPorts,
    })
    .map(({ namespace, labels: l, node, hostNetwork, phase, ports }): RefPod => {
      const ip = `10.0.0.${index + 1}`;
      const containerPorts = [
        ...(ports.http === null
          ? []
          : [{ name: "http", containerPort: ports.http, protocol: "TCP" }]),
        ...(ports.dns === null ? [] : [{ name: "dns", containerPort: ports.dns, protocol: "UDP" }]),
        ...(ports.metrics === null
          ? []
          : [{ name: "metrics", containerPort: ports.metrics, protocol: ports.metricsProtocol }]),
      ];
      const hasAddress = phase !== "Pending";
      return {
        metadata: { name: `pod-${index}`, namespace, labels: l },
        spec: { hostNetwork, containers: [{ ports: containerPorts }] },
        status: {
          phase,
          hostIP: node,
          ...(hasAddress
            ? { podIP: hostNetwork ? node : ip, podIPs: [{ ip: hostNetwork ? node : ip }] }
            : {}),
        },
      };
    });

const port: fc.Arbitrary<RefPort> = fc.oneof(
  fc.record({ protocol: fc.constantFrom(undefined, "TCP", "UDP", "SCTP") }, { requiredKeys: [] }),
  fc
    .record({
      protocol: fc.constantFrom(undefined, "TCP", "UDP", "SCTP"),
      port: fc.constantFrom(...PORTS),
      range: fc.constantFrom(0, 0, 1, 10, 1000),
    })
    .map(({ protocol, port: p, range }) => ({
      ...(protocol === undefined ? {} : { protocol }),
      port: p,
      ...(range === 0 ? {} : { endPort: p + range }),
    })),
  fc
    .record({
      protocol: fc.constantFrom(undefined, "TCP", "UDP"),
      port: fc.constantFrom(...PORT_NAMES),
    })
    .map(({ protocol, port: p }) => ({ ...(protocol === undefined ? {} : { protocol }), port: p })),
);

const ipBlock: fc.Arbitrary<RefPeer> = fc.constantFrom(...Object.keys(EXCEPTS)).chain((cidr) =>
  fc
    .subarray([...(EXCEPTS[cidr] ?? [])], {
      maxLength: Math.min(2, (EXCEPTS[cidr] ?? []).length),
    })
    .map((except): RefPeer => ({ ipBlock: { cidr, ...(except.length > 0 ? { except } : {}) } })),
);

const peer: fc.Arbitrary<RefPeer> = fc.oneof(
  ipBlock,
  selector.map((s): RefPeer => ({ podSelector: s })),
  selector.map((s): RefPeer => ({ namespaceSelector: s })),
  fc.record({ podSelector: selector, namespaceSelector: selector }),
);

const listOf = <T>(item: fc.Arbitrary<T>, max: number): fc.Arbitrary<T[] | undefined> =>
  fc.option(fc.array(item, { maxLength: max }), { nil: undefined });

const rule = (peersField: "from" | "to"): fc.Arbitrary<RefRule> =>
  fc.record({ ports: listOf(port, 2), peers: listOf(peer, 2) }).map(({ ports, peers }) => ({
    ...(ports === undefined ? {} : { ports }),
    ...(peers === undefined ? {} : { [peersField]: peers }),
  }));

const policy = (index: number): fc.Arbitrary<RefPolicy> =>
  fc
    .record({
      namespace: fc.constantFrom(...NAMESPACES),
      podSelector: fc.oneof(fc.constant<RefSelector>({}), selector),
      policyTypes: fc.constantFrom<string[] | undefined>(
        undefined,
        ["Ingress"],
        ["Egress"],
        ["Ingress", "Egress"],
      ),
      ingress: listOf(rule("from"), 3),
      egress: listOf(rule("to"), 3),
    })
    .map(({ namespace, podSelector, policyTypes, ingress, egress }) => ({
      metadata: { name: `policy-${index}`, namespace },
      spec: {
        podSelector,
        ...(policyTypes === undefined ? {} : { policyTypes }),
        ...(ingress === undefined ? {} : { ingress }),
        ...(egress === undefined ? {} : { egress }),
      },
    }));

export const world: fc.Arbitrary<RefWorld> = fc
  .record({ podCount: fc.integer({ min: 1, max: 6 }), policyCount: fc.integer({ min: 0, max: 5 }) })
  .chain(({ podCount, policyCount }) =>
    fc.record({
      namespaces,
      pods: fc.tuple(...Array.from({ length: podCount }, (_, i) => podAt(i))),
      policies: fc.tuple(...Array.from({ length: policyCount }, (_, i) => policy(i))),
    }),
  );

const packetDraw = fc.record({
  pod: fc.nat(),
  direction: fc.constantFrom("ingress", "egress"),
  peer: fc.nat(),
  protocol: fc.constantFrom("TCP", "UDP", "SCTP"),
  port: fc.constantFrom(...PORTS, 1000, 9000),
});

export const scenario = fc.record({
  world,
  packets: fc.array(packetDraw, { minLength: PACKETS_PER_CASE, maxLength: PACKETS_PER_CASE }),
});

export function peerCandidates(w: RefWorld): string[] {
  const podIPs = w.pods.flatMap((p) => (p.status?.podIP ? [p.status.podIP] : []));
  return [...new Set([...podIPs, ...NODE_IPS, ...OUTSIDE_IPS])];
}
