import { createLogger, Runtime, type RuntimeOptions } from "../../../shared/runtime/index.js";
import type {
  EventFunction,
  HandlerContext,
  JsonFunction,
} from "../../../shared/runtime/function.js";
import type { IntakeEvent } from "../../../shared/events/types.js";
import type { Outcome } from "../../../shared/core/outcome.js";

export type LogLine = Record<string, unknown> & { msg: string; level: string };

/** A runtime whose JSON log lines are kept in memory for the test to read. */
export function capturingRuntime(options: RuntimeOptions = {}): {
  runtime: Runtime;
  lines: LogLine[];
} {
  const lines: LogLine[] = [];
  const logger = createLogger({
    level: "debug",
    destination: { write: (line: string) => void lines.push(JSON.parse(line) as LogLine) },
  });
  return { runtime: new Runtime({ logger, ...options }), lines };
}

export function eventFunction(
  name: string,
  handle: (event: IntakeEvent, ctx: HandlerContext) => Outcome | Promise<Outcome>,
): EventFunction {
  return { name, kind: "event", handle: (event, ctx) => Promise.resolve(handle(event, ctx)) };
}

type JsonReply = Awaited<ReturnType<JsonFunction["handle"]>>;

export function jsonFunction(
  name: string,
  handle: (body: unknown, ctx: HandlerContext) => JsonReply | Promise<JsonReply>,
): JsonFunction {
  return { name, kind: "json", handle: (body, ctx) => Promise.resolve(handle(body, ctx)) };
}

/** Answers each event by the ref's name: "done-x" -> done, "retry-x" -> retry, and so on. */
export const outcomeByName = eventFunction("by-name", (event): Outcome => {
  const name = event.type === "object" ? event.ref.name : "done";
  if (name.startsWith("retry"))
    return {
      kind: "retry",
      reason: `${name} is not ready`,
      retryAfterSeconds: Number(name.split("-")[1] ?? 5),
    };
  if (name.startsWith("permanent"))
    return { kind: "permanent", code: "InvalidSpec", reason: `${name} can never apply` };
  if (name.startsWith("malformed"))
    return { kind: "malformed", code: "UnknownKind", reason: `${name} is unusable` };
  return { kind: "done", result: "unchanged" };
});

export const binaryRefHeaders = (name: string, id = `id-${name}`): Record<string, string> => ({
  "content-type": "application/json",
  "ce-specversion": "1.0",
  "ce-id": id,
  "ce-source": "test",
  "ce-type": "dev.knative.apiserver.ref.update",
});

export const refData = (name: string): string =>
  JSON.stringify({
    kind: "Mwan3Rule",
    namespace: "ns1",
    name,
    apiVersion: "batch.sdewan.akraino.org/v1alpha1",
  });

export const structuredRef = (name: string, id = `id-${name}`): Record<string, unknown> => ({
  specversion: "1.0",
  id,
  source: "test",
  type: "dev.knative.apiserver.ref.update",
  data: JSON.parse(refData(name)) as unknown,
});

export const STRUCTURED = "application/cloudevents+json; charset=utf-8";
export const BATCH = "application/cloudevents-batch+json";
