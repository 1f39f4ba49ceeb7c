import {
  REPEATED_DRIFT,
  REPEATED_DRIFT_REPAIRS,
  RESTART_PENDING_REASON,
  mayHaveWritten,
  needsClaim,
  planAfterWrite,
  planApplying,
  planClaimFailure,
  planOverwritten,
  planRewrite,
  planSuperseded,
  planRuleDecision,
  restartPendingOf,
  type CnfSituation,
  type ObservedRule,
  type PodRuleResult,
  type RulePlanInput,
} from "../../../shared/sync/plan-status.js";

const NOW = "2026-11-21T12:00:00Z";
const LATER = "2026-11-21T12:05:00Z";

const rule = (over: Partial<ObservedRule> = {}): ObservedRule => ({
  key: "Mwan3Rule/r1",
  generation: 1,
  resourceVersion: "100",
  deleting: false,
  hasFinalizer: false,
  status: undefined,
  ...over,
});
const cnf = (ready: number, expected = 2): CnfSituation => ({
  kind: "found",
  deployment: "cnf-1",
  readyPods: ready,
  expectedPods: expected,
});
const held = (changed: boolean): PodRuleResult => ({ kind: "held", changed });
const failed = (
  cls: "transient" | "dependency" | "invalid" | "restart",
  message = "boom",
  pod = "cnf-1-a",
): PodRuleResult => ({
  kind: "failed",
  failure: { class: cls, pod, message },
});

function decide(over: Partial<RulePlanInput>) {
  return planRuleDecision({
    rule: rule(),
    cnf: cnf(2),
    podResults: [held(true), held(true)],
    now: NOW,
    ...over,
  });
}

