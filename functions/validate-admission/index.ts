/**
 * validate-admission: AdmissionReview (not a CloudEvent) -> allowed or denied with a reason.
 * Stub until the admission issue lands: answers 501. Serve it over HTTPS with
 * startServer(app, runtime, { port, tls: { certFile, keyFile } }).
 */
import type { JsonFunction } from "../../shared/runtime/function.js";
import { notImplementedJsonFunction } from "../../shared/runtime/not-implemented.js";

export const validateAdmission: JsonFunction = notImplementedJsonFunction(
  "validate-admission",
  "not implemented yet: admission policies land with the admission issue",
);

export default validateAdmission;
