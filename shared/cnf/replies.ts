/**
 * Reading CNF replies: JSON parsing, the generic zod shapes every collection shares (an object
 * has a string `name`; a collection GET is `{"<collection>": [...]}`), optional per-collection
 * schemas from the registry, and the message of an error body.
 */
import * as z from "zod";
import { CnfBadReplyError, type CnfCallSite } from "./errors.js";
import type { HttpExchange } from "./transport.js";

type ReplyObject = Readonly<Record<string, unknown>> & { readonly name: string };

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
): ReplyObject {
  const value = jsonOf(site, reply);
  const object = validated(site, reply.status, genericObjectSchema, value);
  if (schema !== undefined) validated(site, reply.status, schema, value);
  if (object.name !== expectedName) {
    throw new CnfBadReplyError(
      site,
      reply.status,
      `object named ${JSON.stringify(object.name)}, expected ${JSON.stringify(expectedName)}`,
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
): ReplyObject[] {
  const value = jsonOf(site, reply);
  const shape = z.looseObject({
    [collection]: z.union([z.array(genericObjectSchema), z.strictObject({}).transform(() => [])]),
  });
  const listed = validated(site, reply.status, shape, value);
  const items = (listed[collection] ?? []) as ReplyObject[];
  if (schema !== undefined)
    validated(site, reply.status, schema, { ...listed, [collection]: items });
  return items;
}

/**
 * The text of an error body. Upstream writes `{"message":"<text>"}` without escaping, and the
 * CNFService handler appends the echoed request after it, so parse leniently.
 */
export function errorMessageOf(body: string): string {
  const parsed = parseJson(body);
  if (parsed.ok && typeof parsed.value === "object" && parsed.value !== null) {
    const message = (parsed.value as { message?: unknown }).message;
    if (typeof message === "string") return message;
  }
  const prefix = /^\s*\{"message":"(.*?)"\}/s.exec(body);
  if (prefix?.[1] !== undefined) return prefix[1];
  return body.trim().slice(0, 300);
}

function jsonOf(site: CnfCallSite, reply: HttpExchange): unknown {
  const parsed = parseJson(reply.body);
  if (!parsed.ok)
    throw new CnfBadReplyError(site, reply.status, `not JSON: ${snippet(reply.body)}`);
  return parsed.value;
}

function validated<T>(site: CnfCallSite, status: number, schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  throw new CnfBadReplyError(
    site,
    status,
    z.prettifyError(result.error).replace(/\s+/g, " ").slice(0, 300),
  );
}

function snippet(text: string): string {
  const trimmed = text.trim();
  return JSON.stringify(trimmed.length > 80 ? `${trimmed.slice(0, 80)}...` : trimmed);
}
