/**
 * HTTP request -> IntakeEvent[]. Mode is chosen from Content-Type (batch, structured) and ce-*
 * headers (binary), as the CloudEvents HTTP binding says; a JSON body with neither is a plain ref.
 * JSON is parsed here, before the SDK, so a bad body gets a precise message instead of the SDK's.
 */
import { randomUUID } from "node:crypto";
import { HTTP, ValidationError, type CloudEvent } from "cloudevents";
import { IntakeError } from "./errors.js";
import {
  isJsonMediaType,
  isUtf8Charset,
  parseContentType,
  type MediaType,
} from "./content-type.js";
import { toIntakeEvent } from "./interpret.js";
import { completeRef } from "./ref.js";
import { describeIssues, plainRefSchema } from "./schemas.js";
import type { IntakeEvent } from "./types.js";
import { messageOf } from "../core/error-message.js";

/** Headers as node gives them (lower-case names; repeated headers as arrays). */
export type RawHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface RawRequest {
  readonly headers: RawHeaders;
  /** The raw body bytes; undefined or empty when there is none. */
  readonly body: Buffer | string | undefined;
}

export interface ParseOptions {
  /** Larger bodies are refused with 413. Default DEFAULT_MAX_BODY_BYTES. */
  readonly maxBodyBytes?: number;
}

/** 1 MiB: a Resource-mode Deployment with managedFields is ~10-30 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;

const CE_BATCH_JSON = "application/cloudevents-batch+json";
const CE_STRUCTURED_JSON = "application/cloudevents+json";

/** Every event in the request, or an IntakeError saying precisely why there are none. */
export function parseIntake(request: RawRequest, options: ParseOptions = {}): IntakeEvent[] {
  const headers = normalizeHeaders(request.headers);
  const text = bodyText(request.body, options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
  const mediaType = parseContentType(headers["content-type"]);
  if (!isUtf8Charset(mediaType.charset)) {
    throw new IntakeError(
      "unsupported-content-type",
      `charset "${mediaType.charset}" is not supported: send JSON as UTF-8`,
    );
  }
  if (mediaType.essence.startsWith("application/cloudevents-batch")) {
    requireEssence(mediaType, CE_BATCH_JSON);
    return parseBatch(text);
  }
  if (mediaType.essence.startsWith("application/cloudevents")) {
    requireEssence(mediaType, CE_STRUCTURED_JSON);
    return [parseStructured(parseJson(text, "body"), "")];
  }
  if (Object.keys(headers).some((name) => name.startsWith("ce-"))) {
    return [parseBinary(headers, mediaType, text)];
  }
  return [parsePlainRef(mediaType, text)];
}

function normalizeHeaders(raw: RawHeaders): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    const joined = typeof value === "string" ? value : value.join(",");
    const lower = name.toLowerCase();
    // The binding percent-encodes ce-* values; the SDK does not decode them.
    headers[lower] = lower.startsWith("ce-") ? percentDecode(joined) : joined;
  }
  return headers;
}

function percentDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

function bodyText(body: Buffer | string | undefined, maxBodyBytes: number): string {
  const size = body === undefined ? 0 : Buffer.byteLength(body);
  if (size > maxBodyBytes) {
    throw new IntakeError(
      "body-too-large",
      `body is ${size} bytes; the limit is ${maxBodyBytes} bytes`,
    );
  }
  const text = body === undefined ? "" : body.toString();
  return text.replace(/^\uFEFF/, "");
}

function requireEssence(mediaType: MediaType, expected: string): void {
  if (mediaType.essence !== expected) {
    throw new IntakeError(
      "unsupported-content-type",
      `Content-Type "${mediaType.essence}" is not supported: use ${expected}`,
    );
  }
}

function parseJson(text: string, what: string): unknown {
  if (text.trim() === "") throw new IntakeError("empty-body", `${what} is empty`);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    const detail = messageOf(error);
    throw new IntakeError("bad-json", `${what} is not valid JSON: ${detail}`, { cause: error });
  }
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function parseBatch(text: string): IntakeEvent[] {
  const body = parseJson(text, "batch body");
  if (!Array.isArray(body)) {
    throw new IntakeError("bad-event", "batch body must be a JSON array of CloudEvents");
  }
  return body.map((element, index) => parseStructured(element, `batch[${index}]: `));
}

