/**
 * The HTTP apps that serve functions: one function at POST / (OpenFaaS / Knative style), or
 * several at POST /<name> (the combined server). Both answer GET /_/health, /_/ready, /metrics.
 * Handlers never see HTTP: an event request becomes IntakeEvent[], each event an Outcome, the
 * worst outcome the reply (see reply.ts). Served with node:http alone: express and its
 * dependencies were ~5 MiB of an idle function process (docs/benchmarks.md#memory) for four
 * routes. Paths match as express matched them: case-insensitive, a trailing slash and the
 * query ignored; HEAD answers as GET.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import type { TLSSocket } from "node:tls";
import { IntakeError } from "../events/errors.js";
import { isJsonMediaType, parseContentType } from "../events/content-type.js";
import { parseIntake } from "../events/parse.js";
import type { IntakeEvent } from "../events/types.js";
import type {
  CallCounters,
  CallerIdentity,
  EventFunction,
  JsonFunction,
  SdewanFunction,
} from "./function.js";
import { OUTCOME_TABLE, type Outcome } from "../core/outcome.js";
import { readBody } from "./body.js";
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
import { messageOf } from "../core/error-message.js";

/** What createFunctionApp / createCombinedApp return: a node:http request listener. */
export type FunctionApp = RequestListener;

type Request = IncomingMessage;
type Response = ServerResponse;
type Route = (req: Request, res: Response) => Promise<void>;

/** Serves `fn` at POST /. */
export function createFunctionApp(
  fn: SdewanFunction,
  runtime: Runtime = new Runtime(),
): FunctionApp {
  return appOf(new Map([["/", routeFor(fn, runtime)]]), runtime);
}

/**
 * Serves each function at POST /<function-name>; a process serving exactly one function (an
 * OpenFaaS or Knative function image) also answers at POST /, the platforms' convention.
 */
export function createCombinedApp(
  functions: readonly SdewanFunction[],
  runtime: Runtime = new Runtime(),
): FunctionApp {
  const names = functions.map((fn) => fn.name);
  const duplicate = names.find((name, index) => names.indexOf(name) !== index);
  if (duplicate !== undefined) throw new Error(`function "${duplicate}" is listed twice`);
  const routes = new Map<string, Route>();
  for (const fn of functions) routes.set(`/${fn.name.toLowerCase()}`, routeFor(fn, runtime));
  const [only] = functions;
  if (functions.length === 1 && only !== undefined) routes.set("/", routeFor(only, runtime));
  return appOf(routes, runtime);
}

/** The request's path as routes are keyed: no query, no trailing slash, lower case. */
function routePath(req: Request): string {
  const url = req.url ?? "/";
  const query = url.indexOf("?");
  const path = (query === -1 ? url : url.slice(0, query)).toLowerCase();
  return path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
}

function appOf(posts: ReadonlyMap<string, Route>, runtime: Runtime): FunctionApp {
  const gets: ReadonlyMap<string, Route> = new Map<string, Route>([
    ["/_/health", (_req, res) => Promise.resolve(send(res, 200, "text/plain", "ok"))],
    [
      "/_/ready",
      async (_req, res) => {
        const ready = await runtime.isReady();
        send(res, ready ? 200 : 503, "text/plain", ready ? "ready" : "not ready");
      },
    ],
    [
      "/metrics",
      async (_req, res) => {
        const { registry } = runtime.metrics;
        send(res, 200, registry.contentType, await registry.metrics());
      },
    ],
  ]);
  return (req, res) => {
    // Tell keep-alive clients to reconnect elsewhere once shutdown has begun.
    if (runtime.isShuttingDown) res.setHeader("Connection", "close");
    const path = routePath(req);
    const route =
      req.method === "POST"
        ? posts.get(path)
        : req.method === "GET" || req.method === "HEAD"
          ? gets.get(path)
          : undefined;
    if (route === undefined) {
      res.statusCode = 404;
      res.end();
      return;
    }
    route(req, res).catch((error: unknown) => answerRuntimeFailure(runtime, error, req, res));
  };
}

/** A text reply; the charset is added to text types as express added it. */
function send(res: Response, status: number, contentType: string, body: string): void {
  res.statusCode = status;
  res.setHeader(
    "Content-Type",
    contentType.startsWith("text/") && !contentType.includes("charset")
      ? `${contentType}; charset=utf-8`
      : contentType,
  );
  res.setHeader("Content-Length", Buffer.byteLength(body));
  res.end(body);
}

function sendJson(
  res: Response,
  status: number,
  headers: Readonly<Record<string, string>>,
  value: unknown,
): void {
  setHeaders(res, headers);
  send(res, status, "application/json; charset=utf-8", JSON.stringify(value) ?? "");
}

