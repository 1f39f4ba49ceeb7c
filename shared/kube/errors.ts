/**
 * The one error type of API access. An answer that is not 2xx and a network failure become a
 * KubeError once, at this edge; callers branch on `code`, never on message text.
 */

export type KubeErrorCode =
  /** 404: the object (or its namespace) does not exist. */
  | "notFound"
  /** 409 (stale resourceVersion, AlreadyExists) or 410 (expired): re-read and try again. */
  | "conflict"
  /** 401 / 403: RBAC says no. */
  | "forbidden"
  /** 400 / 422 and other 4xx: the request itself is wrong; retrying will not help. */
  | "invalid"
  /** 429, 5xx, timeouts, refused connections: try again later. */
  | "unavailable"
  /** The API answered, but the object does not match our schema. */
  | "unexpected";

export class KubeError extends Error {
  override readonly name = "KubeError";

  constructor(
    readonly code: KubeErrorCode,
    message: string,
    /** HTTP status, when the API server answered. */
    readonly status?: number,
    /** metav1.Status reason, e.g. "AlreadyExists", "Conflict", "NotFound". */
    readonly reason?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** Whether the same request may succeed later (after a re-read for a conflict). */
  get retryable(): boolean {
    return this.code === "conflict" || this.code === "unavailable";
  }
}

/** The API server answered with a status that is not 2xx; `body` is its text (a metav1.Status). */
export class ApiStatusError extends Error {
  override readonly name = "ApiStatusError";
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`HTTP ${status}`);
  }
}

export const isKubeError = (error: unknown, code?: KubeErrorCode): error is KubeError =>
  error instanceof KubeError && (code === undefined || error.code === code);

export function codeForStatus(status: number): KubeErrorCode {
  if (status === 404) return "notFound";
  if (status === 409 || status === 410) return "conflict";
  if (status === 401 || status === 403) return "forbidden";
  if (status === 429 || status >= 500) return "unavailable";
  return "invalid";
}

/** The API server's metav1.Status body, as the text of the answer. */
export function readStatusBody(body: unknown): { reason?: string; message?: string } {
  let parsed: unknown = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      return body.trim() === "" ? {} : { message: body.trim() };
    }
  }
  if (typeof parsed !== "object" || parsed === null) return {};
  const { reason, message } = parsed as { reason?: unknown; message?: unknown };
  return {
    ...(typeof reason === "string" ? { reason } : {}),
    ...(typeof message === "string" ? { message } : {}),
  };
}

/** e.g. "get Pod ns1/p1" — what the failed request was, for the message. */
export function kubeErrorFromResponse(
  operation: string,
  status: number,
  body: unknown,
  cause: unknown,
): KubeError {
  const { reason, message } = readStatusBody(body);
  return new KubeError(
    codeForStatus(status),
    `${operation}: ${status}${reason ? ` ${reason}` : ""}${message ? `: ${message}` : ""}`,
    status,
    reason,
    { cause },
  );
}

/**
 * What the transport threw (an ApiStatusError, a socket error, a timeout) as a KubeError naming
 * `operation` (e.g. "get Pod ns1/p1"): 410, 429, 5xx and network failures the same way for every
 * caller (the KubeClient, the connector's list and watch).
 */
export function toKubeError(operation: string, error: unknown): KubeError {
  if (error instanceof KubeError) return error;
  // No cause: the status, reason and message are all there is to say about an answer.
  if (error instanceof ApiStatusError) {
    return kubeErrorFromResponse(operation, error.status, error.body, undefined);
  }
  const detail = describeFailure(error);
  return new KubeError("unavailable", `${operation}: ${detail}`, undefined, undefined, {
    cause: error,
  });
}

/**
 * A socket error's message already names the address ("connect ECONNREFUSED 127.0.0.1:6443"); a
 * timeout adds its cause. Structural, not instanceof: node's errors may come from another realm.
 */
function describeFailure(error: unknown): string {
  const messageOf = (value: unknown): string | undefined =>
    typeof value === "object" && value !== null && "message" in value
      ? String(value.message)
      : undefined;
  const message = messageOf(error);
  if (message === undefined) return String(error);
  const cause = messageOf((error as { cause?: unknown }).cause);
  return cause === undefined ? message : `${message}: ${cause}`;
}
