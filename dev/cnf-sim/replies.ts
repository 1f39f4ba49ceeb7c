/** The reply shapes of the upstream LuCI REST handlers (reference 2.2, "Error body format"). */

export interface SimReply {
  readonly status: number;
  readonly body: string;
  readonly contentType: string;
  /** LuCI puts the error message into the HTTP status line as the reason phrase. */
  readonly reason?: string;
}

/**
 * `{"message":"<text>"}` as text/plain for every error code. Upstream builds this by string
 * concatenation without JSON escaping, so a message containing a quote is not valid JSON; the
 * simulator keeps that, and clients must cope.
 */
export function errorReply(status: number, message: string): SimReply {
  return {
    status,
    body: `{"message":"${message}"}`,
    contentType: "text/plain",
    reason: message,
  };
}

export function objectReply(status: number, value: unknown): SimReply {
  return { status, body: JSON.stringify(value), contentType: "application/json" };
}

/** DELETE and the service endpoint answer 200 with a text/plain success message. */
export function successReply(): SimReply {
  return { status: 200, body: '{"message":"success"}', contentType: "text/plain" };
}

export const badUri = (): SimReply => errorReply(400, "Bad request URI");
export const methodNotAllowed = (): SimReply => errorReply(405, "Method Not Allowed");
/** What LuCI's dispatcher answers for a path with no node. */
export const pageNotFound = (): SimReply => ({
  status: 404,
  body: "Page not found",
  contentType: "text/plain",
  reason: "Not Found",
});

/** Parses a request body the way the REST handlers do; a failure is the 400 reply to send. */
export function parseBody(
  body: string,
): { ok: true; value: unknown } | { ok: false; reply: SimReply } {
  try {
    return { ok: true, value: JSON.parse(body) as unknown };
  } catch (error) {
    const detail = error instanceof Error ? error.message : "invalid JSON";
    return { ok: false, reply: errorReply(400, `Body parse error: ${detail}`) };
  }
}
