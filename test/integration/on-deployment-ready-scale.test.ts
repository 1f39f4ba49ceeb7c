// 300 rules over all 11 kinds on a CNF whose two pods restarted while no event was delivered:
// one on-deployment-ready call converges it. Per pod the CNF is read once per collection and
// each touched service restarts once. Prints the time and request counts of that call.
import { jest } from "@jest/globals";
import pLimit from "p-limit";
import { ALL_RULE_KINDS } from "../../shared/rules/index.js";
import type { Cnf } from "../../dev/world/index.js";
import { SyncWorld } from "./sync-harness.js";

jest.setTimeout(180_000);

const PURPOSE = "big";

interface RuleSpec {
  readonly kind: string;
  readonly name: string;
  readonly spec: Record<string, unknown>;
}

const range = (n: number): number[] => Array.from({ length: n }, (_, i) => i + 1);
const net = (i: number): string => (i % 2 === 0 ? "ovn-net1" : "ovn-net2");

/** 300 rules: every kind, with references between them (policies, zones, proposals). */
function threeHundredRules(): RuleSpec[] {
  const policies = range(30).map((i) => ({
    kind: "Mwan3Policy",
    name: `policy${i}`,
    spec: { members: [{ network: net(i), metric: 1, weight: i }] },
  }));
  const mwan3Rules = range(60).map((i) => ({
    kind: "Mwan3Rule",
    name: `rule${i}`,
    spec: { policy: `policy${(i % 30) + 1}`, src_ip: `10.1.${i}.0/24`, proto: "tcp" },
  }));
  const zones = range(20).map((i) => ({
    kind: "FirewallZone",
    name: `zone${i}`,
    spec: { network: [net(i)], input: "ACCEPT", output: "ACCEPT", forward: "REJECT" },
  }));
  const zone = (i: number): string => `zone${(i % 20) + 1}`;
  const snats = range(30).map((i) => ({
    kind: "FirewallSNAT",
    name: `snat${i}`,
    spec: {
      src: zone(i),
      src_ip: `192.168.1.${i}`,
      src_dip: `1.2.3.${i}`,
      dest: zone(i + 1),
      proto: "icmp",
    },
  }));
  const dnats = range(30).map((i) => ({
    kind: "FirewallDNAT",
    name: `dnat${i}`,
    spec: {
      src: zone(i),
      src_dport: String(20000 + i),
      dest: zone(i + 3),
      dest_ip: `192.168.2.${i}`,
      dest_port: "22",
      proto: "tcp",
    },
  }));
  const forwardings = range(30).map((i) => ({
    kind: "FirewallForwarding",
    name: `fwd${i}`,
    spec: { src: zone(i), dest: zone(i + 7) },
  }));
  const fwRules = range(40).map((i) => ({
    kind: "FirewallRule",
    name: `fwrule${i}`,
    spec: {
      src: zone(i),
      src_ip: `192.168.3.${i}`,
      src_port: String(1000 + i),
      proto: "tcp",
      target: "REJECT",
    },
  }));
  const proposals = range(10).map((i) => ({
    kind: "IpsecProposal",
    name: `proposal${i}`,
    spec: { encryption_algorithm: "aes128", hash_algorithm: "sha256", dh_group: "modp3072" },
  }));
  const proposal = (i: number): string[] => [`proposal${(i % 10) + 1}`];
  const sites = range(20).map((i) => ({
    kind: "IpsecSite",
    name: `site${i}`,
    spec: {
      remote: "%any",
      authentication_method: "psk",
      pre_shared_key: `key-${i}`,
      crypto_proposal: proposal(i),
      connections: [
        {
          name: `site${i}conn`,
          conn_type: "tunnel",
          mode: "start",
          local_subnet: `172.12.${i}.0/24`,
          remote_sourceip: `172.13.${i}.30-172.13.${i}.45`,
          crypto_proposal: proposal(i),
        },
      ],
    },
  }));
  const hosts = range(20).map((i) => ({
    kind: "IpsecHost",
    name: `host${i}`,
    spec: {
      remote: `10.10.10.${i}`,
      authentication_method: "psk",
      pre_shared_key: `key-${i}`,
      crypto_proposal: proposal(i + 5),
      connections: [
        {
          name: `host${i}conn`,
          conn_type: "tunnel",
          mode: "start",
          local_sourceip: "%config",
          remote_subnet: `172.14.${i}.0/24`,
          crypto_proposal: proposal(i + 5),
        },
      ],
    },
  }));
  const services = range(10).map((i) => ({
    kind: "CNFService",
    name: `svc${i}`,
    spec: { fullname: `svc${i}.default.svc.cluster.local`, port: String(3000 + i), dport: "8080" },
  }));
  return [
    ...policies,
    ...mwan3Rules,
    ...zones,
    ...snats,
    ...dnats,
    ...forwardings,
    ...fwRules,
    ...proposals,
    ...sites,
    ...hosts,
    ...services,
  ];
}