describe("planRuleDecision for a live rule", () => {
  it("first apply on every pod: inSync, applied fields, the claimed finalizer kept, 'created'", () => {
    const d = decide({ rule: rule({ hasFinalizer: true }) });
    expect(d.outcome).toEqual({ kind: "done", result: "created" });
    expect(d.finalizer).toBe("keep");
    expect(d.status).toMatchObject({
      inSync: true,
      appliedVersion: "100",
      appliedGeneration: 1,
      appliedTime: NOW,
      observedGeneration: 1,
    });
    expect(d.status?.conditions?.[0]).toMatchObject({ type: "Ready", reason: "Applied" });
  });

  it("an unchanged re-delivery writes no status and keeps the finalizer", () => {
    const first = decide({});
    const again = decide({
      rule: rule({ hasFinalizer: true, resourceVersion: "105", status: first.status! }),
      podResults: [held(false), held(false)],
      now: LATER,
    });
    expect(again.status).toBeNull();
    expect(again.finalizer).toBe("keep");
    expect(again.outcome).toEqual({ kind: "done", result: "unchanged" });
  });

  it("an object changed behind our back is repaired and says so", () => {
    const first = decide({});
    const d = decide({
      rule: rule({ hasFinalizer: true, status: first.status! }),
      podResults: [held(true), held(false)],
      now: LATER,
    });
    expect(d.status?.conditions?.[0]).toMatchObject({ reason: "DriftRepaired" });
    expect(d.status?.appliedTime).toBe(NOW);
  });

  it("drift repaired again and again within the window is RepeatedDrift, not Ready", () => {
    let status = decide({}).status!;
    const repair = (now: string) => {
      const d = decide({
        rule: rule({ hasFinalizer: true, status }),
        podResults: [held(true), held(false)],
        now,
      });
      status = d.status ?? status;
      return d;
    };
    const times = ["2026-11-21T12:01:00Z", "2026-11-21T12:20:00Z", "2026-11-21T12:40:00Z"];
    expect(repair(times[0]!).status).toMatchObject({ inSync: true, driftRepairs: 1 });
    expect(repair(times[1]!).status).toMatchObject({ driftRepairs: 2, driftSince: times[0] });
    const third = repair(times[2]!);
    expect(third.outcome).toEqual({ kind: "done", result: REPEATED_DRIFT });
    expect(third.status).toMatchObject({
      inSync: false,
      driftRepairs: REPEATED_DRIFT_REPAIRS,
      driftSince: times[0],
      appliedGeneration: 1,
    });
    expect(third.status?.conditions?.[0]).toMatchObject({
      type: "Reconciling",
      reason: "RepeatedDrift",
    });
    // The pod holds it at the next check: Ready, the count kept while its window lasts.
    const held2 = decide({
      rule: rule({ hasFinalizer: true, status }),
      podResults: [held(false), held(false)],
      now: "2026-11-21T12:50:00Z",
    });
    expect(held2.status).toMatchObject({ inSync: true, driftRepairs: 3 });
  });

  it("a drift repair after the window starts a new count", () => {
    const first = decide({}).status!;
    const old = { ...first, driftRepairs: 2, driftSince: "2026-11-21T10:00:00Z" };
    const d = decide({
      rule: rule({ hasFinalizer: true, status: old }),
      podResults: [held(true), held(false)],
      now: "2026-11-21T11:30:00Z",
    });
    expect(d.status).toMatchObject({
      inSync: true,
      driftRepairs: 1,
      driftSince: "2026-11-21T11:30:00Z",
    });
  });

  it("a new generation updates appliedGeneration, appliedVersion and appliedTime", () => {
    const first = decide({});
    const d = decide({
      rule: rule({
        generation: 2,
        resourceVersion: "200",
        hasFinalizer: true,
        status: first.status!,
      }),
      now: LATER,
    });
    expect(d.outcome).toEqual({ kind: "done", result: "updated" });
    expect(d.status).toMatchObject({
      appliedGeneration: 2,
      appliedVersion: "200",
      appliedTime: LATER,
    });
  });

  it("CNF with no ready pod: done (the readiness event brings it back), inSync false, appliedVersion cleared", () => {
    const applied = decide({}).status!;
    const d = decide({
      rule: rule({ hasFinalizer: true, status: applied }),
      cnf: cnf(0),
      podResults: [],
    });
    expect(d.outcome).toEqual({ kind: "done", result: "waiting for CNF" });
    expect(d.status?.inSync).toBe(false);
    expect(d.status?.appliedVersion).toBeUndefined();
    expect(d.status?.message).toBe("CNF cnf-1 has 0/2 pods ready");
    expect(d.finalizer).toBe("keep");
  });

  it("1 of 2 pods ready: held by every ready pod, so in sync; no pod count in the message", () => {
    const d = decide({ cnf: cnf(1), podResults: [held(true)] });
    expect(d.status?.inSync).toBe(true);
    expect(d.status?.message).toBe("applied on every ready pod of CNF cnf-1");
    expect(d.outcome.kind).toBe("done");
  });

  it("no CNF: 202 and a status that says which Deployment is missing", () => {
    const d = decide({ cnf: { kind: "none", purpose: "cnf1", namespace: "ns" }, podResults: [] });
    expect(d.outcome.kind).toBe("done");
    expect(d.status?.message).toBe("no CNF Deployment with sdewanPurpose=cnf1 in namespace ns");
  });

  it("two CNF Deployments for one purpose: Stalled, 422", () => {
    const d = decide({ cnf: { kind: "conflict", deployments: ["a", "b"] }, podResults: [] });
    expect(d.outcome).toMatchObject({ kind: "permanent", code: "MultipleCNFs" });
    expect(d.status?.conditions?.[0]).toMatchObject({ type: "Stalled", reason: "MultipleCNFs" });
  });

  it.each([
    [
      "a missing dependency retries with the reason",
      failed("dependency", "policy balance1 missing on CNF"),
      "retry",
      "DependencyMissing",
    ],
    ["a CNF 5xx retries", failed("transient"), "retry", "CNFError"],
    [
      "a spec the CNF rejects is Stalled, never retried",
      failed("invalid"),
      "permanent",
      "CNFRejected",
    ],
  ])("%s", (_t, result, kind, reason) => {
    const d = decide({ podResults: [held(true), result] });
    expect(d.outcome.kind).toBe(kind);
    expect(d.status?.conditions?.[0]?.reason).toBe(reason);
    expect(d.status?.inSync).toBe(false);
    expect(d.finalizer).toBe("keep");
  });

  it("an unappliable spec is Stalled with its own code", () => {
    const d = decide({
      unappliable: {
        code: "NetworkNotMapped",
        message: "network ovn-x is not in the CNF annotation",
      },
      podResults: [],
    });
    expect(d.outcome).toMatchObject({ kind: "permanent", code: "NetworkNotMapped" });
  });
});

