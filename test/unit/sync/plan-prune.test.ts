import type { PodSyncResult } from "../../../shared/sync/plan-status.js";
import {
  PRUNE_KEY_PREFIX,
  RULE_COLLECTIONS,
  applyLedgerChange,
  formatLedger,
  parseLedger,
  planLedgerChange,
  planPruneTargets,
  pruneEnabled,
  type CnfObjectId,
  type ScopeRule,
} from "../../../shared/sync/plan-prune.js";
import type { PodRuleResult } from "../../../shared/sync/plan-status.js";
import type { PlannedWrite } from "../../../shared/sync/plan-writes.js";

const id = (collection: string, name: string): CnfObjectId => ({ collection, name });
const rule = (kind: string, name: string, deleting = false): ScopeRule => ({
  kind,
  name,
  deleting,
});
const HELD: PodRuleResult = { kind: "held", changed: false };
const FAILED: PodRuleResult = {
  kind: "failed",
  failure: { class: "transient", pod: "p", message: "timeout" },
};

function pod(
  name: string,
  results: Record<string, PodRuleResult>,
  written: string[] = [],
): PodSyncResult {
  const writes = written.map((ruleKey): PlannedWrite => ({
    op: "delete",
    ruleKey,
    collection: "firewall/zones",
    objectName: ruleKey,
    body: null,
    service: "firewall",
  }));
  return { pod: name, results: new Map(Object.entries(results)), writes, restarted: [] };
}

describe("the prune opt-in annotation", () => {
  it.each([
    [undefined, false],
    [{}, false],
    [{ "sdewan.akraino.org/prune": "true" }, true],
    [{ "sdewan.akraino.org/prune": " TRUE " }, true],
    [{ "sdewan.akraino.org/prune": "yes" }, false],
    [{ "sdewan.akraino.org/prune": "false" }, false],
  ])("%j -> %s", (annotations, enabled) => {
    expect(pruneEnabled(annotations)).toBe(enabled);
  });
});

describe("the ledger text", () => {
  it("lists the nine rule collections", () => {
    expect([...RULE_COLLECTIONS].sort()).toEqual([
      "firewall/forwardings",
      "firewall/redirects",
      "firewall/rules",
      "firewall/zones",
      "ipsec/proposals",
      "ipsec/remotes",
      "mwan3/policies",
      "mwan3/rules",
      "service/services",
    ]);
  });

  it("reads one object a line, ignoring blanks and collections no rule kind uses", () => {
    expect(
      parseLedger("firewall/zones/lan1\n\n  mwan3/rules/r1 \nnetwork/interfaces/net0\nx"),
    ).toEqual([id("firewall/zones", "lan1"), id("mwan3/rules", "r1")]);
    expect(parseLedger(undefined)).toEqual([]);
  });

  it("writes sorted, without duplicates, so an unchanged ledger is the same text", () => {
    const text = formatLedger([
      id("mwan3/rules", "r1"),
      id("firewall/zones", "lan1"),
      id("mwan3/rules", "r1"),
    ]);
    expect(text).toBe("firewall/zones/lan1\nmwan3/rules/r1");
    expect(formatLedger(parseLedger(text))).toBe(text);
  });
});

describe("planPruneTargets", () => {
  const ledger = [
    id("firewall/zones", "lan1"),
    id("firewall/zones", "wan1"),
    id("firewall/redirects", "dnat1"),
    id("mwan3/rules", "r1"),
  ];

  it("prunes ledger objects no rule declares, as must-be-absent targets with their kind's rank and service", () => {
    const targets = planPruneTargets(ledger, [
      rule("FirewallZone", "lan1"),
      rule("Mwan3Rule", "r1", true),
    ]);
    expect(
      targets.map((t) => ({
        key: t.key,
        collection: t.collection,
        objectName: t.objectName,
        desired: t.desired,
        rank: t.rank,
        service: t.service,
      })),
    ).toEqual([
      {
        key: `${PRUNE_KEY_PREFIX}firewall/zones/wan1`,
        collection: "firewall/zones",
        objectName: "wan1",
        desired: null,
        rank: 0,
        service: "firewall",
      },
      {
        key: `${PRUNE_KEY_PREFIX}firewall/redirects/dnat1`,
        collection: "firewall/redirects",
        objectName: "dnat1",
        desired: null,
        rank: 1,
        service: "firewall",
      },
    ]);
  });

  it("a rule of another kind in the same collection still declares the object (SNAT and DNAT share redirects)", () => {
    expect(planPruneTargets([id("firewall/redirects", "x")], [rule("FirewallSNAT", "x")])).toEqual(
      [],
    );
  });

  it("an empty ledger prunes nothing, whatever the CNF holds", () => {
    expect(planPruneTargets([], [])).toEqual([]);
  });
});

describe("planLedgerChange", () => {
  const rules = [rule("FirewallZone", "lan1"), rule("Mwan3Rule", "gone", true)];
  const targets = planPruneTargets([id("firewall/zones", "wan1")], rules);
  const wan1 = `${PRUNE_KEY_PREFIX}firewall/zones/wan1`;

  it("records objects held for live rules, and forgets pruned ones absent on every pod", () => {
    const change = planLedgerChange({
      rules,
      pruneTargets: targets,
      pods: [
        pod("a", { "FirewallZone/lan1": HELD, "Mwan3Rule/gone": HELD, [wan1]: HELD }, [wan1]),
        pod("b", { "FirewallZone/lan1": HELD, "Mwan3Rule/gone": HELD, [wan1]: HELD }),
      ],
      allPods: true,
    });
    expect(change).toEqual({
      add: [id("firewall/zones", "lan1")],
      remove: [id("firewall/zones", "wan1")],
      pruned: 1,
    });
  });

  it("keeps a pruned object while a pod failed or the CNF is not fully ready", () => {
    const failedOnOne = planLedgerChange({
      rules,
      pruneTargets: targets,
      pods: [pod("a", { [wan1]: HELD }), pod("b", { [wan1]: FAILED })],
      allPods: true,
    });
    expect(failedOnOne.remove).toEqual([]);
    const partly = planLedgerChange({
      rules,
      pruneTargets: targets,
      pods: [pod("a", { [wan1]: HELD })],
      allPods: false,
    });
    expect(partly.remove).toEqual([]);
  });

  it("records nothing for a rule that failed everywhere", () => {
    const change = planLedgerChange({
      rules: [rule("FirewallZone", "lan1")],
      pruneTargets: [],
      pods: [pod("a", { "FirewallZone/lan1": FAILED })],
      allPods: true,
    });
    expect(change.add).toEqual([]);
  });

  it("applyLedgerChange adds and removes", () => {
    const next = applyLedgerChange([id("firewall/zones", "wan1"), id("mwan3/rules", "r1")], {
      add: [id("firewall/zones", "lan1"), id("mwan3/rules", "r1")],
      remove: [id("firewall/zones", "wan1")],
      pruned: 2,
    });
    expect(formatLedger(next)).toBe("firewall/zones/lan1\nmwan3/rules/r1");
  });
});
