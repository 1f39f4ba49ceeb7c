// cyclonus's own generated conformance cases (its pkg/generator, every tag: targets, rules,
// peers, ports and protocols, the documented examples, actions, conflicts, namespaces and the
// upstream e2e cases) run through our compiler: `netpol-cyclonus generate` prints each case's
// world after each step (policies, namespace and Pod labels, the probe), and every Pod pair of
// cyclonus's model (namespaces x, y, z; Pods a, b, c; ports 80, 81 on TCP, UDP, SCTP, named
// serve-<port>-<protocol>) is judged in both directions by compile-then-decide and by cyclonus's
// matcher. All cases run (they take about a second): nothing is sampled. The known cyclonus
// v0.5.6 NotIn-on-missing-key reading is counted, as in cyclonus.property.test.ts.
import { execFileSync } from "node:child_process";
import {
  referenceAllows,
  type RefPacket,
  type RefPod,
  type RefPolicy,
  type RefWorld,
} from "../../../dev/netpol-oracle/reference.js";
import { compileObjects, decide, tableKey } from "../../../shared/netpol/index.js";
import { available, binary, defaulted, inCi, portName, trafficPeer } from "./cyclonus-oracle.js";

interface GeneratedStep {
  policies: RefPolicy[] | null;
  namespaces: Record<string, Record<string, string> | null>;
  pods: { namespace: string; name: string; labels: Record<string, string> | null }[];
  probe: { allAvailable: boolean; port?: number | string; protocol?: string };
}

interface GeneratedCase {
  description: string;
  steps: GeneratedStep[];
}

const PROTOCOLS = ["TCP", "UDP", "SCTP"] as const;
const PORTS = [80, 81];
/** The address of Pod x/a, which the generator builds its ipBlock cases around. */
const FIRST_IP = "10.0.0.1";

function worldOf(step: GeneratedStep): RefWorld {
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
      hostIP: "192.168.0.1",
      podIP: `10.0.0.${i + 1}`,
      podIPs: [{ ip: `10.0.0.${i + 1}` }],
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

function probes(step: GeneratedStep): { port: number | string; protocol: RefPacket["protocol"] }[] {
  if (step.probe.allAvailable || step.probe.port === undefined) {
    return PORTS.flatMap((port) => PROTOCOLS.map((protocol) => ({ port, protocol })));
  }
  return [
    { port: step.probe.port, protocol: (step.probe.protocol ?? "TCP") as RefPacket["protocol"] },
  ];
}

/** A named probe port resolves on the destination Pod, as the probe's connection would. */
function numericPort(port: number | string, destination: RefPod): number {
  if (typeof port === "number") return port;
  for (const c of destination.spec?.containers ?? [])
    for (const p of c.ports ?? []) if (p.name === port) return p.containerPort;
  return 0;
}

interface Judged {
  readonly world: RefWorld;
  readonly packets: RefPacket[];
  readonly traffic: Record<string, unknown>[];
}

function judged(step: GeneratedStep): Judged {
  const world = worldOf(step);
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

describe("cyclonus's own generated conformance cases, through our compiler", () => {
  (available || inCi ? it : it.skip)(
    "every case and step: compile-then-decide gives cyclonus's verdict",
    () => {
      const cases = JSON.parse(
        execFileSync(binary, ["generate", FIRST_IP], { encoding: "utf8", maxBuffer: 64 * 2 ** 20 }),
      ) as GeneratedCase[];
      const steps = cases.flatMap((c) =>
        c.steps.map((step) => ({ description: c.description, step })),
      );
      const runs = steps.map(({ step }) => judged(step));
      const output = execFileSync(binary, [], {
        input: JSON.stringify(
          runs.map((r) => ({ policies: r.world.policies, traffic: r.traffic })),
        ),
        encoding: "utf8",
        maxBuffer: 256 * 2 ** 20,
      });
      const verdicts = JSON.parse(output) as boolean[][];
      let compared = 0;
      let denied = 0;
      let notInCases = 0;
      const failures: string[] = [];
      runs.forEach((run, i) => {
        const compiled = compileObjects(run.world);
        const tables = {
          endpoints: new Map(
            compiled.endpoints.map((e) => [tableKey(e.namespace, e.name), e.spec]),
          ),
          peerSets: new Map(compiled.peerSets.map((p) => [tableKey(p.namespace, p.name), p.spec])),
        };
        run.packets.forEach((packet, j) => {
          compared += 1;
          const ours = decide(tables, packet).allow;
          const cyclonus = verdicts[i]?.[j];
          if (!ours) denied += 1;
          if (ours === cyclonus) return;
          const kubernetesReading = referenceAllows(run.world, packet);
          const cyclonusReading = referenceAllows(run.world, packet, {
            notInMatchesMissingKey: false,
          });
          if (ours === kubernetesReading && cyclonus === cyclonusReading) {
            notInCases += 1;
            return;
          }
          failures.push(
            `"${steps[i]?.description}": ${JSON.stringify(packet)}: ours ${ours}, cyclonus ${String(cyclonus)}`,
          );
        });
      });
      console.log(
        `cyclonus generated cases: ${cases.length} cases, ${steps.length} steps, ${compared} packets (${denied} denied); ${notInCases} differ only by cyclonus's NotIn-on-missing-key reading`,
      );
      expect(failures.slice(0, 5)).toEqual([]);
      expect(cases.length).toBeGreaterThan(100);
      expect(denied).toBeGreaterThan(compared / 20);
    },
    120_000,
  );
});
