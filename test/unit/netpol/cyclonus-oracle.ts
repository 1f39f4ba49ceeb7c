// The cyclonus oracle binary (dev/netpol-oracle/cyclonus) and what its traffic format needs,
// shared by the generated-world comparison and the run of cyclonus's own generated cases.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import type {
  RefPacket,
  RefPod,
  RefPolicy,
  RefWorld,
} from "../../../dev/netpol-oracle/reference.js";
import { formatIpv4, parseIpv4 } from "../../../shared/netpol/index.js";
import { inCi } from "../../support/in-ci.js";

const repoRoot = path.resolve(import.meta.dirname, "../../..");
export const binary =
  process.env["NETPOL_CYCLONUS"] ??
  execFileSync(
    "bash",
    [path.join(repoRoot, "dev/netpol-oracle/build-cyclonus.sh"), "--print-path"],
    {
      encoding: "utf8",
    },
  )
    .trim()
    .split("\n")
    .pop() ??
  "";
export const available = binary !== "" && existsSync(binary);
export { inCi };
if (!available && !inCi) {
  console.warn("cyclonus comparison SKIPPED: run `npm run netpol:cyclonus:build`");
}

/** As the API server stores it: policyTypes defaulted (cyclonus's builder needs them). */
export function defaulted(policy: RefPolicy): RefPolicy {
  const given = policy.spec.policyTypes ?? [];
  const policyTypes =
    given.length > 0
      ? given
      : (policy.spec.egress ?? []).length > 0
        ? ["Ingress", "Egress"]
        : ["Ingress"];
  return { ...policy, spec: { ...policy.spec, policyTypes } };
}

export function trafficPeer(world: RefWorld, ip: string, pod: RefPod | null) {
  if (pod === null) return { ip, internal: null };
  const ns = world.namespaces.find((n) => n.metadata.name === pod.metadata.namespace);
  return {
    ip,
    internal: {
      namespace: pod.metadata.namespace,
      podLabels: pod.metadata.labels ?? {},
      namespaceLabels: ns?.metadata.labels ?? {},
    },
  };
}

/** The name the destination Pod gives the packet's port and protocol, as cyclonus wants it. */
export function portName(destination: RefPod | null, packet: RefPacket): string {
  for (const c of destination?.spec?.containers ?? []) {
    for (const p of c.ports ?? []) {
      if (p.containerPort === packet.port && (p.protocol ?? "TCP") === packet.protocol && p.name)
        return p.name;
    }
  }
  return "";
}

export interface GeneratedStep {
  policies: RefPolicy[] | null;
  namespaces: Record<string, Record<string, string> | null>;
  pods: { namespace: string; name: string; labels: Record<string, string> | null }[];
  probe: { allAvailable: boolean; port?: number | string; protocol?: string };
}

export interface GeneratedCase {
  description: string;
  steps: GeneratedStep[];
}

const PROTOCOLS = ["TCP", "UDP", "SCTP"] as const;
const PORTS = [80, 81];

/** Where cyclonus's model Pods are: Pod i at firstIP + i, all on the node at hostIP. */
export interface ModelAddresses {
  /** The address of Pod x/a, which the generator builds its ipBlock cases around. */
  readonly firstIP: string;
  readonly hostIP: string;
}
const UNIT_ADDRESSES: ModelAddresses = { firstIP: "10.0.0.1", hostIP: "192.168.0.1" };

/** cyclonus's generated cases, its ipBlocks built around `firstIP`. */
export function generatedCases(firstIP = UNIT_ADDRESSES.firstIP): GeneratedCase[] {
  return JSON.parse(
    execFileSync(binary, ["generate", firstIP], { encoding: "utf8", maxBuffer: 64 * 2 ** 20 }),
  ) as GeneratedCase[];
}

/** cyclonus's verdict on each packet of each run, in order. */
export function cyclonusVerdicts(runs: readonly Judged[]): boolean[][] {
  const output = execFileSync(binary, [], {
    input: JSON.stringify(runs.map((r) => ({ policies: r.world.policies, traffic: r.traffic }))),
    encoding: "utf8",
    maxBuffer: 256 * 2 ** 20,
  });
  return JSON.parse(output) as boolean[][];
}

export function worldOf(step: GeneratedStep, at: ModelAddresses = UNIT_ADDRESSES): RefWorld {
  const first = parseIpv4(at.firstIP) ?? 0;
  const pods: RefPod[] = step.pods.map((p, i) => ({
    metadata: { name: p.name, namespace: p.namespace, labels: p.labels ?? {} },
    spec: {
      containers: PORTS.flatMap((port) =>
        PROTOCOLS.map((protocol) => ({
          ports: [
            { name: `serve-${port}-${protocol.toLowerCase()}`, containerPort: port, protocol },
          ],
        })),
      ),
    },
    status: {
      phase: "Running",
      hostIP: at.hostIP,
      podIP: formatIpv4(first + i),
      podIPs: [{ ip: formatIpv4(first + i) }],
    },
  }));
  return {
    namespaces: Object.entries(step.namespaces).map(([name, labels]) => ({
      metadata: { name, labels: labels ?? {} },
    })),
    pods,
    policies: (step.policies ?? []).map(defaulted),
  };
}

export function probes(
  step: GeneratedStep,
): { port: number | string; protocol: RefPacket["protocol"] }[] {
  if (step.probe.allAvailable || step.probe.port === undefined) {
    return PORTS.flatMap((port) => PROTOCOLS.map((protocol) => ({ port, protocol })));
  }
  return [
    { port: step.probe.port, protocol: (step.probe.protocol ?? "TCP") as RefPacket["protocol"] },
  ];
}

/** A named probe port resolves on the destination Pod, as the probe's connection would. */
export function numericPort(port: number | string, destination: RefPod): number {
  if (typeof port === "number") return port;
  for (const c of destination.spec?.containers ?? [])
    for (const p of c.ports ?? []) if (p.name === port) return p.containerPort;
  return 0;
}

export interface Judged {
  readonly world: RefWorld;
  readonly packets: RefPacket[];
  readonly traffic: Record<string, unknown>[];
}

export function judged(step: GeneratedStep, at: ModelAddresses = UNIT_ADDRESSES): Judged {
  const world = worldOf(step, at);
  const packets: RefPacket[] = [];
  const traffic: Record<string, unknown>[] = [];
  for (const source of world.pods)
    for (const destination of world.pods)
      for (const probe of probes(step)) {
        const port = numericPort(probe.port, destination);
        const from = trafficPeer(world, source.status?.podIP ?? "", source);
        const to = trafficPeer(world, destination.status?.podIP ?? "", destination);
        for (const ingress of [true, false]) {
          const endpoint = ingress ? destination : source;
          const packet: RefPacket = {
            namespace: endpoint.metadata.namespace,
            pod: endpoint.metadata.name,
            direction: ingress ? "ingress" : "egress",
            peerIP: (ingress ? source : destination).status?.podIP ?? "",
            protocol: probe.protocol,
            port,
          };
          packets.push(packet);
          traffic.push({
            source: from,
            destination: to,
            port,
            portName: portName(destination, packet),
            protocol: probe.protocol,
            ingress,
          });
        }
      }
  return { world, packets, traffic };
}