describe("planRuleDecision for a rule being deleted", () => {
  const deleting = rule({ deleting: true, hasFinalizer: true });

  it("gone from every pod: finalizer removed, no status write", () => {
    const d = decide({ rule: deleting });
    expect(d.finalizer).toBe("remove");
    expect(d.status).toBeNull();
    expect(d.outcome).toEqual({ kind: "done", result: "deleted" });
  });

  it("no CNF: finalizer removed", () => {
    const d = decide({
      rule: deleting,
      cnf: { kind: "none", purpose: "p", namespace: "n" },
      podResults: [],
    });
    expect(d.finalizer).toBe("remove");
  });

  it("CNF not ready: finalizer kept, done until the CNF comes back", () => {
    const d = decide({ rule: deleting, cnf: cnf(0), podResults: [] });
    expect(d.finalizer).toBe("keep");
    expect(d.outcome).toEqual({ kind: "done", result: "waiting for CNF" });
  });

  it("only some pods ready: finalizer kept until every pod is clean", () => {
    const d = decide({ rule: deleting, cnf: cnf(1), podResults: [held(true)] });
    expect(d.finalizer).toBe("keep");
  });

  it("a CNF error while deleting retries instead of stalling", () => {
    const d = decide({ rule: deleting, podResults: [failed("invalid", "zone z1 is used")] });
    expect(d.outcome.kind).toBe("retry");
    expect(d.finalizer).toBe("keep");
  });
});

describe("planRuleDecision names the missing dependency", () => {
  it("one reference: says which rule to apply first", () => {
    const d = decide({
      podResults: [failed("dependency", "HTTP 400 Policy[balance1] is not definied"), held(false)],
      needs: ["Mwan3Policy balance1"],
    });
    expect(d.outcome.kind).toBe("retry");
    expect(d.status?.message).toMatch(
      /^Mwan3Policy balance1 is missing on the CNF, apply it first: HTTP 400 .* \(on pod cnf-1-a\); will retry$/,
    );
  });

  it("a rule being deleted that is still in use says so", () => {
    const d = decide({
      rule: rule({ deleting: true, hasFinalizer: true }),
      podResults: [failed("dependency", "HTTP 400 zone lan1 is used")],
    });
    expect(d.status?.conditions?.[0]).toMatchObject({ reason: "StillInUse" });
    expect(d.status?.message).toContain("still used by another rule on the CNF");
  });
});

describe("a failed service restart is remembered until the rule is Ready", () => {
  const marker = (status: ReturnType<typeof decide>["status"]) =>
    status?.conditions?.find((c) => c.reason === RESTART_PENDING_REASON);

  it("the restart failure wins over a lesser failure on another pod and leaves a marker", () => {
    const d = decide({
      podResults: [failed("transient", "HTTP 500", "cnf-1-b"), failed("restart", "HTTP 500")],
    });
    expect(d.outcome.kind).toBe("retry");
    expect(d.status?.conditions?.[0]).toMatchObject({
      type: "Reconciling",
      reason: "RestartFailed",
    });
    expect(marker(d.status)).toMatchObject({ type: "Ready", status: "False" });
    expect(marker(d.status)?.message).toContain("on pod cnf-1-a");
  });

  it("the marker outlives a not-ready CNF and goes once the rule is Ready", () => {
    const failedRestart = decide({ podResults: [failed("restart"), held(true)] }).status!;
    const down = decide({
      rule: rule({ status: failedRestart }),
      cnf: cnf(0),
      podResults: [],
      now: LATER,
    }).status!;
    expect(down.conditions?.[0]).toMatchObject({ reason: "CNFNotReady" });
    expect(marker(down)).toEqual(marker(failedRestart));
    expect(restartPendingOf(rule({ status: down }))).toBe(true);

    const ready = decide({ rule: rule({ status: down }), podResults: [held(false), held(false)] });
    expect(ready.status?.conditions).toHaveLength(1);
    expect(ready.status?.conditions?.[0]).toMatchObject({ type: "Ready", reason: "Applied" });
    expect(restartPendingOf(rule({ status: ready.status! }))).toBe(false);
  });

  it.each([
    ["no status yet (a delivery may have stopped between write and restart)", undefined, 1, true],
    ["a status for an older generation", { observedGeneration: 1 }, 2, true],
    ["a status for this generation", { observedGeneration: 2 }, 2, false],
  ])("restartPendingOf: %s", (_t, status, generation, pending) => {
    expect(restartPendingOf(rule({ status, generation }))).toBe(pending);
  });
});

