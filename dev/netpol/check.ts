/**
 * `npm run netpol -- check <namespace>/<pod> ingress|egress <peer-ip> <TCP|UDP|SCTP> <port>`:
 * would this packet pass? Judged by `decide` from the Pod's NetworkPolicyEndpoint and the peer
 * sets it references, as a node agent would. The Pod and its Namespace are read too, so an answer
 * never says "allow" for a Pod or Namespace that does not exist; and when the Pod has no table,
 * its namespace's NetworkPolicies say whether that is "no policy selects it" (allow) or "its
 * tables are not computed yet". `check --batch [file|-]`: one packet per line, one answer per
 * line, in order, each Pod's objects read once (TableReader).
 */
import {
  NAMESPACES,
  NETPOL_ENDPOINTS,
  NETPOL_PEER_SETS,
  NETWORK_POLICIES,
  PODS,
  type KubeClient,
} from "../../shared/kube/index.js";
import {
  PEER_SET_TOO_LARGE,
  compilePolicy,
  decide,
  isEligiblePod,
  parseIpv4,
  parseNetpolPod,
  parseNetworkPolicy,
  selectsEndpoint,
  storedTablesFromObjects,
  type NetpolPod,
  type Packet,
} from "../../shared/netpol/index.js";
import { netpolPeerSetSchema } from "../../shared/kinds/netpol.js";

export const USAGE =
  "usage: npm run netpol -- check <namespace>/<pod> ingress|egress <peer-ip> <TCP|UDP|SCTP> <port>\n" +
  "       npm run netpol -- check --batch [<file>|-]   (one packet per line: the same five fields)";

/** The first word of an answer. */
export type Verdict = "allow" | "deny" | "no-namespace" | "no-pod" | "not-computed";

/** Exit codes of a single check (docs/netpol.md); usage errors 2, API errors 3. */
export const EXIT_CODE: Readonly<Record<Verdict, number>> = {
  allow: 0,
  deny: 1,
  "no-namespace": 4,
  "no-pod": 5,
  "not-computed": 6,
};
export const EXIT_USAGE = 2;
export const EXIT_API_ERROR = 3;

export interface CheckAnswer {
  readonly verdict: Verdict;
  /** Why, for people. */
  readonly reason: string;
  /** Names of the rule bits that allowed the packet. */
  readonly rules: readonly string[];
}

export type ParsedPacket = { ok: true; packet: Packet } | { ok: false; message: string };

/** The five fields of a packet: `<namespace>/<pod> ingress|egress <ip> <protocol> <port>`. */
export function parsePacketFields(fields: readonly string[]): ParsedPacket {
  const [target = "", direction, peerIP, protocol, portText] = fields;
  const [namespace, pod, ...rest] = target.split("/");
  if (!namespace || !pod || rest.length > 0)
    return { ok: false, message: `${target}: want <namespace>/<pod>` };
  if (fields.length !== 5) {
    return { ok: false, message: `want 5 fields, got ${fields.length}` };
  }
  if (direction !== "ingress" && direction !== "egress") {
    return { ok: false, message: `${direction}: want ingress or egress` };
  }
  if (peerIP === undefined || parseIpv4(peerIP) === null) {
    return { ok: false, message: `${peerIP}: want an IPv4 address` };
  }
  const upper = (protocol ?? "").toUpperCase();
  if (upper !== "TCP" && upper !== "UDP" && upper !== "SCTP") {
    return { ok: false, message: `${protocol}: want TCP, UDP or SCTP` };
  }
  const port = Number(portText);
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    return { ok: false, message: `${portText}: want a port 1..65535` };
  }
  return { ok: true, packet: { namespace, pod, direction, peerIP, protocol: upper, port } };
}

export function parseCheckArgs(args: readonly string[]): ParsedPacket {
  const [command, ...fields] = args;
  if (command !== "check" || fields.length !== 5) return { ok: false, message: USAGE };
  return parsePacketFields(fields);
}

/** `check --batch [file|-]`: where the packets come from ("-": stdin), or null if not batch. */
export function batchSource(args: readonly string[]): string | null {
  const [command, flag, source, ...extra] = args;
  if (command !== "check" || flag !== "--batch" || extra.length > 0) return null;
  return source ?? "-";
}

interface PodObjects {
  readonly namespace: unknown;
  readonly pod: unknown;
  readonly endpoint: unknown;
}

/**
 * The objects checks read, each once per process: a batch asking about the same Pod many times
 * reads its table, Pod and Namespace once, and a peer set or a namespace's policies once.
 */
export class TableReader {
  private readonly pods = new Map<string, Promise<PodObjects>>();
  private readonly peerSets = new Map<string, Promise<unknown>>();
  private readonly policies = new Map<string, Promise<readonly unknown[]>>();
  private readonly namespaces = new Map<string, Promise<unknown>>();

  constructor(private readonly kube: KubeClient) {}

  private once<T>(cache: Map<string, Promise<T>>, key: string, read: () => Promise<T>): Promise<T> {
    let found = cache.get(key);
    if (found === undefined) cache.set(key, (found = read()));
    return found;
  }

