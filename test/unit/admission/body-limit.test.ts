// Issue 17 item 1: the webhook refused AdmissionReviews over the runtime's 1 MiB event limit, so a
// rule made before the size limits (a 560 KB shared_ca) could never have its finalizer removed:
// the UPDATE review carries the object and the old object. The webhook now takes what the API
// server itself takes (3 MiB), whatever runtime serves it.
import request from "supertest";
import {
  ADMISSION_MAX_BODY_BYTES,
  createValidateAdmission,
} from "../../../functions/validate-admission/index.js";
import type { AdmissionReader } from "../../../shared/admission/observe.js";
import type { AdmissionResponseBody } from "../../../shared/admission/verdict.js";
import { DEFAULT_MAX_BODY_BYTES } from "../../../shared/events/parse.js";
import { Runtime, createFunctionApp, createLogger } from "../../../shared/runtime/index.js";
import { objectOf, reviewBody } from "./fixtures.js";

const none = () => Promise.resolve([]);
const reader: AdmissionReader = {
  listCnfDeployments: none,
  getRule: () => Promise.resolve(null),
  listRules: none,
  listRoleBindings: none,
  listClusterRoleBindings: none,
  getRole: () => Promise.resolve(null),
  mayGetSecret: () => Promise.resolve(false),
};

/** The webhook behind a runtime with the default (1 MiB) event limit, as the combined server runs it. */
const app = () =>
  createFunctionApp(
    createValidateAdmission({ reader: () => reader }),
    new Runtime({ logger: createLogger({ level: "silent" }) }),
  );

/** An UPDATE that only drops the finalizer of an IpsecHost whose shared_ca is `caBytes` long. */
function finalizerRelease(caBytes: number): string {
  const spec = {
    remote: "10.10.10.1",
    authentication_method: "pubkey",
    local_public_cert: "P",
    local_private_cert: "K",
    shared_ca: "C".repeat(caBytes),
    crypto_proposal: ["p1"],
    connections: [],
  };
  const labels = { sdewanPurpose: "cnf-a" };
  const old = objectOf("host1", labels, spec, { deleting: true });
  const object = objectOf("host1", labels, spec, { deleting: true });
  old.metadata.finalizers = ["ipsec.host.finalizers.sdewan.akraino.org"];
  return JSON.stringify(
    reviewBody({
      operation: "UPDATE",
      kind: "IpsecHost",
      resource: "ipsechosts",
      object,
      oldObject: old,
    }),
  );
}

describe("validate-admission's body limit", () => {
  it("is the API server's 3 MiB, above the runtime's 1 MiB event limit", () => {
    expect(ADMISSION_MAX_BODY_BYTES).toBe(3 * 1024 * 1024);
    expect(DEFAULT_MAX_BODY_BYTES).toBeLessThan(ADMISSION_MAX_BODY_BYTES);
  });

  it("answers the finalizer release of a rule with a 560 KB field (a 1.1 MB review)", async () => {
    const body = finalizerRelease(560 * 1024);
    expect(body.length).toBeGreaterThan(DEFAULT_MAX_BODY_BYTES);
    const res = await request(app())
      .post("/")
      .set("content-type", "application/json")
      .send(body)
      .expect(200);
    expect((res.body as AdmissionResponseBody).response.allowed).toBe(true);
  });

  it("answers a review just under 3 MiB, and refuses one over it with 413 naming the limit", async () => {
    const under = finalizerRelease(Math.floor(ADMISSION_MAX_BODY_BYTES / 2) - 4096);
    expect(under.length).toBeLessThan(ADMISSION_MAX_BODY_BYTES);
    await request(app()).post("/").set("content-type", "application/json").send(under).expect(200);

    const over = finalizerRelease(Math.ceil(ADMISSION_MAX_BODY_BYTES / 2));
    const res = await request(app())
      .post("/")
      .set("content-type", "application/json")
      .send(over)
      .expect(413);
    expect(JSON.stringify(res.body)).toContain(String(ADMISSION_MAX_BODY_BYTES));
  });
});
