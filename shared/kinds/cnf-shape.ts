/**
 * The shape of a CNF object body as data: which fields are scalars, which lists are ordered,
 * which lists are sets, which lists hold keyed records. From it come the zod schema of CNF
 * replies and the normalised form both sides are compared in.
 *
 * Normalisation mirrors what the CNF does to a body (reference 2.2): every value is a trimmed
 * string (UCI stores strings; metric 2 and "2" are the same), "" / null / [] count as absent,
 * unknown keys are dropped (GET adds `enabled`, a member's `name`), and list order is ignored
 * where the CNF does not care.
 */
import * as z from "zod";

export interface CnfShape {
  /** Scalar options, `name` excluded (always compared). */
  readonly scalars: readonly string[];
  /** Lists whose order matters (e.g. ipsec crypto_proposal: preference order). */
  readonly orderedLists?: readonly string[];
  /** Lists the CNF treats as sets (zone networks, subnets, icmp types). */
  readonly unorderedLists?: readonly string[];
  /** Lists of records, matched by an identity field (policy members by interface, connections by name). */
  readonly recordLists?: Readonly<Record<string, CnfRecordListShape>>;
}

export interface CnfRecordListShape {
  readonly identity: string;
  readonly shape: CnfShape;
}

/** A value in a CNF request body. */
export type CnfValue = string | readonly string[] | readonly CnfRecord[];
export interface CnfRecord {
  readonly [field: string]: CnfValue;
}
/** A CNF request body: always named. */
export interface CnfObject extends CnfRecord {
  readonly name: string;
}

export type NormalisedValue = string | readonly string[] | readonly NormalisedRecord[];
export interface NormalisedRecord {
  readonly [field: string]: NormalisedValue;
}

const cnfScalarReply = z.union([z.string(), z.number(), z.boolean()]).nullable();

function recordReplySchema(shape: CnfShape, named: boolean): z.ZodType<Record<string, unknown>> {
  const fields: Record<string, z.ZodType> = {};
  for (const f of shape.scalars) fields[f] = cnfScalarReply.optional();
  for (const f of [...(shape.orderedLists ?? []), ...(shape.unorderedLists ?? [])]) {
    fields[f] = z.union([z.array(cnfScalarReply), cnfScalarReply]).optional();
  }
  for (const [f, list] of Object.entries(shape.recordLists ?? {})) {
    fields[f] = z.array(recordReplySchema(list.shape, false)).nullable().optional();
  }
  if (named) fields["name"] = z.string().min(1);
  return z.looseObject(fields);
}

/** zod schema of one object as the CNF returns it on GET (tolerant: numbers, nulls, extra keys). */
export function cnfReplySchema(shape: CnfShape): z.ZodType<Record<string, unknown>> {
  return recordReplySchema(shape, true);
}

/** zod schema of a GET on the collection: `{"<collection>": [object...]}`. */
export function cnfListReplySchema(
  collection: string,
  shape: CnfShape,
): z.ZodType<Record<string, readonly Record<string, unknown>[]>> {
  return z.looseObject({ [collection]: z.array(cnfReplySchema(shape)) });
}

function scalarText(value: unknown): string | undefined {
  if (value === null || value === undefined) return undefined;
  if (typeof value === "string") return value.trim() === "" ? undefined : value.trim();
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return undefined;
}

function listText(value: unknown): string[] {
  const items = Array.isArray(value) ? (value as unknown[]) : [value];
  return items.map(scalarText).filter((v): v is string => v !== undefined);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function byText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function normaliseRecord(
  shape: CnfShape,
  obj: Record<string, unknown>,
  extra: readonly string[],
): NormalisedRecord {
  const out: Record<string, NormalisedValue> = {};
  const put = (field: string, value: NormalisedValue | undefined): void => {
    if (value !== undefined && value.length > 0) out[field] = value;
  };
  for (const f of [...extra, ...shape.scalars]) put(f, scalarText(obj[f]));
  for (const f of shape.orderedLists ?? []) put(f, listText(obj[f]));
  for (const f of shape.unorderedLists ?? []) put(f, listText(obj[f]).sort(byText));
  for (const [f, list] of Object.entries(shape.recordLists ?? {}))
    put(f, recordListOf(list, obj[f]));
  return sortKeys(out);
}

function recordListOf(list: CnfRecordListShape, raw: unknown): NormalisedRecord[] {
  if (!Array.isArray(raw)) return [];
  return (raw as unknown[])
    .filter(isRecord)
    .map((r) => normaliseRecord(list.shape, r, []))
    .sort((a, b) => byText(identityOf(a, list.identity), identityOf(b, list.identity)));
}

function identityOf(record: NormalisedRecord, field: string): string {
  const v = record[field];
  return typeof v === "string" ? v : "";
}

function sortKeys(record: Record<string, NormalisedValue>): NormalisedRecord {
  const sorted: Record<string, NormalisedValue> = {};
  for (const key of Object.keys(record).sort(byText)) sorted[key] = record[key] as NormalisedValue;
  return sorted;
}

/** The comparable form of a CNF object (a desired body or a GET reply). */
export function normaliseCnfObject(shape: CnfShape, obj: unknown): NormalisedRecord {
  return isRecord(obj) ? normaliseRecord(shape, obj, ["name"]) : {};
}

/** Top-level fields whose normalised values differ; empty when the CNF holds the object as desired. */
export function diffCnfObjects(shape: CnfShape, desired: unknown, actual: unknown): string[] {
  const a = normaliseCnfObject(shape, desired);
  const b = normaliseCnfObject(shape, actual);
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].sort(byText);
  return keys.filter((k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]));
}

/**
 * Builds a request body from spec values: copies the shape's fields, turns numbers into strings,
 * and leaves out absent and empty values (the CNF treats "" as absent anyway).
 */
export function bodyFromShape(
  shape: CnfShape,
  source: Readonly<Record<string, unknown>>,
): Record<string, CnfValue> {
  const body: Record<string, CnfValue> = {};
  for (const f of shape.scalars) {
    const v = source[f];
    if (typeof v === "string" && v !== "") body[f] = v;
    else if (typeof v === "number") body[f] = String(v);
  }
  for (const f of [...(shape.orderedLists ?? []), ...(shape.unorderedLists ?? [])]) {
    const v = source[f];
    if (Array.isArray(v) && v.length > 0) body[f] = (v as unknown[]).map((x) => String(x));
  }
  return body;
}
