import { codeForStatus, kubeErrorFromResponse, KubeError } from "../../../shared/kube/errors.js";
import { planFinalizers } from "../../../shared/kube/plan-finalizers.js";
import { formatLabelSelector } from "../../../shared/kube/selectors.js";

describe("API failures become one KubeError with a code", () => {
  it.each([
    [404, "notFound"],
    [409, "conflict"],
    [410, "conflict"],
    [401, "forbidden"],
    [403, "forbidden"],
    [400, "invalid"],
    [422, "invalid"],
    [429, "unavailable"],
    [500, "unavailable"],
    [503, "unavailable"],
  ])("HTTP %i -> %s", (status, code) => {
    expect(codeForStatus(status)).toBe(code);
  });

  it("reads reason and message from the metav1.Status text of the answer", () => {
    const body = JSON.stringify({
      kind: "Status",
      status: "Failure",
      reason: "Conflict",
      message: 'Operation cannot be fulfilled on mwan3rules "r1": the object has been modified',
      code: 409,
    });
    const cause = new Error("HTTP-Code: 409");
    const error = kubeErrorFromResponse("add finalizer on Mwan3Rule ns1/r1", 409, body, cause);
    expect(error).toBeInstanceOf(KubeError);
    expect(error).toMatchObject({
      code: "conflict",
      status: 409,
      reason: "Conflict",
      retryable: true,
    });
    expect(error.message).toBe(
      'add finalizer on Mwan3Rule ns1/r1: 409 Conflict: Operation cannot be fulfilled on mwan3rules "r1": the object has been modified',
    );
    expect(error.cause).toBe(cause);
  });

  it("a body that is not a Status still gives a usable message", () => {
    const error = kubeErrorFromResponse("get Pod ns1/p", 502, "bad gateway", undefined);
    expect(error).toMatchObject({
      code: "unavailable",
      message: "get Pod ns1/p: 502: bad gateway",
    });
  });

  it("forbidden and invalid are not retryable", () => {
    expect(new KubeError("forbidden", "x", 403).retryable).toBe(false);
    expect(new KubeError("invalid", "x", 422).retryable).toBe(false);
  });
});

describe("planFinalizers: the list to write, or null when there is nothing to write", () => {
  const F = "rule.finalizers.sdewan.akraino.org";
  it.each([
    ["add to none", undefined, "add", [F]],
    ["add next to another writer's", ["other/f"], "add", ["other/f", F]],
    ["add when present", [F], "add", null],
    ["remove, keeping another writer's", ["other/f", F], "remove", ["other/f"]],
    ["remove the last", [F], "remove", []],
    ["remove when absent", ["other/f"], "remove", null],
  ] as const)("%s", (_title, current, change, expected) => {
    expect(planFinalizers(current, F, change)).toEqual(expected);
  });
});

describe("label selectors in every shape callers hold them (requirements in canonical order)", () => {
  it.each([
    ["a query string passes through", "app=cnf,tier!=db", "app=cnf,tier!=db"],
    ["matchLabels map", { sdewanPurpose: "base", app: "cnf" }, "app=cnf,sdewanPurpose=base"],
    [
      "metav1.LabelSelector",
      {
        matchLabels: { app: "cnf" },
        matchExpressions: [
          { key: "tier", operator: "In", values: ["a", "b"] },
          { key: "zone", operator: "NotIn", values: ["x"] },
          { key: "sdewanPurpose", operator: "Exists" },
          { key: "legacy", operator: "DoesNotExist" },
        ],
      },
      "app=cnf,!legacy,sdewanPurpose,tier in (a,b),zone notin (x)",
    ],
    ["empty selector = everything", {}, ""],
  ])("%s", (_title, input, expected) => {
    expect(formatLabelSelector(input)).toBe(expected);
  });

  it("an unknown operator is refused, not silently widened", () => {
    expect(() =>
      formatLabelSelector({ matchExpressions: [{ key: "k", operator: "Gt", values: ["1"] }] }),
    ).toThrow(
      'labelSelector.matchExpressions[0].operator: "Gt" is not a valid label selector operator',
    );
  });
});
