/**
 * `npm run netpol -- check <namespace>/<pod> ingress|egress <peer-ip> <TCP|UDP|SCTP> <port>`:
 * would this packet pass? Reads the Pod's NetworkPolicyEndpoint and the peer sets it references
 * from the API server, nothing else (no policy, Pod or Namespace), and asks `decide`.
 */
import { NETPOL_ENDPOINTS, NETPOL_PEER_SETS, type KubeClient } from "../../shared/kube/index.js";
import {
  decide,
  parseIpv4,
  storedTablesFromObjects,
  type Decision,
  type Packet,
} from "../../shared/netpol/index.js";

export const USAGE =
  "usage: npm run netpol -- check <namespace>/<pod> ingress|egress <peer-ip> <TCP|UDP|SCTP> <port>";

export type ParsedCheck = { ok: true; packet: Packet } | { ok: false; message: string };

export function parseCheckArgs(args: readonly string[]): ParsedCheck {
  const [command, target, direction, peerIP, protocol, portText, ...extra] = args;
  if (command !== "check" || extra.length > 0 || portText === undefined) {
    return { ok: false, message: USAGE };
  }
  const [namespace, pod, ...rest] = (target ?? "").split("/");
  if (!namespace || !pod || rest.length > 0)
    return { ok: false, message: `${target}: want <namespace>/<pod>` };
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

/** Reads the stored tables the packet needs and decides it. */
export async function checkPacket(kube: KubeClient, packet: Packet): Promise<Decision> {
  const endpoint = await kube.get(NETPOL_ENDPOINTS, {
    namespace: packet.namespace,
    name: packet.pod,
  });
  const parsed = storedTablesFromObjects(endpoint === undefined ? [] : [endpoint], []);
  const spec = parsed.endpoints.get(`${packet.namespace}/${packet.pod}`);
  if (endpoint !== undefined && spec === undefined) {
    throw new Error(`NetworkPolicyEndpoint ${packet.namespace}/${packet.pod} does not parse`);
  }
  const names = new Set(spec?.[packet.direction].peerGroups.map((g) => g.peerSet) ?? []);
  const peerSets = await Promise.all(
    [...names].map((name) => kube.get(NETPOL_PEER_SETS, { namespace: packet.namespace, name })),
  );
  const present = peerSets.flatMap((p) => (p === undefined ? [] : [p]));
  return decide(storedTablesFromObjects(endpoint === undefined ? [] : [endpoint], present), packet);
}

export function formatDecision(packet: Packet, decision: Decision): string {
  const way = packet.direction === "ingress" ? "from" : "to";
  const what = `${packet.namespace}/${packet.pod} ${packet.direction} ${way} ${packet.peerIP} ${packet.protocol}/${packet.port}`;
  const rules = decision.rules.length === 0 ? "" : `: ${decision.rules.join(", ")}`;
  return `${decision.allow ? "allow" : "deny"} ${what} (${decision.reason}${rules})`;
}
