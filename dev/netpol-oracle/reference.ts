/**
 * A reference NetworkPolicy evaluator written straight from the Kubernetes API documentation
 * (networking.k8s.io/v1 NetworkPolicy, LabelSelector; reference C.7), to judge the compiler in
 * shared/netpol. It shares no code with it on purpose, not even the label selector or the IP
 * parsing: a bug copied into both would agree with itself. It reads the objects as the API
 * server stores them and answers one packet at a time, the slow obvious way.
 *
 * The world model both sides agree on (docs/netpol.md): IPv4 packets; a Pod takes part (as the
 * endpoint asked about or as a label-selected peer) when it has an IPv4 address, does not use the
 * host network and has not terminated; the peer of a packet is the Pod owning its address, if any.
 */

export interface RefSelector {
  matchLabels?: Record<string, string> | null;
  matchExpressions?: { key: string; operator: string; values?: string[] | null }[] | null;
}
export interface RefPeer {
  podSelector?: RefSelector | null;
  namespaceSelector?: RefSelector | null;
  ipBlock?: { cidr: string; except?: string[] | null } | null;
}
export interface RefPort {
  protocol?: string | null;
  port?: number | string | null;
  endPort?: number | null;
}
export interface RefRule {
  ports?: RefPort[] | null;
  from?: RefPeer[] | null;
  to?: RefPeer[] | null;
}
export interface RefPolicy {
  metadata: { name: string; namespace: string };
  spec: {
    podSelector?: RefSelector | null;
    policyTypes?: string[] | null;
    ingress?: RefRule[] | null;
    egress?: RefRule[] | null;
  };
}
export interface RefPod {
  metadata: { name: string; namespace: string; labels?: Record<string, string> | null };
  spec?: {
    hostNetwork?: boolean | null;
    containers?:
      | {
          ports?:
            { name?: string | null; containerPort: number; protocol?: string | null }[] | null;
        }[]
      | null;
  } | null;
  status?: {
    phase?: string | null;
    hostIP?: string | null;
    podIP?: string | null;
    podIPs?: { ip: string }[] | null;
  } | null;
}
export interface RefNamespace {
  metadata: { name: string; labels?: Record<string, string> | null };
}
export interface RefWorld {
  policies: RefPolicy[];
  pods: RefPod[];
  namespaces: RefNamespace[];
}
export interface RefPacket {
  namespace: string;
  pod: string;
  direction: "ingress" | "egress";
  peerIP: string;
  protocol: "TCP" | "UDP" | "SCTP";
  port: number;
}

export interface RefOptions {
  /**
   * Kubernetes: `NotIn` matches an object without the key (apimachinery Requirement.Matches).
   * false mimics cyclonus v0.5.6, which does not: used only to explain cyclonus's disagreements.
   */
  readonly notInMatchesMissingKey?: boolean;
}

type Match = (selector: RefSelector, labels: Record<string, string>) => boolean;

// LabelSelector: matchLabels and matchExpressions are ANDed; an empty selector matches everything.
function labelsMatch(
  selector: RefSelector,
  labels: Record<string, string>,
  notInMatchesMissingKey: boolean,
): boolean {
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (!Object.prototype.hasOwnProperty.call(labels, key) || labels[key] !== value) return false;
  }
  for (const expr of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, expr.key);
    const values = expr.values ?? [];
    if (expr.operator === "In" && !(has && values.includes(labels[expr.key] as string)))
      return false;
    if (expr.operator === "NotIn" && has && values.includes(labels[expr.key] as string))
      return false;
    if (expr.operator === "NotIn" && !has && !notInMatchesMissingKey) return false;
    if (expr.operator === "Exists" && !has) return false;
    if (expr.operator === "DoesNotExist" && has) return false;
  }
  return true;
}

function ipToNumber(ip: string): number | null {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(ip);
  if (m === null) return null;
  const octets = m.slice(1).map(Number);
  if (octets.some((o) => o > 255)) return null;
  return octets.reduce((acc, o) => acc * 256 + o, 0);
}

function inCidr(ip: string, cidr: string): boolean {
  const [base, bitsText] = cidr.split("/");
  const address = ipToNumber(ip);
  const network = ipToNumber(base ?? "");
  const bits = Number(bitsText);
  if (address === null || network === null || !Number.isInteger(bits)) return false;
  const size = 2 ** (32 - bits);
  return Math.floor(address / size) === Math.floor(network / size);
}

function addressesOf(pod: RefPod): string[] {
  const listed = (pod.status?.podIPs ?? []).map((p) => p.ip);
  const all = listed.length > 0 ? listed : pod.status?.podIP ? [pod.status.podIP] : [];
  return all.filter((ip) => ipToNumber(ip) !== null);
}

