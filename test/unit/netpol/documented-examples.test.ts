// The NetworkPolicy examples of the Kubernetes documentation (concepts/services-networking/
// network-policies), each with packets and the verdict the documentation gives. Both the
// independent reference evaluator and compile-then-decide must give that verdict.
import {
  referenceAllows,
  type RefPacket,
  type RefWorld,
} from "../../../dev/netpol-oracle/reference.js";
import { compiledDecision, namespace, pod, policy } from "./fixtures.js";

const namespaces = [
  namespace("default"),
  namespace("myproject", { project: "myproject" }),
  namespace("alice", { user: "alice" }),
  namespace("other"),
];
const pods = [
  pod("default", "db", "10.1.0.10", { role: "db" }, { node: "192.168.0.1" }),
  pod("default", "frontend", "10.1.0.11", { role: "frontend" }),
  pod("default", "client", "10.1.0.12", { role: "client" }),
  pod("myproject", "anything", "10.1.1.10", { app: "x" }),
  pod("alice", "client", "10.1.2.10", { role: "client" }),
  pod("alice", "server", "10.1.2.11", { role: "server" }),
  pod("other", "client", "10.1.3.10", { role: "client" }),
  pod("default", "web", "10.1.0.20", { app: "web" }, { ports: [{ name: "http", port: 8080 }] }),
  pod("other", "api", "10.1.3.20", { app: "api" }, { ports: [{ name: "http", port: 9090 }] }),
];

const world = (...policies: RefWorld["policies"]): RefWorld => ({ policies, pods, namespaces });

const toDb = (peerIP: string, port = 6379, protocol: RefPacket["protocol"] = "TCP"): RefPacket => ({
  namespace: "default",
  pod: "db",
  direction: "ingress",
  peerIP,
  protocol,
  port,
});
const fromDb = (peerIP: string, port: number): RefPacket => ({
  namespace: "default",
  pod: "db",
  direction: "egress",
  peerIP,
  protocol: "TCP",
  port,
});

const denyIngress = policy("default", "default-deny-ingress", { policyTypes: ["Ingress"] });
const allowAllIngress = policy("default", "allow-all-ingress", {
  policyTypes: ["Ingress"],
  ingress: [{}],
});
const denyEgress = policy("default", "default-deny-egress", { policyTypes: ["Egress"] });
const allowAllEgress = policy("default", "allow-all-egress", {
  policyTypes: ["Egress"],
  egress: [{}],
});
const denyAll = policy("default", "default-deny-all", { policyTypes: ["Ingress", "Egress"] });
const testNetworkPolicy = policy("default", "test-network-policy", {
  podSelector: { matchLabels: { role: "db" } },
  policyTypes: ["Ingress", "Egress"],
  ingress: [
    {
      from: [
        { ipBlock: { cidr: "172.17.0.0/16", except: ["172.17.1.0/24"] } },
        { namespaceSelector: { matchLabels: { project: "myproject" } } },
        { podSelector: { matchLabels: { role: "frontend" } } },
      ],
      ports: [{ protocol: "TCP", port: 6379 }],
    },
  ],
  egress: [
    { to: [{ ipBlock: { cidr: "10.0.0.0/24" } }], ports: [{ protocol: "TCP", port: 5978 }] },
  ],
});
const aliceClientsAnd = policy("default", "and", {
  podSelector: { matchLabels: { role: "db" } },
  ingress: [
    {
      from: [
        {
          namespaceSelector: { matchLabels: { user: "alice" } },
          podSelector: { matchLabels: { role: "client" } },
        },
      ],
    },
  ],
});
const aliceOrClientsOr = policy("default", "or", {
  podSelector: { matchLabels: { role: "db" } },
  ingress: [
    {
      from: [
        { namespaceSelector: { matchLabels: { user: "alice" } } },
        { podSelector: { matchLabels: { role: "client" } } },
      ],
    },
  ],
});
const portRange = policy("default", "multi-port-egress", {
  podSelector: { matchLabels: { role: "db" } },
  policyTypes: ["Egress"],
  egress: [
    {
      to: [{ ipBlock: { cidr: "10.0.0.0/24" } }],
      ports: [{ protocol: "TCP", port: 32000, endPort: 32768 }],
    },
  ],
});
const byNamespaceName = policy("default", "from-other-by-name", {
  podSelector: { matchLabels: { role: "db" } },
  ingress: [
    { from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "other" } } }] },
  ],
});
const namedIngress = policy("default", "named-ingress", {
  podSelector: { matchLabels: { app: "web" } },
  ingress: [{ ports: [{ port: "http" }] }],
});
const namedEgress = policy("default", "named-egress", {
  podSelector: { matchLabels: { app: "web" } },
  policyTypes: ["Egress"],
  egress: [{ to: [{ namespaceSelector: {} }], ports: [{ port: "http" }] }],
});

