import {
  CnfBadReplyError,
  CnfConfigError,
  CnfHttpError,
  CnfLoginError,
  CnfTimeoutError,
  CnfUnreachableError,
  classifyCnfFailure,
  isRetryableNow,
  type CnfFailureClass,
  type CnfRejection,
} from "../../../shared/cnf/index.js";

const site = {
  endpoint: "http://127.0.0.2:80/cgi-bin/luci/",
  operation: "PUT sdewan/mwan3/v1/rules/r1",
};

describe("CnfHttpError: what the CNF's status and message mean", () => {
  it.each<[number, string, CnfRejection, CnfFailureClass]>([
    [400, "Field[policy] checked failed: invalid policy [Policy[balance1] is not definied]", "dependency-missing", "dependency"],
    [400, "Field[members] checked failed: Incorrect policy member [Field[interface] checked failed: invalid interface [Interface[net9] is not definied]]", "dependency-missing", "dependency"],
    [400, "Field[src] checked failed: invalid src [Zone[wan0] is not definied]", "dependency-missing", "dependency"],
    [400, "Field[connections] checked failed: invalid connection [Field[crypto_proposal] checked failed: invalid crypto_proposal [Proposal[p1] is not definied]]", "dependency-missing", "dependency"],
    [428, "428:Proposal[p1] is not found", "dependency-missing", "dependency"],
    [400, "policy balance1 is used", "in-use", "dependency"],
    [400, "zone wan0 is used", "in-use", "dependency"],
    [400, "Field[name] checked failed: invalid zone name [The length of Name shall not exceed 11 characters]", "invalid", "permanent"],
    [400, "Field[members] checked failed: Incorrect policy member [Field[metric] checked failed: metric should be greater than 0]", "invalid", "permanent"],
    [400, "Bad request URI", "invalid", "permanent"],
    [416, "Invalid Port Range", "invalid", "permanent"],
    [405, "Method Not Allowed", "not-allowed", "permanent"],
    [409, "", "conflict", "permanent"],
    [408, "Timeout: waiting for service ready...", "busy", "transient"],
    [403, "", "unauthorized", "transient"],
    [500, "Runtime error", "server-error", "transient"],
    [503, "", "server-error", "transient"],
  ])("HTTP %i %j -> %s, %s", (status, message, rejection, failureClass) => {
    const error = new CnfHttpError(site, status, message);
    expect(error.rejection).toBe(rejection);
    expect(classifyCnfFailure(error)).toBe(failureClass);
  }); // prettier-ignore
});

describe("a 4xx answer to a GET (issue 17 item 6)", () => {
  const read = { ...site, operation: "GET sdewan/mwan3/v1/rules", method: "GET" };
  it.each<[number, string, CnfRejection, CnfFailureClass]>([
    [400, "Bad request URI", "read-failed", "transient"],
    [400, "Field[policy] checked failed: invalid policy", "read-failed", "transient"],
    [416, "", "read-failed", "transient"],
    [404, "Cannot find rule[r1]", "not-found", "permanent"],
    [403, "", "unauthorized", "transient"],
    [500, "", "server-error", "transient"],
  ])("GET answered %i %j -> %s, %s: the CNF failed to read, nothing of ours was refused", (status, message, rejection, failureClass) => {
    const error = new CnfHttpError(read, status, message);
    expect(error.rejection).toBe(rejection);
    expect(classifyCnfFailure(error)).toBe(failureClass);
  }); // prettier-ignore

  it("the same 400 to a PUT is still a refusal of the body", () => {
    const write = { ...site, method: "PUT" };
    expect(classifyCnfFailure(new CnfHttpError(write, 400, "Bad request URI"))).toBe("permanent");
  });
});

describe("classifyCnfFailure for the other error kinds", () => {
  it.each<[string, unknown, CnfFailureClass]>([
    ["unreachable", new CnfUnreachableError(site, "ECONNREFUSED", null), "transient"],
    ["timeout", new CnfTimeoutError(site, 100), "transient"],
    ["bad reply", new CnfBadReplyError(site, 200, "not JSON"), "transient"],
    ["refused login", new CnfLoginError(site, 403, "HTTP 403"), "transient"],
    ["bad endpoint configuration", new CnfConfigError("CNF_PORT must be ..."), "permanent"],
    ["an unknown error", new Error("surprise"), "transient"],
  ])("%s -> %s", (_case, error, failureClass) => {
    expect(classifyCnfFailure(error)).toBe(failureClass);
  });
});

describe("isRetryableNow: what the client repeats in-process", () => {
  it.each<[string, unknown, boolean, boolean]>([
    ["5xx", new CnfHttpError(site, 502, ""), true, false],
    ["429", new CnfHttpError(site, 429, ""), true, false],
    ["400", new CnfHttpError(site, 400, "x"), false, false],
    ["409", new CnfHttpError(site, 409, ""), false, false],
    ["timeout", new CnfTimeoutError(site, 10), true, false],
    ["bad reply", new CnfBadReplyError(site, 200, "x"), true, false],
    [
      "connection refused (nothing sent)",
      new CnfUnreachableError(site, "ECONNREFUSED", null),
      true,
      true,
    ],
    [
      "connection reset (maybe sent)",
      new CnfUnreachableError(site, "ECONNRESET", null),
      true,
      false,
    ],
    ["login refused", new CnfLoginError(site, 403, ""), false, false],
    ["login 5xx", new CnfLoginError(site, 500, ""), true, false],
  ])("%s: idempotent %s, POST %s", (_case, error, idempotent, post) => {
    expect(isRetryableNow(error, true)).toBe(idempotent);
    expect(isRetryableNow(error, false)).toBe(post);
  });
});
