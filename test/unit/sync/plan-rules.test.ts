import type { CnfObservation, ObservedRuleCr } from "../../../shared/sync/observed.js";
import { planRule, undeclaredBlocks, withLaterResults } from "../../../shared/sync/plan-rules.js";
import type { PodRuleResult, PodSyncResult } from "../../../shared/sync/plan-status.js";

const NO_CNF: CnfObservation = {
  situation: { kind: "none", purpose: "cnf1", namespace: "ns" },
  deployment: undefined,
  pods: { ready: [], expected: 0 },
  networks: new Map(),
};

/** A zone CR as read; being deleted when `deleting`. */
function zone(name: string, deleting: boolean): ObservedRuleCr {
  return {
    ok: false,
    code: "InvalidSpec",
    message: "not needed here",
    raw: {
      apiVersion: "batch.sdewan.akraino.org/v1alpha1",
      kind: "FirewallZone",
      metadata: {
        name,
        namespace: "ns",
        ...(deleting ? { deletionTimestamp: "2026-11-25T12:00:00Z" } : {}),
      },
    },
  };
}

const REFUSED: PodRuleResult = {
  kind: "failed",
  failure: { class: "dependency", pod: "p1", message: "zone lan1 is used" },
};
const HELD: PodRuleResult = { kind: "held", changed: true };
const pod = (name: string, results: Record<string, PodRuleResult>): PodSyncResult => ({
  pod: name,
  results: new Map(Object.entries(results)),
  writes: [],
  restarted: [],
});

describe("deletions refused as in use, with no rule declaring a user", () => {
  const lan1 = planRule(zone("lan1", true), NO_CNF);
  const lan2 = planRule(zone("lan2", false), NO_CNF);

  it.each([
    ["no declared user: tried again", [], ["FirewallZone/lan1"]],
    ["a declared user (its deletion in flight): not tried again", ["FirewallRule r1"], []],
  ])("%s", (_title, users, expected) => {
    const pods = [pod("p1", { "FirewallZone/lan1": REFUSED })];
    const usedBy = new Map([["FirewallZone/lan1", users]]);
    expect(undeclaredBlocks([lan1], pods, usedBy).map((t) => t.key)).toEqual(expected);
  });

  it("users not looked up (the lookup failed): not tried again", () => {
    const pods = [pod("p1", { "FirewallZone/lan1": REFUSED })];
    expect(undeclaredBlocks([lan1], pods, new Map())).toEqual([]);
  });

  it("a rule that is not being deleted is never tried again here", () => {
    const pods = [pod("p1", { "FirewallZone/lan2": REFUSED })];
    expect(undeclaredBlocks([lan2], pods, new Map([["FirewallZone/lan2", []]]))).toEqual([]);
  });

  it("the second try's results replace the first's, per pod, and other objects keep theirs", () => {
    const first = [
      pod("p1", { "FirewallZone/lan1": REFUSED, "FirewallZone/lan2": HELD }),
      pod("p2", { "FirewallZone/lan1": REFUSED }),
    ];
    const again = [pod("p1", { "FirewallZone/lan1": HELD })];
    const merged = withLaterResults(first, again);
    expect(merged.map((p) => Object.fromEntries(p.results))).toEqual([
      { "FirewallZone/lan1": HELD, "FirewallZone/lan2": HELD },
      { "FirewallZone/lan1": REFUSED },
    ]);
  });
});
