/**
 * The express apps that serve functions: one function at POST / (OpenFaaS / Knative style), or
 * several at POST /<name> (the combined server). Both answer GET /_/health, /_/ready, /metrics.
 * Handlers never see express: an event request becomes IntakeEvent[], each event an Outcome, the
 * worst outcome the reply (see reply.ts).
 */
import { randomUUID } from "node:crypto";
import express, {
  type ErrorRequestHandler,
  type Express,
  type Request,
  type RequestHandler,
  type Response,
} from "express";
import { IntakeError } from "../events/errors.js";
import { isJsonMediaType, parseContentType } from "../events/content-type.js";
import { parseIntake } from "../events/parse.js";
import type { IntakeEvent } from "../events/types.js";
import type { CallCounters, EventFunction, JsonFunction, SdewanFunction } from "./function.js";
import { OUTCOME_TABLE, type Outcome } from "../core/outcome.js";
import {
  HEADER,
  describeRef,
  headerSafe,
  labelOf,
  resultDetails,
  replyFor,
  worstResult,
  type EventResult,
} from "./reply.js";
import { Runtime } from "./runtime.js";

/** Serves `fn` at POST /. */
export function createFunctionApp(fn: SdewanFunction, runtime: Runtime = new Runtime()): Express {
  const app = baseApp(runtime);
  app.post("/", ...routeFor(fn, runtime));
  return withFallbacks(app, runtime);
}

/**
 * Serves each function at POST /<function-name>; a process serving exactly one function (an
 * OpenFaaS or Knative function image) also answers at POST /, the platforms' convention.
 */
export function createCombinedApp(
  functions: readonly SdewanFunction[],
  runtime: Runtime = new Runtime(),
): Express {
  const names = functions.map((fn) => fn.name);
  const duplicate = names.find((name, index) => names.indexOf(name) !== index);
  if (duplicate !== undefined) throw new Error(`function "${duplicate}" is listed twice`);
  const app = baseApp(runtime);
  for (const fn of functions) app.post(`/${fn.name}`, ...routeFor(fn, runtime));
  const [only] = functions;
  if (functions.length === 1 && only !== undefined) app.post("/", ...routeFor(only, runtime));
  return withFallbacks(app, runtime);
}

function baseApp(runtime: Runtime): Express {
  const app = express();
  app.disable("x-powered-by");
  app.use((_req, res, next) => {
    // Tell keep-alive clients to reconnect elsewhere once shutdown has begun.
    if (runtime.isShuttingDown) res.set("Connection", "close");
    next();
  });
  app.get("/_/health", (_req, res) => {
    res.status(200).type("text/plain").send("ok");
  });
  app.get("/_/ready", async (_req, res) => {
    const ready = await runtime.isReady();
    res
      .status(ready ? 200 : 503)
      .type("text/plain")
      .send(ready ? "ready" : "not ready");
  });
  app.get("/metrics", async (_req, res) => {
    res.set("Content-Type", runtime.metrics.registry.contentType);
    res.send(await runtime.metrics.registry.metrics());
  });
  return app;
}

function withFallbacks(app: Express, runtime: Runtime): Express {
  app.use((_req, res) => {
    res.status(404).end();
  });
  app.use(lastResortErrorHandler(runtime));
  return app;
}

function routeFor(
  fn: SdewanFunction,
  runtime: Runtime,
): [RequestHandler, RequestHandler, ErrorRequestHandler] {
  const rawBody = express.raw({ type: () => true, limit: bodyLimitOf(fn, runtime) });
  const handler: RequestHandler =
    fn.kind === "event"
      ? (req, res) => runtime.track(() => serveEvents(fn, runtime, req, res))
      : (req, res) => runtime.track(() => serveJson(fn, runtime, req, res));
  return [rawBody, handler, bodyErrorHandler(fn, runtime)];
}

const bodyOf = (req: Request): Buffer | undefined =>
  Buffer.isBuffer(req.body) ? req.body : undefined;

const wantsVerbose = (req: Request): boolean => {
  const value = req.get(HEADER.verbose)?.trim().toLowerCase();
  return value === "1" || value === "true";
};

/** ce-id when the sender gave one (binary mode), else the single event's id, else a new one. */
function correlationIdOf(req: Request, events: readonly IntakeEvent[] = []): string {
  const ceId = req.get("ce-id");
  if (ceId) return ceId;
  return events.length === 1 && events[0] ? events[0].id : randomUUID();
}

/** Aborted when the client goes away before the reply, or when shutdown stops waiting. */
function requestSignal(res: Response, runtime: Runtime): AbortSignal {
  const abandoned = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) abandoned.abort(new Error("client closed the connection"));
  });
  return AbortSignal.any([abandoned.signal, runtime.signal]);
}

