/**
 * validate-admission: AdmissionReview v1 in, allowed or denied (with the policy and the fix) out.
 * shared/admission parses, plans what to read, reads it (read-only, never a CNF; from the watch
 * cache, again consistently before a denial) and decides with the pure policies (admit).
 * Serve it over HTTPS (the API server only calls webhooks over TLS): see main.ts.
 */
import { admit, kubeAdmissionReader, type AdmissionReader } from "../../shared/admission/index.js";
import { functionDeps, type FunctionDeps } from "../../shared/runtime/deps.js";
import type { JsonFunction } from "../../shared/runtime/function.js";

export interface ValidateAdmissionDeps extends FunctionDeps {
  /** What the policies read; default: an AdmissionReader over `kube`. Tests pass one in memory. */
  readonly reader: () => AdmissionReader;
}

/**
 * The API server's own request limit (kube-apiserver --max-request-bytes, 3 MiB by default): an
 * UPDATE review carries the object and the old object, so a webhook with a lower limit would
 * refuse (and, failurePolicy Fail, block) updates the API server itself accepts, such as the
 * finalizer release of a large rule.
 */
export const ADMISSION_MAX_BODY_BYTES = 3 * 1024 * 1024;

export function createValidateAdmission(given: Partial<ValidateAdmissionDeps> = {}): JsonFunction {
  const deps = functionDeps(given);
  const reader = given.reader ?? (() => kubeAdmissionReader(deps.kube()));
  return {
    name: "validate-admission",
    kind: "json",
    maxBodyBytes: ADMISSION_MAX_BODY_BYTES,
    handle: (body, ctx) => admit(body, reader, ctx),
  };
}

export const validateAdmission: JsonFunction = createValidateAdmission();

export default validateAdmission;
