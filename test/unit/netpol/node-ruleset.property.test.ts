// Property: the node agent's ruleset, as the rules it renders would judge a new connection's
// first packet (rulesetAllows, the model of plan-nft-ruleset.ts), gives decide()'s verdict on
// every generated world, every Pod of it on one node. So turning bitmaps into one rule per bit
// (the union of the entries carrying it) loses nothing of the longest-prefix lookups. Real
// packets through the rendered rules: test/integration/netpol-datapath.test.ts. Seeded.
import fc from "fast-check";
import {
  decide,
  isEligiblePod,
  parseNetpolPod,
  rulesetAllows,
} from "../../../shared/netpol/index.js";
import { PACKETS_PER_CASE, peerCandidates, scenario } from "./arbitraries.js";
import { nodeRulesetOf } from "./fixtures.js";

const SEED = 20261131;
const CASES = 4_000;

describe("the node agent's ruleset judges like decide() over the same tables", () => {
  it(`agrees on ${CASES} generated worlds x ${PACKETS_PER_CASE} packets (seed ${SEED}), SCTP included`, () => {
    const verdicts = { allow: 0, deny: 0, chains: 0, pods: 0 };
    fc.assert(
      fc.property(scenario, ({ world, packets }) => {
        const { plan, tables } = nodeRulesetOf(world);
        verdicts.chains += plan.chains.size;
        const peers = peerCandidates(world);
        for (const draw of packets) {
          const raw = world.pods[draw.pod % world.pods.length];
          const parsed = raw === undefined ? null : parseNetpolPod(raw);
          // The agent sees only Pods with their own address that run: the others have no rules.
          if (parsed === null || !parsed.ok || !isEligiblePod(parsed.value)) continue;
          const pod = parsed.value;
          const packet = {
            namespace: pod.namespace,
            pod: pod.name,
            direction: draw.direction,
            peerIP: peers[draw.peer % peers.length] ?? "8.8.8.8",
            protocol: draw.protocol,
            port: draw.port,
          } as const;
          const expected = decide(tables, packet).allow;
          for (const podIP of pod.ips) {
            const actual = rulesetAllows(plan, { ...packet, podIP });
            if (actual !== expected) {
              throw new Error(
                `${JSON.stringify(packet)}: ruleset says ${actual}, tables ${expected}`,
              );
            }
          }
          verdicts.pods += 1;
          verdicts[expected ? "allow" : "deny"] += 1;
        }
      }),
      { seed: SEED, numRuns: CASES, endOnFailure: false },
    );
    const total = verdicts.allow + verdicts.deny;
    expect(verdicts.deny / total).toBeGreaterThan(0.1);
    expect(verdicts.allow / total).toBeGreaterThan(0.1);
    console.log(
      `node ruleset vs decide: ${CASES} worlds, ${total} packets (${verdicts.deny} denied), ${verdicts.chains} chains`,
    );
  });
});
