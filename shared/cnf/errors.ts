/**
 * Typed failures of CNF calls, each with a stable `code`, and their classification for the
 * caller: retry later (transient), retry once the missing dependency exists (dependency), or
 * never as it is (permanent). The CNF's own error text is interpreted here, once, so nothing
 * else matches on message text.
 */

export type CnfErrorCode =
  "cnf-http" | "login-failed" | "unreachable" | "timeout" | "bad-reply" | "aborted" | "bad-config";

/** What a CNF HTTP error means, derived from its status and upstream's message formats. */
export type CnfRejection =
  | "invalid" //             400/416 validation failure: the body will never be accepted as is
  | "dependency-missing" //  400 "... [Policy[x] is not definied]" (sic) or HEAD's 428
  | "in-use" //              400 "<type> <name> is used" on DELETE
  | "conflict" //            409 on a write: the CNF holds the object or a name it uses
  | "not-found" //           404
  | "not-allowed" //         405 (e.g. PUT on the CNFService collection)
  | "unauthorized" //        403 even after a fresh login
  | "busy" //                408 / 429
  | "server-error" //        5xx
  | "read-failed"; //        400 or another 4xx on a GET: the CNF failed to read, nothing of ours was refused

export type CnfFailureClass = "transient" | "dependency" | "permanent";

/** Where and what: never holds credentials, request bodies or cookies. */
export interface CnfCallSite {
  /** Base URL of the CNF, e.g. http://10.0.0.5:80/cgi-bin/luci/ */
  readonly endpoint: string;
  /** e.g. "GET sdewan/mwan3/v1/policies/balance1" */
  readonly operation: string;
  /** The HTTP method, when known: a GET sends no body, so a 4xx to it never refuses ours. */
  readonly method?: string;
}

export abstract class CnfError extends Error {
  abstract readonly code: CnfErrorCode;
  readonly endpoint: string;
  readonly operation: string;
  /** How many attempts were made, set once the in-process retry gave up. */
  attempts = 1;

  protected constructor(site: CnfCallSite, detail: string, options?: ErrorOptions) {
    super(`CNF ${site.endpoint} ${site.operation}: ${detail}`, options);
    this.name = new.target.name;
    this.endpoint = site.endpoint;
    this.operation = site.operation;
  }
}

// Upstream answers a conflicting create with an empty message: say what it means.
const CONFLICT_EXPLAINED =
  " (conflict: the CNF already holds an object or a section name this one uses, e.g. an ipsec" +
  " connection name another rule gives; rename one of them)";

/** The CNF answered with an error status; `cnfMessage` is the text of its `{"message": ...}` body. */
export class CnfHttpError extends CnfError {
  readonly code = "cnf-http";
  readonly rejection: CnfRejection;

  constructor(
    site: CnfCallSite,
    readonly status: number,
    readonly cnfMessage: string,
  ) {
    const rejection = rejectionOf(status, cnfMessage, site.method);
    const text = cnfMessage === "" ? "" : ` ${cnfMessage}`;
    super(site, `HTTP ${status}${text}${rejection === "conflict" ? CONFLICT_EXPLAINED : ""}`);
    this.rejection = rejection;
  }
}

/** The login POST did not answer 302 with a sysauth cookie (wrong credentials, or a broken CNF). */
export class CnfLoginError extends CnfError {
  readonly code = "login-failed";
  constructor(
    site: CnfCallSite,
    readonly status: number,
    detail: string,
  ) {
    super(site, `login failed: ${detail}`);
  }
}

/** No connection, or the connection was refused or reset. */
export class CnfUnreachableError extends CnfError {
  readonly code = "unreachable";
  /** True when no byte of the request can have reached the CNF (connection refused). */
  readonly notSent: boolean;
  constructor(
    site: CnfCallSite,
    readonly systemCode: string,
    cause: unknown,
  ) {
    super(site, `unreachable (${systemCode})`, { cause });
    this.notSent = systemCode === "ECONNREFUSED";
  }
}

export class CnfTimeoutError extends CnfError {
  readonly code = "timeout";
  constructor(
    site: CnfCallSite,
    readonly timeoutMs: number,
    /** A write that was sent and not answered: the CNF may still apply it. */
    readonly inDoubt = false,
  ) {
    super(
      site,
      `no reply within ${timeoutMs} ms${inDoubt ? " (the write may still be applied; not re-sent)" : ""}`,
    );
  }
}

