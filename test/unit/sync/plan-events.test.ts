import { readFileSync } from "node:fs";
import { done, permanent, retryLater } from "../../../shared/core/outcome.js";
import type { RuleStatus } from "../../../shared/kinds/index.js";
import {
  CNF_EVENT_REASONS,
  RULE_EVENT_REASONS,
  isOwnChange,
  planRuleEvent,
  planSyncEvents,
  type NotedRuleEvent,
  type PlannedEvent,
} from "../../../shared/sync/plan-events.js";
import type { RuleDecision } from "../../../shared/sync/plan-status.js";

type Condition = RuleDecision["condition"];

const decision = (condition: Condition, outcome = done("x")): RuleDecision => ({
  status: null,
  finalizer: "keep",
  outcome,
  result: "x",
  condition,
});
const stored = (condition: Condition): RuleStatus => ({
  conditions: [{ ...condition, status: "True", lastTransitionTime: "2026-11-25T12:00:00Z" }],
});

const APPLIED: Condition = { type: "Ready", reason: "Applied", message: "applied on all 2 pods" };
const NOT_READY: Condition = {
  type: "Reconciling",
  reason: "CNFNotReady",
  message: "CNF c has 0/2 pods ready",
};
const CNF_ERROR: Condition = {
  type: "Reconciling",
  reason: "CNFError",
  message: "503 (on pod p1)",
};

describe("which Event a rule decision is worth", () => {
  it.each([
    ["first status: Applied", undefined, decision(APPLIED), "Normal Applied"],
    ["Applied again, unchanged: nothing", stored(APPLIED), decision(APPLIED), null],
    [
      "a new generation applied, same condition: Applied",
      { ...stored(APPLIED), appliedGeneration: 1 },
      { ...decision(APPLIED), status: { appliedGeneration: 2 } },
      "Normal Applied",
    ],
    [
      "Applied after NotReady: a transition",
      stored(NOT_READY),
      decision(APPLIED),
      "Normal Applied",
    ],
    [
      "drift written back",
      stored(APPLIED),
      decision({ ...APPLIED, reason: "DriftRepaired" }),
      "Normal DriftRepaired",
    ],
    [
      "removed from every pod",
      stored(APPLIED),
      decision({ type: "Reconciling", reason: "Deleted", message: "removed from all 2 pods" }),
      "Normal DeletedFromCNF",
    ],
    ["CNF not ready", stored(APPLIED), decision(NOT_READY), "Warning NotReady"],
    [
      "no CNF at all",
      undefined,
      decision({ type: "Reconciling", reason: "NoCNF", message: "no CNF Deployment" }),
      "Warning NotReady",
    ],
    [
      "the CNF refuses the rule",
      undefined,
      decision(
        { type: "Stalled", reason: "CNFRejected", message: "CNF rejected the rule" },
        permanent("CNFRejected", "no"),
      ),
      "Warning Rejected",
    ],
    [
      "any other Stalled",
      undefined,
      decision(
        { type: "Stalled", reason: "InvalidSpec", message: "bad" },
        permanent("InvalidSpec", "bad"),
      ),
      "Warning Stalled",
    ],
    [
      "the same failure again: counted",
      stored(CNF_ERROR),
      decision(CNF_ERROR, retryLater("503")),
      "Warning Retrying",
    ],
    [
      "NotReady again while a CNF-wide sync waits (done): nothing",
      stored(NOT_READY),
      decision(NOT_READY),
      null,
    ],
  ])("%s", (_title, old, next, expected) => {
    const event = planRuleEvent(old, next);
    expect(event === null ? null : `${event.type} ${event.reason}`).toBe(expected);
    if (event !== null) expect(event.note).toBe(next.condition.message);
  });

  it("docs/events.md lists every reason of the catalogue, with its type", () => {
    const doc = readFileSync("docs/events.md", "utf8");
    for (const [reason, { type }] of Object.entries(RULE_EVENT_REASONS)) {
      expect(doc).toMatch(new RegExp(`\\| \`${reason}\` \\| ${type} \\|`));
    }
  });
});

const noted = (
  name: string,
  event: PlannedEvent,
  own = false,
  kind = "Mwan3Rule",
): NotedRuleEvent => ({ rule: { kind, name, key: `${kind}/${name}` }, event, own });
const applied: PlannedEvent = { type: "Normal", reason: "Applied", note: "applied on all 2 pods" };
const waiting: PlannedEvent = {
  type: "Warning",
  reason: "NotReady",
  note: "CNF c has 1/2 pods ready",
};
const CNF = { name: "c" };
const wrote = (pod: string, names: readonly string[]) => ({
  pod,
  writes: names.map((n) => ({ ruleKey: `Mwan3Rule/${n}` })),
});
const reasonsOf = (planned: ReturnType<typeof planSyncEvents>) => ({
  onRules: planned.onRules.map((n) => `${n.event.reason} ${n.rule.name}`),
  onCnf: planned.onCnf.map((e) => `${e.type} ${e.reason}`),
});