  podObjects(namespace: string, name: string): Promise<PodObjects> {
    return this.once(this.pods, `${namespace}/${name}`, async () => {
      const [ns, pod, endpoint] = await Promise.all([
        this.once(this.namespaces, namespace, () => this.kube.get(NAMESPACES, { name: namespace })),
        this.kube.get(PODS, { namespace, name }),
        this.kube.get(NETPOL_ENDPOINTS, { namespace, name }),
      ]);
      return { namespace: ns, pod, endpoint };
    });
  }

  peerSet(namespace: string, name: string): Promise<unknown> {
    return this.once(this.peerSets, `${namespace}/${name}`, () =>
      this.kube.get(NETPOL_PEER_SETS, { namespace, name }),
    );
  }

  namespacePolicies(namespace: string): Promise<readonly unknown[]> {
    return this.once(this.policies, namespace, () =>
      this.kube.list(NETWORK_POLICIES, { namespace }),
    );
  }
}

/** Names of the namespace's policies that select the Pod (unparsable ones are left out). */
function selectingPolicies(pod: NetpolPod, policies: readonly unknown[]): string[] {
  return policies
    .flatMap((raw) => {
      const parsed = parseNetworkPolicy(raw);
      return parsed.ok && selectsEndpoint(compilePolicy(parsed.value), pod)
        ? [parsed.value.name]
        : [];
    })
    .sort();
}

/** No endpoint table: is that "no policy selects the Pod", or "not computed yet"? */
async function withoutTable(
  reader: TableReader,
  pod: NetpolPod,
  packet: Packet,
): Promise<CheckAnswer> {
  if (pod.phase === "Succeeded" || pod.phase === "Failed") {
    return {
      verdict: "no-pod",
      reason: `pod ${packet.namespace}/${pod.name} has terminated`,
      rules: [],
    };
  }
  if (pod.hostNetwork) {
    const reason = "the pod is on its node's network: NetworkPolicies do not apply";
    return { verdict: "allow", reason, rules: [] };
  }
  const selecting = selectingPolicies(pod, await reader.namespacePolicies(packet.namespace));
  if (selecting.length === 0) {
    return { verdict: "allow", reason: "no policy selects the pod", rules: [] };
  }
  const who =
    selecting.length === 1
      ? `NetworkPolicy ${selecting[0]} selects`
      : `NetworkPolicies ${selecting.join(", ")} select`;
  const why = isEligiblePod(pod) ? "not computed yet" : "not computed until it has an IPv4 address";
  return { verdict: "not-computed", reason: `${who} the pod; its tables are ${why}`, rules: [] };
}

/** Why a denial may not be the policies' word: peer sets missing or stored failing closed. */
function peerSetNotes(names: readonly string[], found: readonly unknown[]): string[] {
  return names.flatMap((name, i) => {
    const raw = found[i];
    if (raw === undefined) return [`peer set ${name} is not stored yet`];
    const parsed = netpolPeerSetSchema.safeParse(raw);
    const tooLarge = parsed.success
      ? parsed.data.status?.problems.some((p) => p.reason === PEER_SET_TOO_LARGE)
      : false;
    return tooLarge ? [`peer set ${name} is too large to store: its peers are denied`] : [];
  });
}

/** Reads what the packet needs (through `reader`, which may be shared by many checks). */
export async function checkPacket(
  kube: KubeClient,
  packet: Packet,
  reader: TableReader = new TableReader(kube),
): Promise<CheckAnswer> {
  const objects = await reader.podObjects(packet.namespace, packet.pod);
  if (objects.namespace === undefined) {
    const reason = `namespace ${packet.namespace} does not exist`;
    return { verdict: "no-namespace", reason, rules: [] };
  }
  if (objects.pod === undefined) {
    const reason = `pod ${packet.namespace}/${packet.pod} does not exist`;
    return { verdict: "no-pod", reason, rules: [] };
  }
  const pod = parseNetpolPod(objects.pod);
  if (!pod.ok) throw new Error(`Pod ${packet.namespace}/${packet.pod}: ${pod.message}`);
  if (objects.endpoint === undefined) return withoutTable(reader, pod.value, packet);
  const { endpoints } = storedTablesFromObjects([objects.endpoint], []);
  const spec = endpoints.get(`${packet.namespace}/${packet.pod}`);
  if (spec === undefined) {
    throw new Error(`NetworkPolicyEndpoint ${packet.namespace}/${packet.pod} does not parse`);
  }
  const names = [...new Set(spec[packet.direction].peerGroups.map((g) => g.peerSet))].sort();
  const found = await Promise.all(names.map((name) => reader.peerSet(packet.namespace, name)));
  const present = found.flatMap((p) => (p === undefined ? [] : [p]));
  const decision = decide(storedTablesFromObjects([objects.endpoint], present), packet);
  const notes = decision.allow ? [] : peerSetNotes(names, found);
  return {
    verdict: decision.allow ? "allow" : "deny",
    reason: [decision.reason, ...notes].join("; "),
    rules: decision.rules,
  };
}

export function formatDecision(packet: Packet, answer: CheckAnswer): string {
  const way = packet.direction === "ingress" ? "from" : "to";
  const what = `${packet.namespace}/${packet.pod} ${packet.direction} ${way} ${packet.peerIP} ${packet.protocol}/${packet.port}`;
  const rules = answer.rules.length === 0 ? "" : `: ${answer.rules.join(", ")}`;
  return `${answer.verdict} ${what} (${answer.reason}${rules})`;
}
