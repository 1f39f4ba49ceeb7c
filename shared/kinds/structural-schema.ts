/**
 * zod -> the structural OpenAPI v3 schema a CRD carries. Knows nothing of our kinds: it converts
 * zod's JSON Schema and throws CrdSchemaError on anything the API server would reject (unions,
 * non-RE2 patterns, unknown formats), so a bad schema fails the generator, not the install.
 */
import * as z from "zod";

/** A JSON Schema / OpenAPI v3 node, as plain data. */
export type SchemaNode = { [key: string]: unknown };

/** Keywords the API server accepts in a structural schema, in the order they are written. */
const KEY_ORDER = [
  "description",
  "type",
  "default",
  "format",
  "enum",
  "minimum",
  "exclusiveMinimum",
  "maximum",
  "exclusiveMaximum",
  "minLength",
  "maxLength",
  "pattern",
  "minItems",
  "maxItems",
  "items",
  "properties",
  "required",
  "additionalProperties",
  "oneOf",
  "anyOf",
  "allOf",
  "not",
  "x-kubernetes-int-or-string",
  "x-kubernetes-preserve-unknown-fields",
  "x-kubernetes-list-type",
  "x-kubernetes-list-map-keys",
  "x-kubernetes-map-type",
  "x-kubernetes-validations",
] as const;

/** zod output we drop: JSON Schema bookkeeping the API server does not know. */
const DROPPED = new Set(["$schema", "title", "propertyNames"]);

/** Formats the API server understands (k8s.io/kube-openapi strfmt); others would be rejected as meaningless. */
const KNOWN_FORMATS = new Set([
  "date-time",
  "date",
  "int32",
  "int64",
  "byte",
  "uuid",
  "hostname",
  "ipv4",
  "ipv6",
  "cidr",
  "mac",
  "uri",
  "email",
]);

const STRUCTURAL_TYPES = new Set<unknown>([
  "object",
  "array",
  "string",
  "integer",
  "number",
  "boolean",
]);

const SAFE_LIMITS = new Set([Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]);

