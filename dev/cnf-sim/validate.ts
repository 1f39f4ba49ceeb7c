/**
 * The upstream CNF's field validation, reproduced as behaviour (reference 2.2 and 2.4):
 * strings are trimmed; "" and null count as absent; absent required fields fail with
 * `Field[<name>] checked failed: required`; a failing check answers
 * `Field[<name>] checked failed: <message> [<detail>]`; list fields must be non-empty arrays
 * ("Not an array"); unknown keys are dropped; fields without a check are stored as given.
 */

export type CheckResult = { readonly ok: true; readonly value?: unknown } | CheckFailure;
export interface CheckFailure {
  readonly ok: false;
  readonly detail?: string;
}

export type Check = (value: unknown) => CheckResult;

export interface FieldRule {
  readonly name: string;
  readonly required?: boolean;
  /** The validator's message; upstream leaves some empty, giving "checked failed: " with nothing after. */
  readonly message?: string;
  /** Validates a scalar value. */
  readonly check?: Check;
  /** Validates a list: each item with a check, or each item as a nested object. */
  readonly items?: Check | ObjectRule;
  readonly defaultValue?: string;
}

export interface ObjectRule {
  readonly fields: readonly FieldRule[];
  /** Runs on the validated object; its failure detail is the whole error message (no Field[] prefix). */
  readonly objectCheck?: (value: Record<string, unknown>) => CheckResult;
}

export type Validated =
  | { readonly ok: true; readonly value: Record<string, unknown> }
  | { readonly ok: false; readonly message: string };

const pass: CheckResult = { ok: true };
const fail = (detail?: string): CheckFailure =>
  detail === undefined ? { ok: false } : { ok: false, detail };

export function validateObject(rule: ObjectRule, source: unknown): Validated {
  const src = isRecord(source) ? source : {};
  const target: Record<string, unknown> = {};
  for (const field of rule.fields) {
    const raw = src[field.name];
    const value = typeof raw === "string" ? raw.trim() : raw;
    if (value === undefined || value === null || value === "") {
      if (field.required === true) return failed(`Field[${field.name}] checked failed: required`);
      if (field.defaultValue !== undefined) target[field.name] = field.defaultValue;
      continue;
    }
    const result = checkField(field, value);
    if (!result.ok) {
      const base = `Field[${field.name}] checked failed: ${field.message ?? ""}`;
      return failed(result.detail === undefined ? base : `${base} [${result.detail}]`);
    }
    target[field.name] = result.value === undefined ? storedForm(value) : result.value;
  }
  if (rule.objectCheck !== undefined) {
    const result = rule.objectCheck(target);
    if (!result.ok) return failed(result.detail ?? "");
  }
  return { ok: true, value: target };
}

function checkField(field: FieldRule, value: unknown): CheckResult {
  if (field.check !== undefined) return field.check(value);
  if (field.items !== undefined) return checkList(field.items, value);
  return pass;
}

function checkList(items: Check | ObjectRule, value: unknown): CheckResult {
  if (!Array.isArray(value) || value.length === 0) return fail("Not an array");
  const out: unknown[] = [];
  for (const item of value as unknown[]) {
    if (typeof items === "function") {
      const result = items(item);
      if (!result.ok) return result;
      out.push(result.value ?? item);
    } else {
      const nested = validateObject(items, item);
      if (!nested.ok) return fail(nested.message);
      out.push(nested.value);
    }
  }
  return { ok: true, value: out };
}

/** UCI keeps options as strings: numbers and booleans given to an unchecked field come back as strings. */
function storedForm(value: unknown): unknown {
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  if (Array.isArray(value)) return value.map((item) => storedForm(item));
  return value;
}

function failed(message: string): Validated {
  return { ok: false, message };
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

// ---- value checks (upstream utils.lua semantics) -------------------------------------------

/** Exact string membership; a JSON number never equals a string member. */
export const oneOf =
  (...values: readonly string[]): Check =>
  (value) =>
    typeof value === "string" && values.includes(value) ? pass : fail();

/**
 * A string holding an integer strictly between `min` and `max` (exclusive bounds, as upstream).
 * JSON numbers fail: this is why metric and weight must be sent as strings.
 */
export const integerBetween =
  (min: number | null, max: number | null = null): Check =>
  (value) => {
    if (typeof value !== "string" || /^\s*0[bBoO]/.test(value)) return fail();
    const n = Number(value);
    if (!Number.isFinite(n) || !Number.isInteger(n)) return fail();
    if (min !== null && n <= min) return fail();
    if (max !== null && n >= max) return fail();
    return pass;
  };

const octet = /^(25[0-5]|2[0-4]\d|[01]?\d?\d)$/;

/** Dotted IPv4 address; like the Lua pattern split, empty pieces between dots are ignored. */
export function isIpv4Address(text: string): boolean {
  const pieces = text.split(".").filter((piece) => piece.length > 0);
  return pieces.length === 4 && pieces.every((piece) => octet.test(piece));
}

/** IPv4 address or IPv4/prefix with 0 <= prefix <= 32. */
export const ipv4OrCidr: Check = (value) => {
  if (typeof value !== "string" && typeof value !== "number") return fail();
  const pieces = String(value)
    .split("/")
    .filter((piece) => piece.length > 0);
  const [address, prefix] = pieces;
  if (address === undefined || !isIpv4Address(address)) return fail();
  if (pieces.length === 1) return pass;
  if (pieces.length === 2 && integerBetween(-1, 33)(prefix).ok) return pass;
  return fail();
};

export const macAddress: Check = (value) => {
  if (typeof value !== "string") return fail();
  const pieces = value.split(":").filter((piece) => piece.length > 0);
  return pieces.length === 6 && pieces.every((piece) => /^[a-fA-F0-9]{2}$/.test(piece))
    ? pass
    : fail();
};

/** An IP, optionally negated with a leading "!" (firewall masq_src / masq_dest). */
export const maybeNegatedIp: Check = (value) =>
  typeof value === "string" && ipv4OrCidr(value.startsWith("!") ? value.slice(1) : value).ok
    ? pass
    : fail();

export const maxLength =
  (limit: number, detail: string): Check =>
  (value) =>
    String(value).length > limit ? fail(detail) : pass;

/** A reference check: passes when `exists(name)`, else fails with `<Label>[<name>] is not definied` (sic). */
export const mustExist =
  (label: string, exists: (name: string) => boolean): Check =>
  (value) => {
    const name = String(value);
    return exists(name) ? pass : fail(`${label}[${name}] is not definied`);
  };