// ---- event functions ----------------------------------------------------------------------

interface HandledEvent {
  readonly event: IntakeEvent;
  readonly result: EventResult;
  readonly seconds: number;
  readonly calls: CallCounters;
}

async function serveEvents(
  fn: EventFunction,
  runtime: Runtime,
  req: Request,
  res: Response,
): Promise<void> {
  let events: IntakeEvent[];
  try {
    events = parseIntake(
      { headers: req.headers, body: bodyOf(req) },
      { maxBodyBytes: runtime.maxBodyBytes },
    );
  } catch (error) {
    if (!(error instanceof IntakeError)) throw error;
    replyIntakeError(fn, runtime, error, req, res);
    return;
  }
  const signal = requestSignal(res, runtime);
  const handled: HandledEvent[] = [];
  // One at a time: a batch is small, and events about one object stay in order.
  for (const event of events) handled.push(await runEvent(fn, event, runtime, signal));
  const correlationId = correlationIdOf(req, events);
  const reply = replyFor(worstResult(handled.map((item) => item.result)), correlationId);
  res.status(reply.status).set(reply.headers);
  if (!wantsVerbose(req)) {
    res.end();
    return;
  }
  res.json({
    function: fn.name,
    status: reply.status,
    outcome: reply.label,
    correlationId,
    events: handled.map(({ event, result, seconds, calls }) => ({
      id: event.id,
      ceType: event.ceType ?? null,
      ...(event.type === "object"
        ? { action: event.action, object: event.ref }
        : { resync: event.scope }),
      outcome: labelOf(result),
      ...resultDetails(result),
      durationMs: Math.round(seconds * 1000),
      calls,
    })),
  });
}

async function runEvent(
  fn: EventFunction,
  event: IntakeEvent,
  runtime: Runtime,
  signal: AbortSignal,
): Promise<HandledEvent> {
  const calls: CallCounters = { api: 0, cnf: 0 };
  const log = runtime.logger.child({ correlationId: event.id, function: fn.name });
  const started = performance.now();
  let result: EventResult;
  let thrown: unknown;
  try {
    result = checkedOutcome(
      await fn.handle(event, {
        correlationId: event.id,
        log,
        calls,
        signal,
        metrics: runtime.metrics,
      }),
    );
  } catch (error) {
    thrown = error;
    result = { kind: "error", errorId: randomUUID(), message: errorMessage(error) };
  }
  const seconds = (performance.now() - started) / 1000;
  const type = event.ceType ?? "plain-ref";
  runtime.metrics.recordEvent({ fn: fn.name, type, outcome: labelOf(result), seconds, calls });
  logEvent(log, { event, result, seconds, calls }, thrown);
  return { event, result, seconds, calls };
}

/** A handler written in plain JS (or with a cast) could return anything; that is a bug, not a done. */
function checkedOutcome(outcome: Outcome): EventResult {
  const kind = (outcome as Partial<Outcome> | undefined)?.kind;
  if (kind !== undefined && Object.hasOwn(OUTCOME_TABLE, kind)) return { kind: "outcome", outcome };
  throw new TypeError(`handler returned ${JSON.stringify(outcome)}, not an Outcome`);
}

const errorMessage = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);

function logEvent(
  log: Runtime["logger"],
  { event, result, seconds, calls }: HandledEvent,
  thrown: unknown,
): void {
  const subject = event.type === "object" ? describeRef(event.ref) : "resync";
  const fields = {
    eventType: event.ceType ?? "plain-ref",
    ...(event.type === "object"
      ? { action: event.action, object: subject }
      : { scope: event.scope }),
    outcome: labelOf(result),
    ...resultDetails(result),
    durationMs: Math.round(seconds * 1000),
    calls,
  };
  switch (result.kind) {
    case "error":
      log.error(
        { ...fields, err: thrown },
        `${subject}: handler threw (error id ${result.errorId})`,
      );
      return;
    case "outcome":
      if (result.outcome.kind === "done") log.info(fields, `${subject} ${result.outcome.result}`);
      else log.warn(fields, `${subject}: ${result.outcome.kind}: ${result.outcome.reason}`);
  }
}

function replyIntakeError(
  fn: SdewanFunction,
  runtime: Runtime,
  error: IntakeError,
  req: Request,
  res: Response,
): void {
  const correlationId = correlationIdOf(req);
  runtime.metrics.recordIntakeError(fn.name, error.code);
  runtime.logger.warn(
    {
      correlationId,
      function: fn.name,
      outcome: "malformed",
      code: error.code,
      reason: error.message,
    },
    `refused request: ${error.message}`,
  );
  if (fn.kind === "json") {
    res.status(error.httpStatus).json({ error: error.code, message: error.message });
    return;
  }
  res.status(error.httpStatus).set({
    [HEADER.correlationId]: correlationId,
    [HEADER.outcome]: "malformed",
    [HEADER.code]: error.code,
    [HEADER.reason]: headerSafe(error.message),
  });
  if (!wantsVerbose(req)) {
    res.end();
    return;
  }
  res.json({
    function: fn.name,
    status: error.httpStatus,
    outcome: "malformed",
    correlationId,
    code: error.code,
    reason: error.message,
  });
}