function takesPart(pod: RefPod): boolean {
  const phase = pod.status?.phase;
  return (
    addressesOf(pod).length > 0 &&
    pod.spec?.hostNetwork !== true &&
    phase !== "Succeeded" &&
    phase !== "Failed"
  );
}

// policyTypes: when unset, Ingress always; Egress when the policy has egress rules.
function policyTypes(policy: RefPolicy): string[] {
  const given = policy.spec.policyTypes ?? [];
  if (given.length > 0) return given;
  return (policy.spec.egress ?? []).length > 0 ? ["Ingress", "Egress"] : ["Ingress"];
}

function selectsPod(policy: RefPolicy, pod: RefPod, labelsMatch: Match): boolean {
  return (
    policy.metadata.namespace === pod.metadata.namespace &&
    labelsMatch(policy.spec.podSelector ?? {}, pod.metadata.labels ?? {})
  );
}

// A port number named on a Pod: the container port with that name and the rule's protocol.
function namedPortOn(pod: RefPod, name: string, protocol: string): number | null {
  for (const container of pod.spec?.containers ?? []) {
    for (const p of container.ports ?? []) {
      if (p.name === name && (p.protocol ?? "TCP") === protocol) return p.containerPort;
    }
  }
  return null;
}

function portMatches(rulePort: RefPort, packet: RefPacket, destination: RefPod | null): boolean {
  if ((rulePort.protocol ?? "TCP") !== packet.protocol) return false;
  if (rulePort.port === undefined || rulePort.port === null) return true;
  if (typeof rulePort.port === "string") {
    if (destination === null) return false;
    return namedPortOn(destination, rulePort.port, packet.protocol) === packet.port;
  }
  const last = rulePort.endPort ?? rulePort.port;
  return packet.port >= rulePort.port && packet.port <= last;
}

function peerMatches(
  labelsMatch: Match,
  peer: RefPeer,
  policy: RefPolicy,
  world: RefWorld,
  other: { ip: string; pod: RefPod | null },
): boolean {
  const { ip: peerIP, pod: peerPod } = other;
  if (peer.ipBlock) {
    return (
      inCidr(peerIP, peer.ipBlock.cidr) &&
      !(peer.ipBlock.except ?? []).some((e) => inCidr(peerIP, e))
    );
  }
  if (peerPod === null) return false;
  if (!peer.podSelector && !peer.namespaceSelector) return false;
  if (peer.namespaceSelector) {
    const ns = world.namespaces.find((n) => n.metadata.name === peerPod.metadata.namespace);
    if (!labelsMatch(peer.namespaceSelector, ns?.metadata.labels ?? {})) return false;
  } else if (peerPod.metadata.namespace !== policy.metadata.namespace) {
    return false; // a podSelector alone selects in the policy's own namespace
  }
  return labelsMatch(peer.podSelector ?? {}, peerPod.metadata.labels ?? {});
}

/** Kubernetes' verdict for one packet (or cyclonus's reading of it, with RefOptions). */
export function referenceAllows(
  world: RefWorld,
  packet: RefPacket,
  given: RefOptions = {},
): boolean {
  const notIn = given.notInMatchesMissingKey ?? true;
  return verdict(world, packet, (selector, labels) => labelsMatch(selector, labels, notIn));
}

function verdict(world: RefWorld, packet: RefPacket, match: Match): boolean {
  const endpoint = world.pods.find(
    (p) => p.metadata.namespace === packet.namespace && p.metadata.name === packet.pod,
  );
  if (endpoint === undefined || !takesPart(endpoint)) return true;
  const type = packet.direction === "ingress" ? "Ingress" : "Egress";
  const applying = world.policies.filter(
    (p) => selectsPod(p, endpoint, match) && policyTypes(p).includes(type),
  );
  if (applying.length === 0) return true; // not isolated in this direction
  if (packet.direction === "ingress" && endpoint.status?.hostIP === packet.peerIP) return true;
  const peerPod =
    world.pods.find((p) => takesPart(p) && addressesOf(p).includes(packet.peerIP)) ?? null;
  const destination = packet.direction === "ingress" ? endpoint : peerPod;
  return applying.some((policy) => {
    const rules = (packet.direction === "ingress" ? policy.spec.ingress : policy.spec.egress) ?? [];
    return rules.some((rule) => {
      const peers = (packet.direction === "ingress" ? rule.from : rule.to) ?? [];
      const ports = rule.ports ?? [];
      const portOk = ports.length === 0 || ports.some((p) => portMatches(p, packet, destination));
      const peerOk =
        peers.length === 0 ||
        peers.some((p) =>
          peerMatches(match, p, policy, world, { ip: packet.peerIP, pod: peerPod }),
        );
      return portOk && peerOk;
    });
  });
}