const COLLECTIONS = [
  "mwan3/policies",
  "mwan3/rules",
  "firewall/zones",
  "firewall/redirects",
  "firewall/forwardings",
  "firewall/rules",
  "ipsec/proposals",
  "ipsec/remotes",
  "service/services",
];

describe("300 rules over all kinds on a restarted CNF", () => {
  let world: SyncWorld;
  let cnf: Cnf;
  const rules = threeHundredRules();

  beforeAll(async () => {
    world = await SyncWorld.create();
    cnf = await world.createCnf(PURPOSE, { pods: 2 });
    const limit = pLimit(8);
    await Promise.all(
      rules.map((r) => limit(() => world.createRule(r.kind, r.name, PURPOSE, r.spec))),
    );
  });
  afterAll(() => world.close());

  it("one call applies them all, then both pods restart unseen and one call converges the CNF again", async () => {
    expect(rules).toHaveLength(300);
    expect(new Set(rules.map((r) => r.kind)).size).toBe(11);
    world.resetObservations();
    const first = performance.now();
    expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: "300 created" });
    console.log(
      `300-rule first apply (finalizers + statuses): ${Math.round(performance.now() - first)} ms; API requests ${world.calls.api}, CNF requests ${world.calls.cnf}`,
    );

    // Both CNF pods restart (state dropped, readiness flips) while no event is delivered.
    for (const pod of cnf.pods) await world.restartPod(pod);
    world.resetObservations();
    const started = performance.now();
    const outcome = await world.syncCnf(cnf);
    const ms = Math.round(performance.now() - started);

    expect(outcome).toEqual({ kind: "done", result: "300 updated" });
    const total = (collections: Record<string, string[]>) =>
      Object.values(collections).reduce((n, names) => n + names.length, 0);
    expect(world.holdings(cnf).map(total)).toEqual([300, 300]);
    const perPod = cnf.pods.map((pod) => {
      const counters = pod.sim.counters();
      const reads = Object.values(counters.collections).reduce((n, c) => n + c.reads, 0);
      return { reads, writes: world.cnfWrites(cnf)[cnf.pods.indexOf(pod)], counters };
    });
    for (const { reads, writes, counters } of perPod) {
      expect(reads).toBeLessThanOrEqual(COLLECTIONS.length);
      for (const collection of COLLECTIONS) {
        expect(counters.collections[collection]?.reads).toBe(1);
      }
      expect(writes).toBe(300);
    }
    expect(world.serviceRestarts(cnf).map((services) => services.sort())).toEqual([
      ["firewall", "ipsec", "mwan3"],
      ["firewall", "ipsec", "mwan3"],
    ]);
    for (const rule of [rules[0], rules[150], rules[299]]) {
      expect(await world.ruleView(rule?.kind ?? "", rule?.name ?? "")).toMatchObject({
        inSync: true,
        appliedCurrent: true,
        condition: { type: "Ready", reason: "DriftRepaired" },
      });
    }

    const line =
      `300-rule convergence of a restarted 2-pod CNF: ${ms} ms in one call; ` +
      `API requests ${world.calls.api}, CNF requests ${world.calls.cnf} ` +
      `(per pod: ${perPod.map((p) => `${p.reads} reads + ${p.writes} writes + ${p.counters.logins} login + 3 restarts`).join("; ")})`;
    console.log(line);

    // The same restart again: the statuses already say DriftRepaired, so this call is the CNF
    // side alone (plus the 14 reads, and one LIST per kind to check that no rule was deleted
    // while it was written): what the batch costs without status writes.
    for (const pod of cnf.pods) pod.sim.restartCnf();
    world.resetObservations();
    const cnfOnly = performance.now();
    expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: "300 updated" });
    console.log(
      `300-rule re-apply on both restarted pods, no status change: ${Math.round(performance.now() - cnfOnly)} ms; API requests ${world.calls.api}, CNF requests ${world.calls.cnf}`,
    );
    expect(world.calls.api).toBe(14 + ALL_RULE_KINDS.length);
    expect(world.cnfWrites(cnf)).toEqual([300, 300]);

    // Nothing changed since: a repeat call only reads each collection once per pod.
    world.resetObservations();
    const again = performance.now();
    expect(await world.syncCnf(cnf)).toEqual({ kind: "done", result: "300 unchanged" });
    console.log(
      `300-rule no-op sync: ${Math.round(performance.now() - again)} ms; API requests ${world.calls.api}, CNF requests ${world.calls.cnf}`,
    );
    expect(world.cnfWrites(cnf)).toEqual([0, 0]);
    expect(world.calls.cnf).toBeLessThanOrEqual(2 * (COLLECTIONS.length + 1));
  });
});