/** RE2 (the API server's regexp) has no lookaround and no backreferences. */
const NON_RE2 = /\(\?[=!<]|\\[1-9]/;

export class CrdSchemaError extends Error {
  override readonly name = "CrdSchemaError";
}

function isNode(value: unknown): value is SchemaNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Whether a oneOf/anyOf/allOf/not branch only constrains which fields are present. */
function isPresenceOnly(node: unknown): boolean {
  if (!isNode(node)) return false;
  return Object.entries(node).every(([k, v]) =>
    k === "required"
      ? Array.isArray(v)
      : ["oneOf", "anyOf", "allOf"].includes(k)
        ? Array.isArray(v) && v.every(isPresenceOnly)
        : k === "not" && isPresenceOnly(v),
  );
}

function convertBounds(node: SchemaNode, out: SchemaNode): void {
  for (const [key, exclusive] of [
    ["minimum", "exclusiveMinimum"],
    ["maximum", "exclusiveMaximum"],
  ] as const) {
    const inclusive = node[key];
    const strict = node[exclusive];
    if (typeof strict === "number") {
      out[key] = strict;
      out[exclusive] = true; // OpenAPI v3.0 form: a boolean beside the bound
    } else if (typeof inclusive === "number" && !SAFE_LIMITS.has(inclusive)) {
      out[key] = inclusive;
    }
  }
}

function convertAdditional(node: SchemaNode, out: SchemaNode, path: string): void {
  const extra = node["additionalProperties"];
  if (extra === undefined || extra === false || node["properties"] !== undefined) return; // unknown fields are pruned
  if (extra === true || (isNode(extra) && Object.keys(extra).length === 0)) {
    out["x-kubernetes-preserve-unknown-fields"] = true;
    return;
  }
  out["additionalProperties"] = toStructural(extra, `${path}.additionalProperties`);
}

type KeywordHandler = (value: unknown, node: SchemaNode, out: SchemaNode, path: string) => void;

const presenceOnly =
  (key: string): KeywordHandler =>
  (value, _node, out, path) => {
    if (!(Array.isArray(value) ? value.every(isPresenceOnly) : isPresenceOnly(value))) {
      throw new CrdSchemaError(
        `${path}: ${key} with types or properties is not structural (a zod union?)`,
      );
    }
    out[key] = value;
  };

const KEYWORD_HANDLERS: Readonly<Record<string, KeywordHandler>> = {
  // OpenAPI v3.0 has no const.
  const: (value, _node, out) => {
    out["enum"] = [value];
  },
  format: (value, _node, out, path) => {
    if (typeof value !== "string" || !KNOWN_FORMATS.has(value)) {
      throw new CrdSchemaError(`${path}: format ${String(value)} is not supported`);
    }
    out["format"] = value;
  },
  pattern: (value, node, out, path) => {
    if (node["format"] !== undefined) return; // zod adds a regex beside formats; the format says it
    if (typeof value !== "string" || NON_RE2.test(value)) {
      throw new CrdSchemaError(`${path}: pattern is not RE2: ${String(value)}`);
    }
    out["pattern"] = value;
  },
  oneOf: presenceOnly("oneOf"),
  anyOf: presenceOnly("anyOf"),
  allOf: presenceOnly("allOf"),
  not: presenceOnly("not"),
};

function copyPlain(node: SchemaNode, out: SchemaNode, path: string): void {
  for (const [key, value] of Object.entries(node)) {
    if (DROPPED.has(key) || key in out) continue;
    const handler = KEYWORD_HANDLERS[key];
    if (handler !== undefined) handler(value, node, out, path);
    else if ((KEY_ORDER as readonly string[]).includes(key)) out[key] = value;
    else throw new CrdSchemaError(`${path}: keyword ${key} is not supported in a CRD schema`);
  }
}

/** One zod JSON Schema node -> a structural schema node; throws CrdSchemaError on what the API server would reject. */
export function toStructural(node: unknown, path = "schema"): SchemaNode {
  if (!isNode(node)) throw new CrdSchemaError(`${path}: not a schema object`);
  const out: SchemaNode = {};
  if (isNode(node["properties"])) {
    const props: SchemaNode = {};
    for (const [name, child] of Object.entries(node["properties"]))
      props[name] = toStructural(child, `${path}.${name}`);
    out["properties"] = props;
  }
  if (node["items"] !== undefined) out["items"] = toStructural(node["items"], `${path}[]`);
  convertBounds(node, out);
  convertAdditional(node, out, path);
  const handled = new Set([
    "properties",
    "items",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "additionalProperties",
  ]);
  copyPlain(Object.fromEntries(Object.entries(node).filter(([k]) => !handled.has(k))), out, path);
  if (out["type"] === undefined && out["x-kubernetes-preserve-unknown-fields"] !== true) {
    throw new CrdSchemaError(`${path}: no type (structural schemas need one on every node)`);
  }
  if (out["type"] !== undefined && !STRUCTURAL_TYPES.has(out["type"])) {
    throw new CrdSchemaError(
      `${path}: type ${JSON.stringify(out["type"])} is not one type (a zod union or nullable?)`,
    );
  }
  return ordered(out);
}

function ordered(node: SchemaNode): SchemaNode {
  const out: SchemaNode = {};
  for (const key of KEY_ORDER) if (node[key] !== undefined) out[key] = node[key];
  return out;
}

/** A zod schema as a structural OpenAPI v3 schema. */
export function structuralSchemaOf(schema: z.ZodType, path = "schema"): SchemaNode {
  return toStructural(
    z.toJSONSchema(schema, {
      io: "input",
      unrepresentable: "throw",
      reused: "inline",
      cycles: "throw",
    }),
    path,
  );
}
