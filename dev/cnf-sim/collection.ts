/**
 * The generic REST handler of the upstream CNF (utils.lua handle_get/post/put/delete), parameterised
 * by a per-kind validator and section store. Owns the 6/7-segment URI rule, POST 201 / 409,
 * PUT as delete-then-create (an upsert), DELETE 200 / 404 / 400 "is used", GET item / collection.
 */
import {
  badUri,
  errorReply,
  methodNotAllowed,
  objectReply,
  parseBody,
  successReply,
  type SimReply,
} from "./replies.js";
import { isRecord, validateObject, type ObjectRule } from "./validate.js";

export type StoreResult =
  { readonly ok: true } | { readonly ok: false; readonly status: number; readonly message: string };

/** Where one kind keeps its objects; GET shapes are produced here. */
export interface SectionStore {
  get(name: string): Record<string, unknown> | undefined;
  list(): Record<string, unknown>[];
  create(value: Record<string, unknown>): StoreResult;
  /** Removes every object of this kind with that name (upstream deletes all matches). */
  remove(name: string): void;
}

export interface CollectionSpec {
  readonly module: string;
  readonly collection: string;
  /** The singular used in messages: `Cannot find <type>[<name>]`, `<type> <name> is not defined`. */
  readonly typeName: string;
  readonly rule: ObjectRule;
  readonly store: SectionStore;
  /** For kinds whose DELETE refuses while other objects refer to them (policy, zone, proposal). */
  readonly isUsed?: (name: string) => boolean;
}

export interface SimCollection {
  readonly module: string;
  readonly collection: string;
  /** `segments` is the whole request path split on "/" with empty segments dropped. */
  handle(method: string, segments: readonly string[], body: string): SimReply;
  /** Every object as a collection GET would return it. */
  list(): Record<string, unknown>[];
}

export function restCollection(spec: CollectionSpec): SimCollection {
  return {
    module: spec.module,
    collection: spec.collection,
    list: () => spec.store.list(),
    handle(method, segments, body) {
      switch (method) {
        case "GET":
          return handleGet(spec, segments);
        case "POST":
          return segments.length === 6 ? handlePost(spec, body) : badUri();
        case "PUT":
          return segments.length === 7 ? handlePut(spec, lastOf(segments), body) : badUri();
        case "DELETE":
          return segments.length === 7 ? handleDelete(spec, lastOf(segments)) : badUri();
        default:
          return methodNotAllowed();
      }
    },
  };
}

function handleGet(spec: CollectionSpec, segments: readonly string[]): SimReply {
  if (segments.length === 6) return objectReply(200, { [spec.collection]: spec.store.list() });
  if (segments.length !== 7) return badUri();
  const name = lastOf(segments);
  const found = spec.store.get(name);
  return found === undefined
    ? errorReply(404, `Cannot find ${spec.typeName}[${name}]`)
    : objectReply(200, found);
}

function handlePost(spec: CollectionSpec, body: string): SimReply {
  const parsed = parseBody(body);
  if (!parsed.ok) return parsed.reply;
  const validated = validateObject(spec.rule, parsed.value);
  if (!validated.ok) return errorReply(400, validated.message);
  // The name check reads the body's own value: a JSON number is not a name.
  const rawName = isRecord(parsed.value) ? parsed.value["name"] : undefined;
  const name = typeof rawName === "string" ? rawName.trim() : "";
  if (name === "") return errorReply(400, "Field[name] checked failed: required");
  const created = spec.store.create({ ...validated.value, name });
  if (!created.ok) return errorReply(created.status, created.message);
  return objectReply(201, spec.store.get(name));
}

function handlePut(spec: CollectionSpec, name: string, body: string): SimReply {
  const parsed = parseBody(body);
  if (!parsed.ok) return parsed.reply;
  const validated = validateObject(spec.rule, parsed.value);
  if (!validated.ok) return errorReply(400, validated.message);
  // Upstream update: delete without the "is used" check (404 is fine), then create.
  // Validation ran first, so only a create-time conflict can lose the old object (as upstream).
  spec.store.remove(name);
  const created = spec.store.create({ ...validated.value, name });
  if (!created.ok) return errorReply(created.status, created.message);
  return objectReply(200, spec.store.get(name));
}

function handleDelete(spec: CollectionSpec, name: string): SimReply {
  if (spec.store.get(name) === undefined) {
    return errorReply(404, `${spec.typeName} ${name} is not defined`);
  }
  if (spec.isUsed?.(name) === true) return errorReply(400, `${spec.typeName} ${name} is used`);
  spec.store.remove(name);
  return successReply();
}

function lastOf(segments: readonly string[]): string {
  return segments[segments.length - 1] ?? "";
}
