// manifests/monitoring: the PrometheusRule validates against prometheus-operator's CRD schema
// (@kubernetes-models/prometheus-operator, generated from the CRD's openAPIV3Schema), carries the
// same rules as the plain rule file, every alert links a runbook section that exists (and every
// section has its alert), and every metric an alert or a dashboard panel queries is one the code
// registers: renaming a metric fails here.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { PrometheusRule } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule";
import { parse, parseAllDocuments } from "yaml";
import { RUNBOOKS_DOC, alertRules, runbookAnchor } from "../../../scripts/manifests/alerts.js";
import {
  DASHBOARD_FILE,
  PROMETHEUS_RULE_FILE,
  RULES_FILE,
} from "../../../scripts/manifests/monitoring.js";
import { exportedMetricNames, metricNamesOf } from "./promql.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const read = (file: string): string => readFileSync(path.join(REPO, file), "utf8");

type Rule = { alert: string; expr: string; annotations: Record<string, string> };
type Groups = { name: string; rules: Rule[] }[];

const prometheusRule = parseAllDocuments(read(PROMETHEUS_RULE_FILE)).map(
  (d) => d.toJS() as { kind: string; spec: { groups: Groups } },
);
const plain = parse(read(RULES_FILE)) as { groups: Groups };
const shippedRules = plain.groups.flatMap((g) => g.rules);

describe("the PrometheusRule", () => {
  it("is one object that validates against prometheus-operator's CRD schema", () => {
    expect(prometheusRule.map((d) => d.kind)).toEqual(["PrometheusRule"]);
    expect(() => new PrometheusRule(prometheusRule[0] as never).validate()).not.toThrow();
  });

  it("the schema check is real: a rule without expr, or a group without name, is refused", () => {
    const [doc] = prometheusRule;
    const broken = structuredClone(doc) as { spec: { groups: { rules: object[] }[] } };
    broken.spec.groups[0]?.rules.push({ alert: "NoExpr" });
    expect(() => new PrometheusRule(broken as never).validate()).toThrow(/expr/);
    const nameless = { ...doc, spec: { groups: [{ rules: [] }] } };
    expect(() => new PrometheusRule(nameless as never).validate()).toThrow(/name/);
  });

  it("holds the same groups as the plain rule file", () => {
    expect(prometheusRule[0]?.spec.groups).toEqual(plain.groups);
  });
});

describe("runbooks", () => {
  const markdown = read(RUNBOOKS_DOC);
  const sections = [...markdown.matchAll(/^## (\S+)\s*$/gm)].map((m) => m[1] ?? "");

  it.each(shippedRules.map((r) => [r.alert, r] as const))(
    "%s links its runbook section, which exists and says what it means and what to do",
    (alert, rule) => {
      expect(rule.annotations["runbook_url"]).toBe(`${RUNBOOKS_DOC}#${runbookAnchor(alert)}`);
      expect(sections).toContain(alert);
      const body = markdown.split(`\n## ${alert}\n`)[1]?.split("\n## ")[0] ?? "";
      expect(body).toMatch(/\*\*Means:\*\*/);
      expect(body).toMatch(/\*\*Act:\*\*/);
    },
  );

  it("has no section for an alert that does not exist", () => {
    expect([...sections].sort()).toEqual(
      alertRules()
        .map((r) => r.alert)
        .sort(),
    );
  });
});

describe("metric names queried", () => {
  let exported: Set<string>;
  beforeAll(async () => {
    exported = await exportedMetricNames();
  });

  it("the extraction finds names, not functions, labels or keywords", () => {
    expect(
      metricNamesOf(
        'sum by (route, le) (rate(a_b_bucket{le="1",x=~"y|z"}[5m])) / on (route) group_left c or vector(1) unless d offset 5m',
      ),
    ).toEqual(["a_b_bucket", "c", "d"]);
  });

  it("a renamed metric is caught: one the code does not register is not exported", () => {
    expect(exported.has("sdewan_events_total")).toBe(true);
    expect(exported.has("sdewan_connector_queue_depth")).toBe(true);
    expect(exported.has("sdewan_event_duration_seconds_bucket")).toBe(true);
    expect(exported.has("sdewan_event_total")).toBe(false);
  });

  it.each(alertRules().map((r) => [r.alert, r.expr] as const))(
    "alert %s queries only exported metrics",
    (_alert, expr) => {
      const names = metricNamesOf(expr);
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((n) => !exported.has(n))).toEqual([]);
    },
  );

  const dashboard = JSON.parse(read(DASHBOARD_FILE)) as {
    panels: { title: string; targets: { expr: string }[] }[];
  };

  it("the dashboard is valid JSON with the panels an operator needs", () => {
    const titles = dashboard.panels.map((p) => p.title);
    for (const wanted of [
      /events by outcome/i,
      /latency per function/i,
      /CNF calls and failures/i,
      /rules not in sync/i,
      /connector lag/i,
    ]) {
      expect(titles.some((t) => wanted.test(t))).toBe(true);
    }
  });

  it.each(dashboard.panels.map((p) => [p.title, p] as const))(
    "panel %s queries only exported metrics",
    (_title, panel) => {
      expect(panel.targets.length).toBeGreaterThan(0);
      const names = panel.targets.flatMap((t) => metricNamesOf(t.expr));
      expect(names.length).toBeGreaterThan(0);
      expect(names.filter((n) => !exported.has(n))).toEqual([]);
    },
  );
});