/** The CNF answered success with something that is not what the API returns. */
export class CnfBadReplyError extends CnfError {
  readonly code = "bad-reply";
  constructor(
    site: CnfCallSite,
    readonly status: number,
    detail: string,
  ) {
    super(site, `bad reply (HTTP ${status}): ${detail}`);
  }
}

/** The caller's signal aborted the call (shutdown, abandoned event). */
export class CnfAbortedError extends CnfError {
  readonly code = "aborted";
  constructor(site: CnfCallSite) {
    super(site, "aborted by the caller");
  }
}

/** Endpoint or credential configuration that cannot work (bad annotation, unreadable Secret file). */
export class CnfConfigError extends Error {
  readonly code = "bad-config";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "CnfConfigError";
  }
}

// Upstream formats: "Field[policy] checked failed: invalid policy [Policy[x] is not definied]",
// nested for list items; "policy x is used" on DELETE.
const MISSING_REFERENCE = /\b(?:Policy|Zone|Proposal|Interface)\[[^\]]*\] is not defin(?:i)?ed/;
const IN_USE = /^\w+ \S+ is used$/;

function rejectionOf(status: number, message: string, method: string | undefined): CnfRejection {
  if (status >= 500) return "server-error";
  // A read has no body to refuse: a 400 (or 416...) to it is the CNF failing to read its own
  // configuration, which may pass; classing it "invalid" would stall the rule for good.
  if (method === "GET" && ![403, 404, 408, 429].includes(status)) return "read-failed";
  if (status === 428) return "dependency-missing";
  if (status === 400 && MISSING_REFERENCE.test(message)) return "dependency-missing";
  if (status === 400 && IN_USE.test(message)) return "in-use";
  const byStatus: Readonly<Record<number, CnfRejection>> = {
    403: "unauthorized",
    404: "not-found",
    405: "not-allowed",
    408: "busy",
    409: "conflict",
    429: "busy",
  };
  return byStatus[status] ?? "invalid";
}

/**
 * transient: try the whole event again later (CNF down, slow, confused, or refusing our login:
 *   the operator fixes the Secret and the next delivery heals);
 * dependency: the CNF lacks something this object refers to, or something still uses it;
 *   retry later, ordering heals;
 * permanent: the CNF will never accept this object as it is (validation, or a 409: a name it
 *   already holds, such as another rule's ipsec connection name, which no retry frees; a
 *   concurrent create of the same object is told apart first, see apply-pod's
 *   heldAfterConflict), or the CNF endpoint configuration is unusable.
 * Unknown errors count as transient.
 */
export function classifyCnfFailure(error: unknown): CnfFailureClass {
  if (error instanceof CnfConfigError) return "permanent";
  if (!(error instanceof CnfHttpError)) return "transient";
  switch (error.rejection) {
    case "dependency-missing":
    case "in-use":
      return "dependency";
    case "invalid":
    case "conflict":
    case "not-allowed":
    case "not-found":
      return "permanent";
    default:
      return "transient";
  }
}

export function isTransient(error: unknown): boolean {
  return classifyCnfFailure(error) === "transient";
}

/**
 * Whether repeating the same request at once can help, and is safe. POST is repeated only when
 * the request never left (a repeated create after a lost reply makes a duplicate: the CNF does
 * not detect duplicate firewall objects).
 */
export function isRetryableNow(error: unknown, idempotent: boolean): boolean {
  if (error instanceof CnfUnreachableError) return idempotent || error.notSent;
  if (!idempotent) return false;
  if (error instanceof CnfTimeoutError || error instanceof CnfBadReplyError) return true;
  if (error instanceof CnfHttpError || error instanceof CnfLoginError) {
    return error.status >= 500 || error.status === 429;
  }
  return false;
}

/**
 * The reason label of a failed CNF call in sdewan_cnf_failures_total: the rejection for an HTTP
 * error (invalid, server-error, ...), else the error's code (unreachable, timeout, login-failed,
 * bad-reply). Undefined for what is no failure of the CNF: an abort, or a 404 (an answer: absent).
 */
export function cnfFailureReason(error: CnfError): string | undefined {
  if (error instanceof CnfHttpError)
    return error.rejection === "not-found" ? undefined : error.rejection;
  if (error.code === "aborted") return undefined;
  return error.code;
}

export function isCnfError(error: unknown): error is CnfError {
  return error instanceof CnfError;
}