describe("planRuleDecision across partial readiness and drift", () => {
  it("applied on 1 of 2 ready pods: the claimed finalizer stays so a later delete cleans that pod", () => {
    const d = planRuleDecision({
      rule: rule({ hasFinalizer: true }),
      cnf: cnf(1),
      podResults: [held(true)],
      now: NOW,
    });
    expect(d.finalizer).toBe("keep");
  });

  it("a repaired drift keeps its reason on the next quiet sync, so nothing is written", () => {
    const applied = decide({}).status!;
    const repaired = decide({
      rule: rule({ hasFinalizer: true, status: applied }),
      podResults: [held(true), held(false)],
      now: LATER,
    }).status!;
    const quiet = decide({
      rule: rule({ hasFinalizer: true, status: repaired }),
      podResults: [held(false), held(false)],
      now: LATER,
    });
    expect(quiet.status).toBeNull();
  });
});

describe("needsClaim: the finalizer comes before the first CNF write", () => {
  it("a live rule without a finalizer about to be written is claimed first", () => {
    expect(needsClaim(rule(), true)).toBe(true);
  });

  it("nothing to write (no CNF, no ready pod, unappliable spec): no finalizer to add", () => {
    expect(needsClaim(rule(), false)).toBe(false);
  });

  it("already guarded, or on its way out: nothing to claim", () => {
    expect(needsClaim(rule({ hasFinalizer: true }), true)).toBe(false);
    expect(needsClaim(rule({ deleting: true }), true)).toBe(false);
  });
});

describe("planAfterWrite: the rule read back after writing for it", () => {
  it("the same rule, still live: the writes stand", () => {
    expect(planAfterWrite("u1", { uid: "u1", deleting: false })).toBe("current");
  });

  it("deleted meanwhile, or already gone: what was written must be removed again", () => {
    expect(planAfterWrite("u1", { uid: "u1", deleting: true })).toBe("deleted");
    expect(planAfterWrite("u1", "gone")).toBe("deleted");
  });

  it("a new rule of the same name: retried, so the new spec is written", () => {
    expect(planAfterWrite("u1", { uid: "u2", deleting: false })).toBe("replaced");
  });
});

describe("mayHaveWritten", () => {
  it("a change held, or a write that failed (it may still have landed): yes", () => {
    expect(mayHaveWritten(rule(), [held(false), held(true)])).toBe(true);
    expect(mayHaveWritten(rule(), [held(false), failed("transient")])).toBe(true);
  });

  it("nothing changed anywhere, or a rule being deleted: no", () => {
    expect(mayHaveWritten(rule(), [held(false), held(false)])).toBe(false);
    expect(mayHaveWritten(rule({ deleting: true }), [held(true)])).toBe(false);
  });
});

