import { parseAdmissionReview } from "../../../shared/admission/review.js";
import {
  buildAdmissionResponse,
  deny,
  denialMessage,
  POLICY,
  allow,
} from "../../../shared/admission/verdict.js";
import { objectOf, reviewBody } from "./fixtures.js";

const valid = reviewBody({ operation: "CREATE", kind: "Mwan3Rule", object: objectOf("r1") });

function withRequest(patch: Record<string, unknown>): Record<string, unknown> {
  return { ...valid, request: { ...(valid.request as Record<string, unknown>), ...patch } };
}

describe("parseAdmissionReview", () => {
  it("accepts an AdmissionReview v1 request and defaults missing user groups", () => {
    const parsed = parseAdmissionReview(withRequest({ userInfo: { username: "bob" } }));
    expect(parsed.ok && parsed.request.userInfo).toEqual({ username: "bob", groups: [] });
  });

  it.each([
    ["a non-object body", "hello", "(root)"],
    ["the v1beta1 apiVersion", { ...valid, apiVersion: "admission.k8s.io/v1beta1" }, "apiVersion"],
    [
      "a missing request",
      { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview" },
      "request",
    ],
    ["an empty uid", withRequest({ uid: "" }), "request.uid"],
    ["an unknown operation", withRequest({ operation: "PATCH" }), "request.operation"],
    [
      "a kind without kind",
      withRequest({ kind: { group: "", version: "v1" } }),
      "request.kind.kind",
    ],
    ["CREATE without object", withRequest({ object: null }), "request.object: required for CREATE"],
    [
      "UPDATE without oldObject",
      withRequest({ operation: "UPDATE" }),
      "request.oldObject: required for UPDATE",
    ],
    [
      "labels that are not strings",
      withRequest({ object: { metadata: { name: "r1", labels: { a: 1 } } } }),
      "request.object.metadata.labels.a",
    ],
  ])("rejects %s naming the field (%s)", (_title, body, field) => {
    const parsed = parseAdmissionReview(body);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.message).toContain(field);
  });

  it("keeps the uid of a malformed review when it is readable", () => {
    const parsed = parseAdmissionReview(withRequest({ operation: "PATCH" }));
    expect(!parsed.ok && parsed.uid).toBe("0b5f2a7e-0000-4000-8000-000000000001");
  });
});

describe("buildAdmissionResponse", () => {
  it("copies the uid and answers allowed with warnings", () => {
    expect(buildAdmissionResponse("u-1", allow(["mind the gap"]))).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "u-1", allowed: true, warnings: ["mind the gap"] },
    });
  });

  it("omits warnings when there are none", () => {
    expect(buildAdmissionResponse("u-1", allow()).response).toEqual({ uid: "u-1", allowed: true });
  });

  it("puts the code and a message naming the policy and the fix on a denial", () => {
    const denial = deny(POLICY.ruleSpec, 422, "spec.proto is wrong", "use tcp");
    const { response } = buildAdmissionResponse("u-2", denial);
    expect(response).toEqual({
      uid: "u-2",
      allowed: false,
      status: { code: 422, reason: "Invalid", message: denialMessage(denial) },
    });
    expect(response.status?.message).toBe(
      'sdewan policy "rule-spec" denied this request: spec.proto is wrong. To fix: use tcp.',
    );
  });

  it("clips warnings the API server would truncate", () => {
    const { response } = buildAdmissionResponse("u", allow(["x".repeat(400)]));
    expect(response.warnings?.[0]).toHaveLength(256);
  });
});