describe("where the Events of one sync go", () => {
  it("a sync of some rules (a rule event): every Event on its rule, however many share a reason", () => {
    const planned = planSyncEvents({
      noted: [noted("a", applied), noted("b", applied)],
      cnf: undefined,
      pods: [],
    });
    expect(reasonsOf(planned)).toEqual({ onRules: ["Applied a", "Applied b"], onCnf: [] });
  });

  it("a whole CNF, many rules re-applied to a restarted pod: one Event on the Deployment naming the count and the pod", () => {
    const names = ["r1", "r2", "r3", "r4", "r5"];
    const planned = planSyncEvents({
      noted: names.map((n) => noted(n, applied)),
      cnf: CNF,
      pods: [wrote("p2", names), wrote("p1", [])],
    });
    expect(reasonsOf(planned)).toEqual({ onRules: [], onCnf: ["Normal RulesApplied"] });
    expect(planned.onCnf[0]?.note).toBe(
      "5 rules (Mwan3Rule r1, Mwan3Rule r2, Mwan3Rule r3 and 2 more): applied on all 2 pods; written to pod p2: 5",
    );
  });

  it("a whole CNF: a rule's own news (a new generation, its deletion) stays on the rule", () => {
    const planned = planSyncEvents({
      noted: [noted("a", applied), noted("b", applied), noted("new", applied, true)],
      cnf: CNF,
      pods: [wrote("p1", ["a", "b", "new"]), wrote("p2", ["new"])],
    });
    expect(reasonsOf(planned)).toEqual({
      onRules: ["Applied new"],
      onCnf: ["Normal RulesApplied"],
    });
    expect(planned.onCnf[0]?.note).toBe(
      "2 rules (Mwan3Rule a, Mwan3Rule b): applied on all 2 pods; written to pod p1: 2",
    );
  });

  it("a whole CNF: a reason only one rule met stays on that rule (a single drift repaired)", () => {
    const drift: PlannedEvent = { ...applied, reason: "DriftRepaired" };
    const planned = planSyncEvents({
      noted: [noted("a", drift), noted("b", waiting), noted("c", waiting)],
      cnf: CNF,
      pods: [],
    });
    expect(reasonsOf(planned)).toEqual({
      onRules: ["DriftRepaired a"],
      onCnf: ["Warning RulesNotReady"],
    });
    expect(planned.onCnf[0]?.note).toBe(
      "2 rules (Mwan3Rule b, Mwan3Rule c): CNF c has 1/2 pods ready",
    );
  });

  it("a whole CNF, rules that met different failures: the one most met, and how many met it", () => {
    const failed = (note: string): PlannedEvent => ({ type: "Warning", reason: "Retrying", note });
    const planned = planSyncEvents({
      noted: [
        noted("a", failed("503 on p1")),
        noted("b", failed("503 on p1")),
        noted("c", failed("timeout")),
      ],
      cnf: CNF,
      pods: [],
    });
    expect(planned.onCnf).toEqual([
      {
        type: "Warning",
        reason: "RulesRetrying",
        note: "3 rules (Mwan3Rule a, Mwan3Rule b, Mwan3Rule c): 503 on p1 (2 of them; each rule's status says its own)",
      },
    ]);
  });
});

describe("whether what happens to a rule is its own doing", () => {
  const observed = { key: "k", resourceVersion: "1", hasFinalizer: true };
  it.each([
    ["never observed (no status)", { generation: 1, deleting: false, status: undefined }, true],
    [
      "a new generation",
      { generation: 2, deleting: false, status: { observedGeneration: 1 } },
      true,
    ],
    ["being deleted", { generation: 1, deleting: true, status: { observedGeneration: 1 } }, true],
    [
      "the generation it had: the CNF's doing",
      { generation: 1, deleting: false, status: { observedGeneration: 1 } },
      false,
    ],
  ])("%s", (_title, rule, own) => {
    expect(isOwnChange({ ...observed, ...rule })).toBe(own);
  });
});

it("docs/events.md lists every reason of the CNF Deployment catalogue, with its type", () => {
  const doc = readFileSync("docs/events.md", "utf8");
  for (const [reason, { type }] of Object.entries(CNF_EVENT_REASONS)) {
    expect(doc).toMatch(new RegExp(`\\| \`${reason}\` \\| ${type} \\|`));
  }
});

describe("the CNF's readiness, told on its Deployment (ADR 0016)", () => {
  const cnf = { name: "cnf1" };

  it("some pods ready: one RulesNotReady Event with the count, whatever the rules noted", () => {
    const planned = planSyncEvents({
      noted: [],
      cnf,
      pods: [],
      readiness: { ready: 1, expected: 2, rules: 12 },
    });
    expect(planned.onCnf).toEqual([
      {
        type: "Warning",
        reason: "RulesNotReady",
        note: "CNF cnf1 has 1/2 pods ready: its 12 rules stay applied on the ready pods, and are written to the others when they are ready",
      },
    ]);
  });

  it.each([
    ["every pod ready", { ready: 2, expected: 2, rules: 12 }],
    ["no pod ready (the rules' statuses say it)", { ready: 0, expected: 2, rules: 12 }],
    ["no rules", { ready: 1, expected: 2, rules: 0 }],
  ])("%s: none", (_, readiness) => {
    expect(planSyncEvents({ noted: [], cnf, pods: [], readiness }).onCnf).toEqual([]);
  });
});