interface Case {
  readonly scenario: string;
  readonly world: RefWorld;
  readonly packet: RefPacket;
  readonly allowed: boolean;
}

const cases: Case[] = [
  {
    scenario: "no policy: all traffic allowed",
    world: world(),
    packet: toDb("10.9.9.9", 1),
    allowed: true,
  },
  {
    scenario: "default deny ingress blocks a pod peer",
    world: world(denyIngress),
    packet: toDb("10.1.0.11"),
    allowed: false,
  },
  {
    scenario: "default deny ingress still lets the pod's node in",
    world: world(denyIngress),
    packet: toDb("192.168.0.1"),
    allowed: true,
  },
  {
    scenario: "default deny ingress leaves egress open",
    world: world(denyIngress),
    packet: fromDb("8.8.8.8", 53),
    allowed: true,
  },
  {
    scenario: "allow all ingress beside a default deny",
    world: world(denyIngress, allowAllIngress),
    packet: toDb("203.0.113.9", 22),
    allowed: true,
  },
  {
    scenario: "default deny egress",
    world: world(denyEgress),
    packet: fromDb("10.1.0.11", 80),
    allowed: false,
  },
  {
    scenario: "allow all egress beside a default deny",
    world: world(denyEgress, allowAllEgress),
    packet: fromDb("10.1.0.11", 80),
    allowed: true,
  },
  {
    scenario: "default deny all: ingress",
    world: world(denyAll),
    packet: toDb("10.1.0.11"),
    allowed: false,
  },
  {
    scenario: "default deny all: egress",
    world: world(denyAll),
    packet: fromDb("10.1.0.11", 80),
    allowed: false,
  },
  {
    scenario: "test-network-policy: ipBlock peer on 6379",
    world: world(testNetworkPolicy),
    packet: toDb("172.17.5.5"),
    allowed: true,
  },
  {
    scenario: "test-network-policy: ipBlock except",
    world: world(testNetworkPolicy),
    packet: toDb("172.17.1.5"),
    allowed: false,
  },
  {
    scenario: "test-network-policy: wrong port",
    world: world(testNetworkPolicy),
    packet: toDb("172.17.5.5", 6380),
    allowed: false,
  },
  {
    scenario: "test-network-policy: UDP on the TCP port",
    world: world(testNetworkPolicy),
    packet: toDb("172.17.5.5", 6379, "UDP"),
    allowed: false,
  },
  {
    scenario: "test-network-policy: any pod of a selected namespace",
    world: world(testNetworkPolicy),
    packet: toDb("10.1.1.10"),
    allowed: true,
  },
  {
    scenario: "test-network-policy: frontend in the policy's namespace",
    world: world(testNetworkPolicy),
    packet: toDb("10.1.0.11"),
    allowed: true,
  },
  {
    scenario: "test-network-policy: a podSelector alone does not reach other namespaces",
    world: world(testNetworkPolicy),
    packet: toDb("10.1.3.10"),
    allowed: false,
  },
  {
    scenario: "test-network-policy: egress to 10.0.0.0/24:5978",
    world: world(testNetworkPolicy),
    packet: fromDb("10.0.0.7", 5978),
    allowed: true,
  },
  {
    scenario: "test-network-policy: egress elsewhere",
    world: world(testNetworkPolicy),
    packet: fromDb("10.0.1.7", 5978),
    allowed: false,
  },
  {
    scenario: "one peer with both selectors: alice's client",
    world: world(aliceClientsAnd),
    packet: toDb("10.1.2.10", 1),
    allowed: true,
  },
  {
    scenario: "one peer with both selectors: alice's server",
    world: world(aliceClientsAnd),
    packet: toDb("10.1.2.11", 1),
    allowed: false,
  },
  {
    scenario: "one peer with both selectors: a client elsewhere",
    world: world(aliceClientsAnd),
    packet: toDb("10.1.0.12", 1),
    allowed: false,
  },
  {
    scenario: "two peers: alice's server",
    world: world(aliceOrClientsOr),
    packet: toDb("10.1.2.11", 1),
    allowed: true,
  },
  {
    scenario: "two peers: a client in the policy's namespace",
    world: world(aliceOrClientsOr),
    packet: toDb("10.1.0.12", 1),
    allowed: true,
  },
  {
    scenario: "two peers: a client in another namespace",
    world: world(aliceOrClientsOr),
    packet: toDb("10.1.3.10", 1),
    allowed: false,
  },
  {
    scenario: "endPort: first port of the range",
    world: world(portRange),
    packet: fromDb("10.0.0.9", 32000),
    allowed: true,
  },
  {
    scenario: "endPort: last port of the range",
    world: world(portRange),
    packet: fromDb("10.0.0.9", 32768),
    allowed: true,
  },
  {
    scenario: "endPort: past the range",
    world: world(portRange),
    packet: fromDb("10.0.0.9", 32769),
    allowed: false,
  },
  {
    scenario: "namespace by its name label",
    world: world(byNamespaceName),
    packet: toDb("10.1.3.10", 1),
    allowed: true,
  },
  {
    scenario: "namespace by its name label: another one",
    world: world(byNamespaceName),
    packet: toDb("10.1.2.10", 1),
    allowed: false,
  },
  {
    scenario: "ingress named port resolves on the endpoint's own container",
    world: world(namedIngress),
    packet: {
      namespace: "default",
      pod: "web",
      direction: "ingress",
      peerIP: "10.1.3.10",
      protocol: "TCP",
      port: 8080,
    },
    allowed: true,
  },
  {
    scenario: "ingress named port: the peer's number for the name does not count",
    world: world(namedIngress),
    packet: {
      namespace: "default",
      pod: "web",
      direction: "ingress",
      peerIP: "10.1.3.20",
      protocol: "TCP",
      port: 9090,
    },
    allowed: false,
  },
  {
    scenario: "egress named port resolves on the destination pod",
    world: world(namedEgress),
    packet: {
      namespace: "default",
      pod: "web",
      direction: "egress",
      peerIP: "10.1.3.20",
      protocol: "TCP",
      port: 9090,
    },
    allowed: true,
  },
  {
    scenario: "egress named port: the endpoint's own number for the name does not count",
    world: world(namedEgress),
    packet: {
      namespace: "default",
      pod: "web",
      direction: "egress",
      peerIP: "10.1.3.20",
      protocol: "TCP",
      port: 8080,
    },
    allowed: false,
  },
];

describe("documented NetworkPolicy examples", () => {
  it.each(cases)("$scenario: the reference evaluator agrees", ({ world: w, packet, allowed }) => {
    expect(referenceAllows(w, packet)).toBe(allowed);
  });

  it.each(cases)("$scenario: compiled tables agree", ({ world: w, packet, allowed }) => {
    expect(compiledDecision(w, packet)).toBe(allowed);
  });
});