/** One structured-mode event: all attributes and `data` in one JSON object. */
function parseStructured(envelope: unknown, where: string): IntakeEvent {
  if (!isPlainObject(envelope)) {
    throw new IntakeError("bad-event", `${where}a structured CloudEvent must be a JSON object`);
  }
  const body = decodeBase64Data(envelope, where);
  const event = readWithSdk({ "content-type": CE_STRUCTURED_JSON }, body, where);
  return toIntakeEvent(event, where);
}

/** The SDK turns `data_base64` into a Uint32Array; we only take JSON, so decode it here. */
function decodeBase64Data(envelope: Record<string, unknown>, where: string): object {
  const encoded = envelope["data_base64"];
  if (typeof encoded !== "string") return envelope;
  const { data_base64: _dropped, ...rest } = envelope;
  return {
    ...rest,
    data: parseJson(Buffer.from(encoded, "base64").toString(), `${where}data_base64`),
  };
}

/** Binary mode: attributes in ce-* headers, the body is `data`. */
function parseBinary(
  headers: Record<string, string>,
  mediaType: MediaType,
  text: string,
): IntakeEvent {
  const hasBody = text.trim() !== "";
  if (hasBody && mediaType.essence !== "" && !isJsonMediaType(mediaType.essence)) {
    throw new IntakeError(
      "unsupported-content-type",
      `Content-Type "${mediaType.essence}" is not supported for event data: send application/json`,
    );
  }
  const data = hasBody ? parseJson(text, "body") : undefined;
  if (data !== undefined && !isPlainObject(data)) {
    throw new IntakeError("bad-data", "event data must be a JSON object");
  }
  const sdkHeaders: Record<string, string> = {
    // The id is for logs only, so a sender that omits it still gets through (the SDK needs one).
    "ce-id": randomUUID(),
    ...Object.fromEntries(Object.entries(headers).filter(([name]) => name.startsWith("ce-"))),
  };
  if (data !== undefined) sdkHeaders["content-type"] = "application/json";
  return toIntakeEvent(readWithSdk(sdkHeaders, data, ""), "");
}

function readWithSdk(
  headers: Record<string, string>,
  body: object | undefined,
  where: string,
): CloudEvent<unknown> {
  try {
    const event = HTTP.toEvent<unknown>({ headers, body });
    if (Array.isArray(event)) {
      throw new IntakeError("bad-event", `${where}expected one CloudEvent, got a batch`);
    }
    return event as CloudEvent<unknown>;
  } catch (error) {
    if (error instanceof IntakeError) throw error;
    const detail = error instanceof ValidationError || error instanceof Error ? error.message : "";
    throw new IntakeError("bad-event", `${where}not a usable CloudEvent: ${detail}`, {
      cause: error,
    });
  }
}

/** `{apiVersion?, kind, namespace?, name, action?}` posted by hand, or a whole object. */
function parsePlainRef(mediaType: MediaType, text: string): IntakeEvent {
  if (text.trim() === "") {
    throw new IntakeError(
      "empty-body",
      "body is empty: post a CloudEvent or a JSON ref {apiVersion?, kind, namespace, name}",
    );
  }
  if (!isJsonMediaType(mediaType.essence)) {
    const given =
      mediaType.essence === "" ? "no Content-Type" : `Content-Type "${mediaType.essence}"`;
    throw new IntakeError(
      "unsupported-content-type",
      `${given}: send application/json (a plain ref or binary-mode CloudEvent), ${CE_STRUCTURED_JSON} or ${CE_BATCH_JSON}`,
    );
  }
  const body = parseJson(text, "body");
  if (!isPlainObject(body)) {
    throw new IntakeError("bad-event", "a plain ref body must be a JSON object");
  }
  return plainRefEvent(body);
}

function plainRefEvent(body: Record<string, unknown>): IntakeEvent {
  const parsed = plainRefSchema.safeParse(body);
  if (!parsed.success) throw new IntakeError("bad-data", describeIssues(parsed.error, ""));
  const { apiVersion, kind, namespace, name, metadata, action } = parsed.data;
  const ref = completeRef(
    { apiVersion, kind, namespace: namespace ?? metadata?.namespace, name: name ?? metadata?.name },
    {
      prefix: "plain ref is ",
      sources: { kind: "kind", name: "name or metadata.name" },
      suffix:
        "specversion" in body
          ? ` (this looks like a structured CloudEvent: send it with Content-Type: ${CE_STRUCTURED_JSON})`
          : "",
    },
  );
  return { type: "object", id: randomUUID(), action: action ?? "update", ref };
}