describe("a deletion the CNF refuses because something still uses the object", () => {
  const deleting = rule({ deleting: true, hasFinalizer: true });
  const inUse = failed("dependency", "Policy policy1 is used");

  it("used by a rule CR: retried, naming that rule", () => {
    const d = decide({
      rule: deleting,
      podResults: [inUse, held(true)],
      stillUsedBy: ["Mwan3Rule rule1"],
    });
    expect(d.outcome).toMatchObject({ kind: "retry" });
    expect(d.status?.conditions?.[0]).toMatchObject({ type: "Reconciling", reason: "StillInUse" });
    expect(d.status?.message).toMatch(/^still used by Mwan3Rule rule1, delete it first: /);
  });

  it("used by nothing any rule declares: Stalled, since retrying cannot help", () => {
    const d = decide({ rule: deleting, podResults: [inUse, held(true)], stillUsedBy: [] });
    expect(d.outcome).toMatchObject({ kind: "permanent", code: "InUseByUndeclaredObject" });
    expect(d.finalizer).toBe("keep");
    expect(d.status?.message).toContain("no rule declares");
  });

  it("who uses it could not be read: retried with the CNF's words", () => {
    const d = decide({ rule: deleting, podResults: [inUse, held(true)] });
    expect(d.outcome).toMatchObject({ kind: "retry" });
    expect(d.status?.message).toContain("still used by another rule on the CNF");
  });
});

describe("planClaimFailure: a finalizer the API server did not take", () => {
  const refusal = {
    kind: "refused" as const,
    finalizer: "rule.finalizers.sdewan.akraino.org",
    message: "update Mwan3Rule ns/r1: 422 Invalid: this namespace takes no new finalizers",
  };

  it("a refusal is Stalled with the API server's words and a permanent outcome", () => {
    const decision = planClaimFailure(rule(), refusal, NOW);
    expect(decision.outcome).toMatchObject({ kind: "permanent", code: "FinalizerRefused" });
    expect(decision.finalizer).toBe("keep");
    expect(decision.status).toMatchObject({ inSync: false, observedGeneration: 1 });
    const condition = decision.status?.conditions?.[0];
    expect(condition).toMatchObject({ type: "Stalled", reason: "FinalizerRefused" });
    expect(condition?.message).toContain("this namespace takes no new finalizers");
    expect(condition?.message).toContain(refusal.finalizer);
  });

  it("an outage is Reconciling and retried, still saying why", () => {
    const decision = planClaimFailure(
      rule(),
      { ...refusal, kind: "unavailable", message: "update: 500 InternalError" },
      NOW,
    );
    expect(decision.outcome.kind).toBe("retry");
    expect(decision.status?.conditions?.[0]).toMatchObject({
      type: "Reconciling",
      reason: "FinalizerWriteFailed",
    });
  });

  it("a refused release says the rule cannot finish deleting", () => {
    const decision = planClaimFailure(
      rule({ deleting: true }),
      { ...refusal, change: "remove" },
      NOW,
    );
    expect(decision.outcome).toMatchObject({ kind: "permanent", code: "FinalizerRefused" });
    expect(decision.status?.conditions?.[0]?.message).toContain(
      `refused to remove finalizer ${refusal.finalizer}, so the rule cannot finish deleting`,
    );
  });

  it("a repeat writes nothing", () => {
    const first = planClaimFailure(rule(), refusal, NOW);
    const again = planClaimFailure(rule({ status: first.status ?? undefined }), refusal, LATER);
    expect(again.status).toBeNull();
  });

  it("a rule shown in sync for an earlier generation is no longer shown in sync", () => {
    const status = { inSync: true, observedGeneration: 1, appliedGeneration: 1 };
    const decision = planClaimFailure(rule({ generation: 2, status }), refusal, NOW);
    expect(decision.status).toMatchObject({ inSync: false, observedGeneration: 2 });
  });
});

