// Property: for random namespaces, Pods, NetworkPolicies and packets, deciding from the compiled
// tables gives the verdict of the independent reference evaluator (dev/netpol-oracle). Seeded,
// so a failure reproduces; fast-check shrinks a counterexample and prints it.
import fc from "fast-check";
import { referenceAllows, type RefPacket } from "../../../dev/netpol-oracle/reference.js";
import { compileObjects, decide, tableKey } from "../../../shared/netpol/index.js";
import { PACKETS_PER_CASE, peerCandidates, scenario } from "./arbitraries.js";

const SEED = 20261125;
const CASES = 10_000;

describe("compiled tables decide like the reference evaluator", () => {
  it(`agrees on ${CASES} generated worlds x ${PACKETS_PER_CASE} packets (seed ${SEED})`, () => {
    const verdicts = { allow: 0, deny: 0 };
    fc.assert(
      fc.property(scenario, ({ world: w, packets }) => {
        const compiled = compileObjects(w);
        const tables = {
          endpoints: new Map(
            compiled.endpoints.map((e) => [tableKey(e.namespace, e.name), e.spec]),
          ),
          peerSets: new Map(compiled.peerSets.map((p) => [tableKey(p.namespace, p.name), p.spec])),
        };
        const peers = peerCandidates(w);
        for (const draw of packets) {
          const endpoint = w.pods[draw.pod % w.pods.length];
          if (endpoint === undefined) continue;
          const packet: RefPacket = {
            namespace: endpoint.metadata.namespace,
            pod: endpoint.metadata.name,
            direction: draw.direction,
            peerIP: peers[draw.peer % peers.length] ?? "8.8.8.8",
            protocol: draw.protocol,
            port: draw.port,
          };
          const expected = referenceAllows(w, packet);
          const actual = decide(tables, packet).allow;
          if (actual !== expected) {
            throw new Error(
              `${JSON.stringify(packet)}: tables say ${actual}, reference ${expected}`,
            );
          }
          verdicts[expected ? "allow" : "deny"] += 1;
        }
      }),
      { seed: SEED, numRuns: CASES, endOnFailure: false },
    );
    // Both verdicts must be common, or the generator tests nothing interesting.
    const total = verdicts.allow + verdicts.deny;
    expect(verdicts.deny / total).toBeGreaterThan(0.1);
    expect(verdicts.allow / total).toBeGreaterThan(0.1);
    console.log(`netpol equivalence: ${CASES} worlds, ${total} packets, ${verdicts.deny} denied`);
  });
});
