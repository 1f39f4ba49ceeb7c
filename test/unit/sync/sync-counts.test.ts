// The rules-not-in-sync gauge's value, from a CNF-wide sync's report.
import { done, permanent, retryLater, type Outcome } from "../../../shared/core/outcome.js";
import type { CnfBatchReport, ScopeReport } from "../../../shared/sync/index.js";
import { coversCluster, notInSyncCounts } from "../../../shared/sync/sync-counts.js";
import { REPEATED_DRIFT, WAITING_FOR_CNF } from "../../../shared/sync/plan-status.js";

function scope(
  purpose: string,
  outcomes: readonly Outcome[],
  situation: ScopeReport["situation"] = "found",
): ScopeReport {
  const rules = outcomes.map((outcome, i) => ({
    rule: { kind: "Mwan3Rule", namespace: "ns1", name: `r${i}` },
    outcome,
  }));
  return {
    scope: { namespace: "ns1", purpose },
    situation,
    sync: rules.length === 0 ? undefined : { rules, pods: [], outcome: done("x") },
    pruned: 0,
    outcomes,
  };
}

const report = (...scopes: ScopeReport[]): CnfBatchReport => ({ scopes, outcome: done("x") });

describe("notInSyncCounts", () => {
  it("counts retries, stalled rules, rules waiting for their CNF and rules drifting again and again; applied ones are in sync", () => {
    const counts = notInSyncCounts(
      report(
        scope("a", [
          done("created"),
          done("unchanged"),
          retryLater("CNF rejected it: HTTP 400"),
          permanent("InvalidSpec", "never"),
          done(REPEATED_DRIFT),
        ]),
        scope("b", [done(WAITING_FOR_CNF), done(WAITING_FOR_CNF)], "none"),
        scope("c", []),
      ),
    );
    expect(counts).toEqual([
      { namespace: "ns1", cnf: "a", notInSync: 3, repeatedDrift: 1 },
      { namespace: "ns1", cnf: "b", notInSync: 2, repeatedDrift: 0 },
      { namespace: "ns1", cnf: "c", notInSync: 0, repeatedDrift: 0 },
    ]);
  });

  it("leaves out a scope whose reads failed: its outcome is about the API, not its rules", () => {
    const failed = scope("a", [retryLater("API unavailable")], "failed");
    expect(notInSyncCounts(report(failed, scope("b", [done("created")])))).toEqual([
      { namespace: "ns1", cnf: "b", notInSync: 0, repeatedDrift: 0 },
    ]);
    expect(coversCluster("all", report(failed))).toBe(false);
  });

  it("covers the cluster only for a cluster-wide sync", () => {
    expect(coversCluster("all", report(scope("a", [])))).toBe(true);
    expect(coversCluster("namespace", report(scope("a", [])))).toBe(false);
    expect(coversCluster("cnf", report(scope("a", [])))).toBe(false);
  });
});
