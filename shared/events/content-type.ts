/**
 * Reads a Content-Type header into a media type and charset, so `application/cloudevents+json;
 * charset=UTF-8` and `application/cloudevents+json` mean the same thing to the parser.
 */

export interface MediaType {
  /** Lower-case `type/subtype` without parameters; "" when the header is absent. */
  readonly essence: string;
  /** Lower-case charset parameter, if given. */
  readonly charset?: string;
}

export function parseContentType(header: string | undefined): MediaType {
  if (header === undefined) return { essence: "" };
  const [essence = "", ...parameters] = header.split(";");
  const charset = parameters
    .map((parameter) => parameter.trim().split("="))
    .find(([key]) => key?.trim().toLowerCase() === "charset")?.[1];
  const base = { essence: essence.trim().toLowerCase() };
  return charset === undefined
    ? base
    : { ...base, charset: charset.trim().replace(/^"|"$/g, "").toLowerCase() };
}

/** `application/json` or any `+json` structured syntax suffix. */
export const isJsonMediaType = (essence: string): boolean =>
  essence === "application/json" || /^application\/[\w.+-]+\+json$/.test(essence);

/** JSON is UTF-8 (RFC 8259); US-ASCII is a subset of it. Anything else we refuse rather than misread. */
export const isUtf8Charset = (charset: string | undefined): boolean =>
  charset === undefined || charset === "utf-8" || charset === "utf8" || charset === "us-ascii";