describe("planApplying and planSuperseded: no inSync=true behind generation", () => {
  const inSyncFor = (generation: number) => ({
    inSync: true,
    observedGeneration: generation,
    appliedGeneration: generation,
    appliedVersion: "100",
    appliedTime: NOW,
    conditions: [
      {
        type: "Ready" as const,
        status: "True" as const,
        reason: "Applied",
        message: "applied on all 2 pods of CNF cnf-1",
        lastTransitionTime: NOW,
        observedGeneration: generation,
      },
    ],
    message: "applied on all 2 pods of CNF cnf-1",
  });

  it("a new generation is marked Applying, keeping what was applied", () => {
    const observed = rule({ generation: 2, status: inSyncFor(1) });
    const status = planApplying(observed, LATER);
    expect(status).toMatchObject({
      inSync: false,
      // Not yet acted on to its end: a restart may still be owed if this delivery stops.
      observedGeneration: 1,
      appliedGeneration: 1,
      appliedVersion: "100",
    });
    expect(status?.conditions).toEqual([
      expect.objectContaining({ type: "Reconciling", reason: "Applying", observedGeneration: 1 }),
    ]);
    expect(restartPendingOf({ ...observed, status: status ?? undefined })).toBe(true);
  });

  it.each([
    ["the generation in sync already", rule({ generation: 1, status: inSyncFor(1) })],
    ["a status not claiming inSync", rule({ generation: 2, status: { inSync: false } })],
    ["no status yet", rule({ generation: 1 })],
    ["a rule being deleted", rule({ generation: 2, deleting: true, status: inSyncFor(1) })],
  ])("nothing to mark for %s", (_case, observed) => {
    expect(planApplying(observed, LATER)).toBeNull();
  });

  it("a status written for N, answered with generation N+1, is corrected", () => {
    const corrected = planSuperseded(inSyncFor(2), 3, LATER);
    expect(corrected).toMatchObject({ inSync: false, observedGeneration: 2, appliedGeneration: 2 });
    expect(corrected?.conditions?.[0]).toMatchObject({ reason: "Superseded" });
    expect(planSuperseded(inSyncFor(2), 2, LATER)).toBeNull();
    expect(planSuperseded({ ...inSyncFor(2), inSync: false }, 3, LATER)).toBeNull();
  });

  it("a status write refused with 409 is re-planned only for the rule its results are about", () => {
    const planned = rule({ generation: 2, status: inSyncFor(1) });
    const sameSpec = rule({ generation: 2, resourceVersion: "105", status: inSyncFor(2) });
    expect(planRewrite(planned, sameSpec)).toBe("replan");
    expect(planRewrite(planned, rule({ generation: 3, status: inSyncFor(3) }))).toBe("stale");
    expect(planRewrite(planned, rule({ generation: 2, deleting: true }))).toBe("stale");
  });

  it("a newer generation in sync stops claiming it when an older one may have been written after", () => {
    const fresh = rule({ generation: 3, status: inSyncFor(3) });
    const corrected = planOverwritten(fresh, 2, LATER);
    expect(corrected).toMatchObject({ inSync: false, observedGeneration: 3, appliedGeneration: 3 });
    expect(corrected?.conditions).toEqual([
      expect.objectContaining({ type: "Reconciling", reason: "Reapplying", observedGeneration: 3 }),
    ]);
    expect(corrected?.message).toContain("generation 2");
    expect(
      planOverwritten(rule({ generation: 3, status: { inSync: false } }), 2, LATER),
    ).toBeNull();
  });
});

describe("a pod that comes back ready (ADR 0016)", () => {
  const applied = decide({ podResults: [held(true), held(true)] }).status ?? undefined;
  const inSync = rule({ status: applied, hasFinalizer: true });
  const back = (readySince: string): PodRuleResult => ({
    kind: "held",
    changed: true,
    podReadySince: readySince,
  });

  it("a rule it lacks, applied before it turned ready, is re-applied with no status write", () => {
    const d = decide({ rule: inSync, podResults: [held(false), back(LATER)], now: LATER });
    expect(d).toMatchObject({ status: null, result: "re-applied" });
  });

  it("the pod going not ready writes nothing either: the ready pod still holds it", () => {
    const d = decide({ rule: inSync, cnf: cnf(1), podResults: [held(false)], now: LATER });
    expect(d).toMatchObject({ status: null, result: "unchanged" });
  });

  it("a pod ready since before the rule was applied lost it: drift, counted", () => {
    const d = decide({ rule: inSync, podResults: [held(false), back(NOW)], now: LATER });
    expect(d.result).toBe("updated");
    expect(d.status).toMatchObject({ driftRepairs: 1 });
  });

  it("a pod ready for longer than the window lost it: drift, counted", () => {
    const later = "2026-11-21T13:05:00Z";
    const d = decide({ rule: inSync, podResults: [held(false), back(LATER)], now: later });
    expect(d.result).toBe("updated");
  });
});
