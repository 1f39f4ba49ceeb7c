// cyclonus's own generated conformance cases (its pkg/generator, every tag: targets, rules,
// peers, ports and protocols, the documented examples, actions, conflicts, namespaces and the
// upstream e2e cases) run through our compiler: `netpol-cyclonus generate` prints each case's
// world after each step (policies, namespace and Pod labels, the probe), and every Pod pair of
// cyclonus's model (namespaces x, y, z; Pods a, b, c; ports 80, 81 on TCP, UDP, SCTP, named
// serve-<port>-<protocol>) is judged in both directions by compile-then-decide and by cyclonus's
// matcher. All cases run (they take about a second): nothing is sampled. The known cyclonus
// v0.5.6 NotIn-on-missing-key reading is counted, as in cyclonus.property.test.ts.
import { referenceAllows } from "../../../dev/netpol-oracle/reference.js";
import { compileObjects, decide, tableKey } from "../../../shared/netpol/index.js";
import { available, cyclonusVerdicts, generatedCases, inCi, judged } from "./cyclonus-oracle.js";

describe("cyclonus's own generated conformance cases, through our compiler", () => {
  (available || inCi ? it : it.skip)(
    "every case and step: compile-then-decide gives cyclonus's verdict",
    () => {
      const cases = generatedCases();
      const steps = cases.flatMap((c) =>
        c.steps.map((step) => ({ description: c.description, step })),
      );
      const runs = steps.map(({ step }) => judged(step));
      const verdicts = cyclonusVerdicts(runs);
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
