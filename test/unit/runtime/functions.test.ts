import request from "supertest";
import { ALL_FUNCTIONS } from "../../../functions/all.js";
import { FUNCTION_CATALOG } from "../../../functions/catalog.js";
import { reconcileRule } from "../../../functions/reconcile-rule/index.js";
import {
  createCombinedApp,
  createFunctionApp,
  portFrom,
  selectFunctions,
} from "../../../shared/runtime/index.js";
import { capturingRuntime } from "./helpers.js";

const FUNCTION_NAMES = [
  "reconcile-rule",
  "on-deployment-ready",
  "validate-admission",
  "egress-group-sync",
  "network-policy-sync",
  "clusterlink-export",
  "clusterlink-import",
  "clusterlink-authz",
  "clusterlink-peer-health",
];

/** Refused by the runtime before any handler runs, so it proves the route without calling one. */
const notJson = (app: Parameters<typeof request>[0], path: string) =>
  request(app).post(path).set("content-type", "application/json").send("{");

describe("every function exists and is wired to the runtime", () => {
  it("ALL_FUNCTIONS lists them once each", () => {
    expect(ALL_FUNCTIONS.map((fn) => fn.name)).toEqual(FUNCTION_NAMES);
  });

  it.each(FUNCTION_NAMES)("the combined server routes POST /%s to its function", async (name) => {
    const app = createCombinedApp(ALL_FUNCTIONS, capturingRuntime().runtime);
    const res = await notJson(app, `/${name}`).expect(400);
    expect(JSON.stringify(res.headers) + res.text).toContain("bad-json");
  });

  it("the catalog the server loads from names the same functions and loads each one", async () => {
    expect(FUNCTION_CATALOG.map((entry) => entry.name)).toEqual(FUNCTION_NAMES);
    const loaded = await Promise.all(FUNCTION_CATALOG.map((entry) => entry.load()));
    expect(loaded).toEqual(ALL_FUNCTIONS);
  });

  it("the catalog's entries are selected by FUNCTIONS like the functions themselves", () => {
    const selected = selectFunctions(FUNCTION_CATALOG, "validate-admission");
    expect(selected.map((entry) => entry.name)).toEqual(["validate-admission"]);
  });

  it("one function alone is served at POST / (OpenFaaS / Knative style)", async () => {
    await notJson(createFunctionApp(reconcileRule, capturingRuntime().runtime), "/").expect(400);
  });
});

describe("FUNCTIONS=a,b limits what the combined server serves", () => {
  it("unset or empty serves all", () => {
    expect(selectFunctions(ALL_FUNCTIONS, undefined)).toHaveLength(9);
    expect(selectFunctions(ALL_FUNCTIONS, " ")).toHaveLength(9);
  });

  it("a list serves only those, and the others are 404", async () => {
    const selected = selectFunctions(ALL_FUNCTIONS, "egress-group-sync, reconcile-rule");
    expect(selected.map((fn) => fn.name)).toEqual(["reconcile-rule", "egress-group-sync"]);
    const app = createCombinedApp(selected, capturingRuntime().runtime);
    await notJson(app, "/reconcile-rule").expect(400);
    await notJson(app, "/egress-group-sync").expect(400);
    await notJson(app, "/on-deployment-ready").expect(404);
    await notJson(app, "/validate-admission").expect(404);
    await notJson(app, "/").expect(404);
  });

  it("a single function is also served at POST /, as OpenFaaS and Knative call it", async () => {
    const app = createCombinedApp(
      selectFunctions(ALL_FUNCTIONS, "reconcile-rule"),
      capturingRuntime().runtime,
    );
    await notJson(app, "/").expect(400);
    await notJson(app, "/reconcile-rule").expect(400);
  });

  it("an unknown name fails at start, naming the known ones", () => {
    expect(() => selectFunctions(ALL_FUNCTIONS, "reconcile-rule,reconcile-rules")).toThrow(
      "FUNCTIONS names unknown function(s) reconcile-rules; known: reconcile-rule, on-deployment-ready, validate-admission, egress-group-sync, network-policy-sync",
    );
  });

  it("two functions with one name cannot be served together", () => {
    expect(() => createCombinedApp([reconcileRule, reconcileRule])).toThrow(
      'function "reconcile-rule" is listed twice',
    );
  });
});

describe("PORT", () => {
  it.each([
    [undefined, 8080],
    ["", 8080],
    ["9000", 9000],
    ["0", 0],
  ])("%j -> %i", (value, port) => {
    expect(portFrom(value)).toBe(port);
  });

  it("rejects a port that is not a port", () => {
    expect(() => portFrom("80a")).toThrow('PORT must be an integer 0-65535, got "80a"');
  });
});