function setHeaders(res: Response, headers: Readonly<Record<string, string>>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

/** An empty reply with these headers. */
function sendEmpty(res: Response, status: number, headers: Readonly<Record<string, string>>): void {
  setHeaders(res, headers);
  res.statusCode = status;
  res.end();
}

function routeFor(fn: SdewanFunction, runtime: Runtime): Route {
  const limit = bodyLimitOf(fn, runtime);
  const serve = fn.kind === "event" ? serveEvents : serveJson;
  return async (req, res) => {
    let body: Buffer | undefined;
    try {
      body = await readBody(req, limit);
    } catch (error) {
      if (!(error instanceof IntakeError)) throw error;
      replyIntakeError(fn, runtime, error, req, res);
      return;
    }
    await runtime.track(() => serve(fn as never, runtime, req, res, body));
  };
}

/** A request header by name, as one string. */
function header(req: Request, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value.join(", ") : value;
}

const wantsVerbose = (req: Request): boolean => {
  const value = header(req, HEADER.verbose)?.trim().toLowerCase();
  return value === "1" || value === "true";
};

/** ce-id when the sender gave one (binary mode), else the single event's id, else a new one. */
function correlationIdOf(req: Request, events: readonly IntakeEvent[] = []): string {
  const ceId = header(req, "ce-id");
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
  body: Buffer | undefined,
): Promise<void> {
  let events: IntakeEvent[];
  try {
    events = parseIntake({ headers: req.headers, body }, { maxBodyBytes: runtime.maxBodyBytes });
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
  if (!wantsVerbose(req)) {
    sendEmpty(res, reply.status, reply.headers);
    return;
  }
  sendJson(res, reply.status, reply.headers, {
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
    result = { kind: "error", errorId: randomUUID(), message: messageOf(error) };
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
    sendJson(res, error.httpStatus, {}, { error: error.code, message: error.message });
    return;
  }
  const headers = {
    [HEADER.correlationId]: correlationId,
    [HEADER.outcome]: "malformed",
    [HEADER.code]: error.code,
    [HEADER.reason]: headerSafe(error.message),
  };
  if (!wantsVerbose(req)) {
    sendEmpty(res, error.httpStatus, headers);
    return;
  }
  sendJson(res, error.httpStatus, headers, {
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

/** A failure of the runtime itself, not of a handler (those are outcomes): 500 with an error id. */
function answerRuntimeFailure(runtime: Runtime, error: unknown, req: Request, res: Response): void {
  const errorId = randomUUID();
  runtime.logger.error(
    { err: error, errorId, path: routePath(req) },
    "request failed in the runtime",
  );
  if (!res.headersSent) sendEmpty(res, 500, { [HEADER.errorId]: errorId });
  else res.destroy();
}

// ---- JSON functions -----------------------------------------------------------------------

async function serveJson(
  fn: JsonFunction,
  runtime: Runtime,
  req: Request,
  res: Response,
  raw: Buffer | undefined,
): Promise<void> {
  let body: unknown;
  try {
    body = readJsonBody(req, raw);
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
    caller: callerOf(req),
  });
  const seconds = (performance.now() - started) / 1000;
  const outcome = `http-${reply.status}`;
  runtime.metrics.recordEvent({ fn: fn.name, type: "json", outcome, seconds, calls });
  const fields = { eventType: "json", outcome, durationMs: Math.round(seconds * 1000), calls };
  if (reply.errorId === undefined) log.info(fields, `answered ${reply.status}`);
  else log.error({ ...fields, err: reply.thrown, errorId: reply.errorId }, "handler threw");
  sendJson(res, reply.status, reply.headers, reply.body);
}

/** The identity the connection proves: a client certificate the TLS server verified. */
function callerOf(req: Request): CallerIdentity {
  const socket = req.socket as Partial<TLSSocket>;
  if (socket.encrypted !== true || socket.getPeerCertificate === undefined)
    return { verified: false, names: [] };
  const cert = socket.getPeerCertificate();
  if (Object.keys(cert).length === 0) return { verified: false, names: [] };
  if (socket.authorized !== true) {
    const problem = socket.authorizationError?.message ?? "not verified";
    return { verified: false, names: [], problem };
  }
  const dns = (cert.subjectaltname ?? "")
    .split(", ")
    .filter((san) => san.startsWith("DNS:"))
    .map((san) => san.slice(4));
  const cn = cert.subject?.CN;
  const commonNames = cn === undefined ? [] : Array.isArray(cn) ? cn : [cn];
  return { verified: true, names: dns.length > 0 ? dns : commonNames };
}

function readJsonBody(req: Request, raw: Buffer | undefined): unknown {
  const text = raw?.toString("utf8") ?? "";
  const { essence } = parseContentType(header(req, "content-type"));
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
    throw new IntakeError("bad-json", `body is not valid JSON: ${messageOf(error)}`);
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
