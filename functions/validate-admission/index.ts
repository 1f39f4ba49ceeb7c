/**
 * validate-admission: AdmissionReview v1 in, allowed or denied (with the policy and the fix) out.
 * shared/admission parses, plans what to read, reads it (read-only; from the watch cache, again
 * consistently before a denial) and decides with the pure policies (admit). An allowed dry run
 * of a rule also gets the plan of the change as warnings (shared/sync's preview, docs/plan.md):
 * the one case where the webhook reads a CNF, with GETs only.
 * Serve it over HTTPS (the API server only calls webhooks over TLS): see main.ts.
 */
import {
  admit,
  kubeAdmissionReader,
  type AdmissionReader,
  type DryRunPlanner,
} from "../../shared/admission/index.js";
import { functionDeps, type FunctionDeps } from "../../shared/runtime/deps.js";
import type { JsonFunction } from "../../shared/runtime/function.js";
import { cnfCredentialsSecret, previewReviewWarnings } from "../../shared/sync/index.js";

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

/** A dry run's plan, made with the webhook's own identity (`kube`) and settings (`env`). */
function dryRunPlanner(deps: FunctionDeps): DryRunPlanner {
  const credentialsSecret = cnfCredentialsSecret(deps.env);
  return {
    credentialsSecret,
    plan: (request, access, budget, ctx) =>
      previewReviewWarnings(
        {
          kube: deps.kube().withCalls(ctx.calls),
          env: deps.env,
          calls: ctx.calls,
          log: ctx.log,
          signal: ctx.signal,
          now: () => deps.now().toISOString(),
          credentialsSecret,
        },
        request,
        access,
        budget,
      ),
  };
}

export function createValidateAdmission(given: Partial<ValidateAdmissionDeps> = {}): JsonFunction {
  const deps = functionDeps(given);
  const reader = given.reader ?? (() => kubeAdmissionReader(deps.kube()));
  const planner = dryRunPlanner(deps);
  return {
    name: "validate-admission",
    kind: "json",
    maxBodyBytes: ADMISSION_MAX_BODY_BYTES,
    handle: (body, ctx) => admit(body, { ...ctx, reader, planner }),
  };
}

export const validateAdmission: JsonFunction = createValidateAdmission();

export default validateAdmission;
