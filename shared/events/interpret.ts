/**
 * One CloudEvent (as the SDK read it) -> one IntakeEvent: which object to look at, or which
 * scope to resync. Never what to do: the function re-reads live state.
 */
import type { CloudEvent } from "cloudevents";
import { IntakeError } from "./errors.js";
import {
  ACCEPTED_EVENT_TYPES,
  APISERVER_TYPE_PATTERN,
  PING_EVENT_TYPE,
  cloudEventAttributesSchema,
  describeIssues,
  referenceDataSchema,
  resourceDataSchema,
  resyncDataSchema,
  type CloudEventAttributes,
} from "./schemas.js";
import { completeRef, type PartialRef } from "./ref.js";
import { RESYNC_EVENT_TYPE, type IntakeEvent, type WatchAction } from "./types.js";

/** `where` prefixes messages, e.g. "batch[2]: ". */
export function toIntakeEvent(event: CloudEvent<unknown>, where: string): IntakeEvent {
  const parsed = cloudEventAttributesSchema.safeParse({ ...event });
  if (!parsed.success) {
    throw new IntakeError("bad-event", `${where}${describeIssues(parsed.error, "")}`);
  }
  const attributes = parsed.data;
  const type = attributes.type;
  if (type === undefined) {
    throw new IntakeError(
      "missing-type",
      `${where}CloudEvent has no type (ce-type header in binary mode, "type" in structured mode)`,
    );
  }
  if (type === RESYNC_EVENT_TYPE || type === PING_EVENT_TYPE) {
    return toResync(attributes, type, where);
  }
  const match = APISERVER_TYPE_PATTERN.exec(type);
  if (match === null) {
    throw new IntakeError(
      "unknown-type",
      `${where}unknown CloudEvent type "${type}"; accepted: ${ACCEPTED_EVENT_TYPES.join(", ")}`,
    );
  }
  const mode = match[1] === "resource" ? "resource" : "ref";
  return toObjectEvent(attributes, { type, mode, action: match[2] as WatchAction }, where);
}

function toResync(attributes: CloudEventAttributes, type: string, where: string): IntakeEvent {
  // No data (a PingSource without `data`) means every namespace.
  const data = attributes.data ?? {};
  const scope = resyncDataSchema.safeParse(data);
  if (!scope.success) {
    throw new IntakeError("bad-data", `${where}${describeIssues(scope.error, "data")}`);
  }
  return { type: "resync", id: attributes.id, scope: scope.data, ceType: type };
}

interface ApiServerType {
  readonly type: string;
  readonly mode: "resource" | "ref";
  readonly action: WatchAction;
}

/** The ref comes from `data` first, then from the kind/apiversion/name/namespace extensions. */
function toObjectEvent(
  attributes: CloudEventAttributes,
  { type, mode, action }: ApiServerType,
  where: string,
): IntakeEvent {
  const data = attributes.data ?? {};
  const fromData = mode === "resource" ? readResourceData(data, where) : readRefData(data, where);
  const ref = completeRef(
    {
      apiVersion: fromData.apiVersion ?? attributes.apiversion,
      kind: fromData.kind ?? attributes.kind,
      namespace: fromData.namespace ?? attributes.namespace,
      name: fromData.name ?? attributes.name,
    },
    {
      prefix: `${where}event ${type} names no object: `,
      sources: {
        kind: "data.kind or the ce-kind extension",
        name: `${mode === "resource" ? "data.metadata.name" : "data.name"} or the ce-name extension`,
      },
    },
  );
  const base = { type: "object" as const, id: attributes.id, action, ref, ceType: type };
  return mode === "resource" && isRecord(data) ? { ...base, object: data } : base;
}

function readRefData(data: unknown, where: string): PartialRef {
  const parsed = referenceDataSchema.safeParse(data);
  if (!parsed.success) {
    throw new IntakeError("bad-data", `${where}${describeIssues(parsed.error, "data")}`);
  }
  return parsed.data;
}

function readResourceData(data: unknown, where: string): PartialRef {
  const parsed = resourceDataSchema.safeParse(data);
  if (!parsed.success) {
    throw new IntakeError("bad-data", `${where}${describeIssues(parsed.error, "data")}`);
  }
  const { apiVersion, kind, metadata } = parsed.data;
  return { apiVersion, kind, namespace: metadata?.namespace, name: metadata?.name };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
