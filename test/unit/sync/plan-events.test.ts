import { readFileSync } from "node:fs";
import { done, permanent, retryLater } from "../../../shared/core/outcome.js";
import type { RuleStatus } from "../../../shared/rules/index.js";
import { RULE_EVENT_REASONS, planRuleEvent } from "../../../shared/sync/plan-events.js";
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
