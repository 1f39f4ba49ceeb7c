/**
 * Reading CNF replies: JSON parsing, the generic zod shapes every collection shares (an object
 * has a string `name`; a collection GET is `{"<collection>": [...]}`), optional per-collection
 * schemas from the registry, and the message of an error body.
 */
import * as z from "zod";
import { CnfBadReplyError, type CnfCallSite } from "./errors.js";
import type { HttpExchange } from "./transport.js";

type ReplyObject = Readonly<Record<string, unknown>> & { readonly name: string };

/**
 * Takes key material out of a text the CNF sent (KeyMaterial.redactEcho in shared/core/redact):
 * applied to the whole text before it is cut, so no prefix of a key survives the cut.
 */
export type Redact = (text: string) => string;

/** Any CNF object: a JSON object with a non-empty string name; other keys pass through. */
export const genericObjectSchema = z.looseObject({ name: z.string().min(1) });

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** The object of a 2xx reply, checked generically, against `schema`, and for the expected name. */
export function objectReplyOf(
  site: CnfCallSite,
  reply: HttpExchange,
  schema: z.ZodType<Readonly<Record<string, unknown>>> | undefined,
  expectedName: string,
  redact: Redact,
): ReplyObject {
  const value = jsonOf(site, reply, redact);
  const object = validated(site, reply.status, genericObjectSchema, value, redact);
  if (schema !== undefined) validated(site, reply.status, schema, value, redact);
  if (object.name !== expectedName) {
    throw new CnfBadReplyError(
      site,
      reply.status,
      `object named ${redact(JSON.stringify(object.name))}, expected ${JSON.stringify(expectedName)}`,
    );
  }
  return object;
}

/** The items of a collection GET. Lua encodes an empty table as `{}`: that is an empty list. */
export function listItemsOf(
  site: CnfCallSite,
  reply: HttpExchange,
  collection: string,
  schema:
    z.ZodType<Readonly<Record<string, readonly Readonly<Record<string, unknown>>[]>>> | undefined,
  redact: Redact,
): ReplyObject[] {
  const value = jsonOf(site, reply, redact);
  const shape = z.looseObject({
    [collection]: z.union([z.array(genericObjectSchema), z.strictObject({}).transform(() => [])]),
  });
  const listed = validated(site, reply.status, shape, value, redact);
  const items = (listed[collection] ?? []) as ReplyObject[];
  if (schema !== undefined)
    validated(site, reply.status, schema, { ...listed, [collection]: items }, redact);
  return items;
}

/**
 * The text of an error body, redacted. Upstream writes `{"message":"<text>"}` without escaping,
 * and the CNFService handler appends the echoed request after it, so parse leniently.
 */
export function errorMessageOf(body: string, redact: Redact): string {
  const parsed = parseJson(body);
  if (parsed.ok && typeof parsed.value === "object" && parsed.value !== null) {
    const message = (parsed.value as { message?: unknown }).message;
    if (typeof message === "string") return redact(message);
  }
  const prefix = /^\s*\{"message":"(.*?)"\}/s.exec(body);
  if (prefix?.[1] !== undefined) return redact(prefix[1]);
  return cut(redact(body.trim()), 300);
}

function jsonOf(site: CnfCallSite, reply: HttpExchange, redact: Redact): unknown {
  const parsed = parseJson(reply.body);
  if (!parsed.ok)
    throw new CnfBadReplyError(site, reply.status, `not JSON: ${snippet(reply.body, redact)}`);
  return parsed.value;
}

function validated<T>(
  site: CnfCallSite,
  status: number,
  schema: z.ZodType<T>,
  value: unknown,
  redact: Redact,
): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  // zod quotes the values it did not expect: the reply may hold key material.
  const detail = redact(z.prettifyError(result.error).replace(/\s+/g, " "));
  throw new CnfBadReplyError(site, status, cut(detail, 300));
}

function snippet(text: string, redact: Redact): string {
  return JSON.stringify(cut(redact(text.trim()), 80));
}

/** At most `max` characters of an already redacted text, marked when cut. */
function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}...` : text;
}