/** The body limit of one function's route: its own (a JSON function may raise it) or the runtime's. */
export function bodyLimitOf(fn: SdewanFunction, runtime: Runtime): number {
  return fn.kind === "json" && fn.maxBodyBytes !== undefined
    ? fn.maxBodyBytes
    : runtime.maxBodyBytes;
}

/**
 * Errors from the body reader: too large (413), unknown Content-Encoding (415), broken stream,
 * or a body that does not decompress (the reader's 400 without a `type`, e.g. corrupt gzip).
 */
function bodyErrorHandler(fn: SdewanFunction, runtime: Runtime): ErrorRequestHandler {
  return (error: unknown, req, res, next) => {
    const { type, status } = (error ?? {}) as { type?: unknown; status?: unknown };
    if (typeof type !== "string" && status !== 400) {
      next(error);
      return;
    }
    const intakeError =
      type === "entity.too.large"
        ? new IntakeError(
            "body-too-large",
            `body is larger than the limit of ${bodyLimitOf(fn, runtime)} bytes`,
          )
        : type === "encoding.unsupported" || type === "charset.unsupported"
          ? new IntakeError("unsupported-content-type", errorMessage(error))
          : new IntakeError("bad-event", `could not read the body: ${errorMessage(error)}`);
    replyIntakeError(fn, runtime, intakeError, req, res);
  };
}

function lastResortErrorHandler(runtime: Runtime): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const errorId = randomUUID();
    runtime.logger.error({ err: error, errorId, path: req.path }, "request failed in the runtime");
    if (!res.headersSent) res.status(500).set(HEADER.errorId, errorId).end();
  };
}

// ---- JSON functions -----------------------------------------------------------------------

async function serveJson(
  fn: JsonFunction,
  runtime: Runtime,
  req: Request,
  res: Response,
): Promise<void> {
  let body: unknown;
  try {
    body = readJsonBody(req);
  } catch (error) {
    if (!(error instanceof IntakeError)) throw error;
    replyIntakeError(fn, runtime, error, req, res);
    return;
  }
  const correlationId = correlationIdOf(req);
  const calls: CallCounters = { api: 0, cnf: 0 };
  const log = runtime.logger.child({ correlationId, function: fn.name });
  const started = performance.now();
  const reply = await jsonReply(fn, body, {
    correlationId,
    log,
    calls,
    signal: requestSignal(res, runtime),
  });
  const seconds = (performance.now() - started) / 1000;
  const outcome = `http-${reply.status}`;
  runtime.metrics.recordEvent({ fn: fn.name, type: "json", outcome, seconds, calls });
  const fields = { eventType: "json", outcome, durationMs: Math.round(seconds * 1000), calls };
  if (reply.errorId === undefined) log.info(fields, `answered ${reply.status}`);
  else log.error({ ...fields, err: reply.thrown, errorId: reply.errorId }, "handler threw");
  res.status(reply.status).set(reply.headers).json(reply.body);
}

function readJsonBody(req: Request): unknown {
  const text = bodyOf(req)?.toString("utf8") ?? "";
  const { essence } = parseContentType(req.get("content-type"));
  if (!isJsonMediaType(essence)) {
    throw new IntakeError(
      "unsupported-content-type",
      `Content-Type "${essence || "(none)"}" is not supported: send application/json`,
    );
  }
  if (text.trim() === "") throw new IntakeError("empty-body", "body is empty");
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new IntakeError("bad-json", `body is not valid JSON: ${errorMessage(error)}`);
  }
}

interface JsonReply {
  readonly status: number;
  readonly body: unknown;
  readonly headers: Record<string, string>;
  readonly errorId?: string;
  readonly thrown?: unknown;
}

async function jsonReply(
  fn: JsonFunction,
  body: unknown,
  ctx: Parameters<JsonFunction["handle"]>[1],
): Promise<JsonReply> {
  try {
    const { status, body: replyBody } = await fn.handle(body, ctx);
    return { status, body: replyBody, headers: {} };
  } catch (error) {
    const errorId = randomUUID();
    return {
      status: 500,
      body: { error: "internal", errorId },
      headers: { [HEADER.outcome]: "error", [HEADER.errorId]: errorId },
      errorId,
      thrown: error,
    };
  }
}
