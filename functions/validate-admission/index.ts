/**
 * validate-admission: AdmissionReview v1 in, allowed or denied (with the policy and the fix) out.
 * Parse, plan what to read, read it (read-only, never a CNF; from the watch cache, again
 * consistently before a denial), decide with the pure policies.
 * Serve it over HTTPS (the API server only calls webhooks over TLS): see main.ts.
 */
import {
  EMPTY_SNAPSHOT,
  buildAdmissionResponse,
  parseAdmissionReview,
  planAdmission,
  planObservation,
  ruleKinds,
} from "../../shared/admission/index.js";
import {
  countingReader,
  decideAdmission,
  readsNothing,
  type AdmissionReader,
} from "../../shared/admission/observe.js";
import type { JsonFunction } from "../../shared/runtime/function.js";

/** The function with its own reader: tests pass one built from a test user's KubeConfig. */
export function createValidateAdmission(
  reader: () => AdmissionReader | Promise<AdmissionReader>,
): JsonFunction {
  return {
    name: "validate-admission",
    kind: "json",
    async handle(body, ctx) {
      const parsed = parseAdmissionReview(body);
      if (!parsed.ok) {
        ctx.log.warn({ code: parsed.code, uid: parsed.uid }, parsed.message);
        return { status: 400, body: { error: parsed.code, message: parsed.message } };
      }
      const { request } = parsed;
      const plan = planObservation(request);
      const verdict = readsNothing(plan)
        ? planAdmission(request, EMPTY_SNAPSHOT)
        : await decideAdmission(request, plan, countingReader(await reader(), ctx.calls), (kind) =>
            ruleKinds.find(kind),
          );
      const fields = {
        uid: request.uid,
        operation: request.operation,
        object: `${request.kind.kind} ${request.namespace}/${request.name}`,
        user: request.userInfo.username,
        allowed: verdict.allowed,
        ...(verdict.allowed ? {} : { policy: verdict.policy, code: verdict.code }),
        ...(verdict.notes && verdict.notes.length > 0 ? { notes: verdict.notes } : {}),
      };
      if (verdict.allowed) ctx.log.info(fields, "admitted");
      else ctx.log.info(fields, `denied by ${verdict.policy}: ${verdict.reason}`);
      return { status: 200, body: buildAdmissionResponse(request.uid, verdict) };
    },
  };
}

let defaultReader: Promise<AdmissionReader> | undefined;

/**
 * Reads with the in-cluster (or KUBECONFIG) identity, created on first use; the client is loaded
 * lazily so importing this module (the combined server's list, unit tests) stays cheap.
 */
export const validateAdmission: JsonFunction = createValidateAdmission(() => {
  defaultReader ??= import("./reader.js")
    .then((m) => m.clusterAdmissionReader())
    .catch((error: unknown) => {
      defaultReader = undefined; // try again on the next review
      throw error;
    });
  return defaultReader;
});

export default validateAdmission;
