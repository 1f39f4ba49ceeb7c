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
