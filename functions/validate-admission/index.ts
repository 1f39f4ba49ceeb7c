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

export function createValidateAdmission(given: Partial<ValidateAdmissionDeps> = {}): JsonFunction {
  const deps = functionDeps(given);
  const reader = given.reader ?? (() => kubeAdmissionReader(deps.kube()));
  return {
    name: "validate-admission",
    kind: "json",
    handle: (body, ctx) => admit(body, reader, ctx),
  };
}

export const validateAdmission: JsonFunction = createValidateAdmission();

export default validateAdmission;
