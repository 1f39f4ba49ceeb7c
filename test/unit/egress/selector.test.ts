import {
  compileLabelSelector,
  labelSelectorQuery,
  selectorMatches,
  type CompiledSelector,
  type LabelSelector,
} from "../../../shared/core/label-selector.js";
import type { Labels } from "../../../shared/core/labels.js";

function compiled(selector: LabelSelector | null | undefined): CompiledSelector {
  const result = compileLabelSelector(selector, "sel");
  if (!result.ok) throw new Error(`unexpected invalid selector: ${JSON.stringify(result.errors)}`);
  return result.selector;
}

const web: Labels = { app: "web", tier: "front" };
const db: Labels = { app: "db" };
const emptyValue: Labels = { app: "" };

describe("label selector matching (Kubernetes semantics)", () => {
  it.each<[string, LabelSelector | null | undefined, Labels | null | undefined, boolean]>([
    ["null selector selects nothing, even an empty label set", null, {}, false],
    ["absent selector selects nothing", undefined, web, false],
    ["empty selector {} selects a labelled pod", {}, web, true],
    ["empty selector {} selects a pod without labels", {}, undefined, true],
    [
      "matchLabels: null and matchExpressions: null is the empty selector",
      { matchLabels: null, matchExpressions: null },
      db,
      true,
    ],
    ["matchLabels app=web selects app=web", { matchLabels: { app: "web" } }, web, true],
    ["matchLabels app=web rejects app=db", { matchLabels: { app: "web" } }, db, false],
    [
      "matchLabels app=web rejects a pod without labels",
      { matchLabels: { app: "web" } },
      null,
      false,
    ],
    [
      "matchLabels with two keys needs both",
      { matchLabels: { app: "web", tier: "back" } },
      web,
      false,
    ],
    ["matchLabels app='' selects app=''", { matchLabels: { app: "" } }, emptyValue, true],
    ["matchLabels app='' rejects a pod without app", { matchLabels: { app: "" } }, {}, false],
    [
      "In (web,db) selects app=db",
      { matchExpressions: [{ key: "app", operator: "In", values: ["web", "db"] }] },
      db,
      true,
    ],
    [
      "In (web) rejects app=db",
      { matchExpressions: [{ key: "app", operator: "In", values: ["web"] }] },
      db,
      false,
    ],
    [
      "In (web) rejects a pod without app",
      { matchExpressions: [{ key: "app", operator: "In", values: ["web"] }] },
      {},
      false,
    ],
    [
      "NotIn (web) selects app=db",
      { matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }] },
      db,
      true,
    ],
    [
      "NotIn (web) rejects app=web",
      { matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }] },
      web,
      false,
    ],
    [
      "NotIn (web) selects a pod without app",
      { matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }] },
      {},
      true,
    ],
    [
      "Exists app selects app=web",
      { matchExpressions: [{ key: "app", operator: "Exists" }] },
      web,
      true,
    ],
    [
      "Exists app selects app='' (empty value is present)",
      { matchExpressions: [{ key: "app", operator: "Exists" }] },
      emptyValue,
      true,
    ],
    [
      "Exists app rejects a pod without app",
      { matchExpressions: [{ key: "app", operator: "Exists", values: [] }] },
      {},
      false,
    ],
    [
      "DoesNotExist tier selects app=db",
      { matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] },
      db,
      true,
    ],
    [
      "DoesNotExist tier rejects tier=front",
      { matchExpressions: [{ key: "tier", operator: "DoesNotExist", values: null }] },
      web,
      false,
    ],
    [
      "matchLabels AND matchExpressions: app=web and tier In (front) selects web",
      {
        matchLabels: { app: "web" },
        matchExpressions: [{ key: "tier", operator: "In", values: ["front"] }],
      },
      web,
      true,
    ],
    [
      "matchLabels AND matchExpressions: app=web and tier DoesNotExist rejects web",
      {
        matchLabels: { app: "web" },
        matchExpressions: [{ key: "tier", operator: "DoesNotExist" }],
      },
      web,
      false,
    ],
    [
      "matchLabels and a contradicting expression on the same key selects nothing",
      {
        matchLabels: { app: "web" },
        matchExpressions: [{ key: "app", operator: "NotIn", values: ["web"] }],
      },
      web,
      false,
    ],
  ])("%s", (_title, selector, labels, expected) => {
    expect(selectorMatches(compiled(selector), labels)).toBe(expected);
  });

  it("does not treat inherited object properties as labels", () => {
    const selector = compiled({ matchExpressions: [{ key: "constructor", operator: "Exists" }] });
    expect(selectorMatches(selector, {})).toBe(false);
  });
});

