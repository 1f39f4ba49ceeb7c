/**
 * What a policy decides, and the AdmissionReview v1 response built from it. A denial always names
 * its policy and says how to fix the request, because that text is all a `kubectl apply` user sees.
 */
import { ADMISSION_API_VERSION } from "./review.js";

/** Stable policy names: they appear in denial messages, logs and metrics. */
export const POLICY = {
  bucketPermission: "bucket-permission",
  immutablePurpose: "immutable-purpose",
  ruleSpec: "rule-spec",
  ruleDependencies: "rule-dependencies",
  cnfNetworks: "cnf-networks",
  cnfUniqueNames: "cnf-unique-names",
  secretAccess: "secret-access",
  oneCnfPerPurpose: "one-cnf-per-purpose",
  supportedKinds: "supported-kinds",
  clusterLinkSpec: "clusterlink-spec",
} as const;

export type PolicyName = (typeof POLICY)[keyof typeof POLICY];

export interface Denial {
  readonly allowed: false;
  readonly policy: PolicyName;
  /** HTTP-style status the API server returns to the client (403 permission, 409 conflict, 422 invalid, 400 unsupported). */
  readonly code: 400 | 403 | 409 | 422;
  /** What is wrong, as a sentence without a trailing period. */
  readonly reason: string;
  /** How to fix the request, as a sentence without a trailing period. */
  readonly fix: string;
  readonly warnings: readonly string[];
  /** For the operator's log only (never sent to the requester), e.g. an invalid Role annotation. */
  readonly notes?: readonly string[];
}

export interface Allowance {
  readonly allowed: true;
  readonly warnings: readonly string[];
  readonly notes?: readonly string[];
}

export type Verdict = Allowance | Denial;

export const allow = (warnings: readonly string[] = []): Allowance => ({ allowed: true, warnings });

export function deny(
  policy: PolicyName,
  code: Denial["code"],
  reason: string,
  fix: string,
): Denial {
  return { allowed: false, policy, code, reason, fix, warnings: [] };
}

/** The one message format users see: `sdewan policy "<name>" denied this request: <reason>. To fix: <fix>.` */
export function denialMessage(denial: Denial): string {
  return `sdewan policy "${denial.policy}" denied this request: ${denial.reason}. To fix: ${denial.fix}.`;
}

/**
 * The API server keeps a request's warnings up to 4096 runes in total; past that it cuts each to
 * 256 runes and drops the rest (k8s.io/apiserver pkg/endpoints/filters/warning.go). No warning is
 * longer than 256 here, so none is cut even then.
 */
export const WARNING_TOTAL_RUNES = 4096;
const WARNING_LIMIT = 256;

/** The runes `warnings` take of WARNING_TOTAL_RUNES once clipped as they are sent. */
export function warningRunes(warnings: readonly string[]): number {
  return warnings.reduce((n, w) => n + [...clipWarning(w)].length, 0);
}

export function clipWarning(warning: string): string {
  return warning.length <= WARNING_LIMIT ? warning : `${warning.slice(0, WARNING_LIMIT - 1)}…`;
}

export interface AdmissionResponseBody {
  readonly apiVersion: typeof ADMISSION_API_VERSION;
  readonly kind: "AdmissionReview";
  readonly response: {
    readonly uid: string;
    readonly allowed: boolean;
    readonly status?: { readonly code: number; readonly reason?: string; readonly message: string };
    readonly warnings?: readonly string[];
  };
}

const STATUS_REASON: Record<Denial["code"], string> = {
  400: "BadRequest",
  403: "Forbidden",
  409: "Conflict",
  422: "Invalid",
};

/** Builds the AdmissionReview response for `uid` (copied from the request, as the API server requires). */
export function buildAdmissionResponse(uid: string, verdict: Verdict): AdmissionResponseBody {
  const warnings = verdict.warnings.map(clipWarning);
  const withWarnings = warnings.length > 0 ? { warnings } : {};
  if (verdict.allowed) {
    return {
      apiVersion: ADMISSION_API_VERSION,
      kind: "AdmissionReview",
      response: { uid, allowed: true, ...withWarnings },
    };
  }
  return {
    apiVersion: ADMISSION_API_VERSION,
    kind: "AdmissionReview",
    response: {
      uid,
      allowed: false,
      status: {
        code: verdict.code,
        reason: STATUS_REASON[verdict.code],
        message: denialMessage(verdict),
      },
      ...withWarnings,
    },
  };
}