describe("label selector as a labelSelector query string", () => {
  it.each<[string, LabelSelector | null, string | null]>([
    ["null selector needs no list at all -> null", null, null],
    ["empty selector lists everything -> ''", {}, ""],
    ["matchLabels app=web -> 'app=web'", { matchLabels: { app: "web" } }, "app=web"],
    ["matchLabels app='' -> 'app='", { matchLabels: { app: "" } }, "app="],
    ["matchLabels keys are sorted -> 'a=1,b=2'", { matchLabels: { b: "2", a: "1" } }, "a=1,b=2"],
    [
      "In with unsorted duplicate values -> 'app in (db,web)'",
      { matchExpressions: [{ key: "app", operator: "In", values: ["web", "db", "web"] }] },
      "app in (db,web)",
    ],
    [
      "NotIn -> 'app notin (a,b)'",
      { matchExpressions: [{ key: "app", operator: "NotIn", values: ["b", "a"] }] },
      "app notin (a,b)",
    ],
    ["Exists -> 'app'", { matchExpressions: [{ key: "app", operator: "Exists" }] }, "app"],
    [
      "DoesNotExist -> '!app'",
      { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] },
      "!app",
    ],
    [
      "prefixed keys keep their prefix -> 'app.kubernetes.io/name=web'",
      { matchLabels: { "app.kubernetes.io/name": "web" } },
      "app.kubernetes.io/name=web",
    ],
    [
      "everything together, sorted by key -> 'app=web,!legacy,tier in (front),zone notin (z1)'",
      {
        matchLabels: { app: "web" },
        matchExpressions: [
          { key: "zone", operator: "NotIn", values: ["z1"] },
          { key: "tier", operator: "In", values: ["front"] },
          { key: "legacy", operator: "DoesNotExist" },
        ],
      },
      "app=web,!legacy,tier in (front),zone notin (z1)",
    ],
  ])("%s", (_title, selector, expected) => {
    expect(labelSelectorQuery(compiled(selector))).toBe(expected);
  });
});

describe("invalid label selectors are rejected with a code and a field path", () => {
  it.each<[string, LabelSelector, string, string]>([
    [
      "unknown operator 'Equals'",
      { matchExpressions: [{ key: "app", operator: "Equals", values: ["a"] }] },
      "InvalidOperator",
      "sel.matchExpressions[0].operator",
    ],
    [
      "lower-case operator 'in'",
      { matchExpressions: [{ key: "app", operator: "in", values: ["a"] }] },
      "InvalidOperator",
      "sel.matchExpressions[0].operator",
    ],
    [
      "In with empty values",
      { matchExpressions: [{ key: "app", operator: "In", values: [] }] },
      "ValuesRequired",
      "sel.matchExpressions[0].values",
    ],
    [
      "NotIn with absent values",
      { matchExpressions: [{ key: "app", operator: "NotIn" }] },
      "ValuesRequired",
      "sel.matchExpressions[0].values",
    ],
    [
      "In with null values",
      { matchExpressions: [{ key: "app", operator: "In", values: null }] },
      "ValuesRequired",
      "sel.matchExpressions[0].values",
    ],
    [
      "Exists with values",
      { matchExpressions: [{ key: "app", operator: "Exists", values: ["a"] }] },
      "ValuesForbidden",
      "sel.matchExpressions[0].values",
    ],
    [
      "DoesNotExist with values",
      { matchExpressions: [{ key: "app", operator: "DoesNotExist", values: ["a"] }] },
      "ValuesForbidden",
      "sel.matchExpressions[0].values",
    ],
    [
      "expression key with a space",
      { matchExpressions: [{ key: "my app", operator: "Exists" }] },
      "InvalidLabelKey",
      "sel.matchExpressions[0].key",
    ],
    [
      "empty expression key",
      { matchExpressions: [{ key: "", operator: "Exists" }] },
      "InvalidLabelKey",
      "sel.matchExpressions[0].key",
    ],
    [
      "key with two slashes",
      { matchLabels: { "a/b/c": "x" } },
      "InvalidLabelKey",
      "sel.matchLabels.a/b/c",
    ],
    [
      "key with an upper-case prefix",
      { matchLabels: { "Example.com/app": "x" } },
      "InvalidLabelKey",
      "sel.matchLabels.Example.com/app",
    ],
    [
      "key name longer than 63 characters",
      { matchLabels: { ["k".repeat(64)]: "x" } },
      "InvalidLabelKey",
      `sel.matchLabels.${"k".repeat(64)}`,
    ],
    [
      "matchLabels value with a slash",
      { matchLabels: { app: "a/b" } },
      "InvalidLabelValue",
      "sel.matchLabels.app",
    ],
    [
      "matchLabels value longer than 63 characters",
      { matchLabels: { app: "v".repeat(64) } },
      "InvalidLabelValue",
      "sel.matchLabels.app",
    ],
    [
      "In value ending with '-'",
      { matchExpressions: [{ key: "app", operator: "In", values: ["ok", "bad-"] }] },
      "InvalidLabelValue",
      "sel.matchExpressions[0].values[1]",
    ],
  ])("%s -> %s at %s", (_title, selector, code, path) => {
    const result = compileLabelSelector(selector, "sel");
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.errors).toContainEqual(expect.objectContaining({ code, path }));
  });

  it.each<[string, LabelSelector]>([
    [
      "prefixed key and 63-character name",
      { matchLabels: { ["example.com/" + "k".repeat(63)]: "v" } },
    ],
    ["value with dots, dashes and underscores", { matchLabels: { app: "a.b-c_d" } }],
    [
      "In with a single empty-string value",
      { matchExpressions: [{ key: "app", operator: "In", values: [""] }] },
    ],
    [
      "Exists with values: []",
      { matchExpressions: [{ key: "app", operator: "Exists", values: [] }] },
    ],
  ])("accepts %s", (_title, selector) => {
    expect(compileLabelSelector(selector, "sel").ok).toBe(true);
  });

  it("reports every problem of a selector, not only the first", () => {
    const result = compileLabelSelector(
      {
        matchLabels: { "bad key": "v" },
        matchExpressions: [
          { key: "a", operator: "Foo" },
          { key: "b", operator: "In", values: [] },
        ],
      },
      "sel",
    );
    expect(result.ok ? [] : result.errors.map((e) => e.code)).toEqual([
      "InvalidLabelKey",
      "InvalidOperator",
      "ValuesRequired",
    ]);
  });
});
