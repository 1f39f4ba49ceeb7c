/**
 * The CNF REST client for one CNF pod: login with cookie reuse and one re-login on 403,
 * collections (list/get/create/update/delete), the service restart, a short in-process retry of
 * transient failures, reply validation with zod, and a count of every HTTP call made.
 */
import pRetry from "p-retry";
import { inspect } from "node:util";
import type * as z from "zod";
import type { CnfCredentials } from "./credentials.js";
import { DEFAULT_CNF_TUNING, type CnfRetryPolicy } from "./endpoint.js";
import {
  CnfAbortedError,
  CnfBadReplyError,
  CnfError,
  CnfHttpError,
  CnfLoginError,
  CnfTimeoutError,
  cnfFailureReason,
  isRetryableNow,
  type CnfCallSite,
} from "./errors.js";
import { KeyMaterial, WITHHELD_TEXT } from "../core/redact.js";
import { errorMessageOf, listItemsOf, objectReplyOf, type Redact } from "./replies.js";
import { CnfSessionCache, processCnfSessions } from "./session.js";
import { exchange, type HttpExchange } from "./transport.js";

/** A CNF collection, e.g. `{ module: "mwan3", collection: "policies", update: "put" }` (the registry's `entry.cnf`). */
export interface CnfCollectionRef {
  readonly module: string;
  readonly collection: string;
  /** How to change an existing object: PUT (an upsert upstream), or DELETE then POST (CNFService has no PUT). */
  readonly update?: "put" | "delete-then-create";
}

/** Per-collection reply schemas (the registry's `entry.cnfObjectSchema` / `entry.cnfListSchema`). */
export interface CnfReplySchemas {
  readonly item?: z.ZodType<Readonly<Record<string, unknown>>>;
  readonly list?: z.ZodType<Readonly<Record<string, readonly Readonly<Record<string, unknown>>[]>>>;
}

/** An object as the CNF returns it. */
export type CnfReplyObject = Readonly<Record<string, unknown>> & { readonly name: string };
/** A request body: always named. */
export type CnfRequestBody = Readonly<Record<string, unknown>> & { readonly name: string };

export type CnfServiceAction = "start" | "stop" | "restart" | "reload";

/** Where CNF calls are counted: HandlerContext.calls fits. */
export interface CnfCallCounter {
  cnf: number;
  /** Failed logical calls by reason (cnfFailureReason); created on the first failure. */
  cnfFailures?: Record<string, number>;
}

/** pino-compatible subset; the client logs logins (debug) and retries (warn), never secrets. */
export interface CnfLog {
  debug(fields: Record<string, unknown>, message: string): void;
  warn(fields: Record<string, unknown>, message: string): void;
}

export interface CnfClientOptions {
  /** http(s)://<podIP>:<port>/cgi-bin/luci/ — see cnfBaseUrl(). */
  readonly baseUrl: string;
  readonly credentials: CnfCredentials;
  readonly calls?: CnfCallCounter;
  readonly signal?: AbortSignal;
  readonly timeoutMs?: number;
  readonly writeTimeoutMs?: number;
  readonly restartTimeoutMs?: number;
  readonly retry?: Partial<CnfRetryPolicy>;
  readonly sessions?: CnfSessionCache;
  /** PEM CA bundle for an https CNF. */
  readonly ca?: string;
  readonly log?: CnfLog;
  /**
   * Every key this CNF could hold (all its rules' and the Secrets they name): taken out of every
   * text of the CNF's before it is cut, logged or put in an error. Asked for (once) only when a
   * reply is to become such a text: a call that succeeds costs no look-up.
   */
  readonly keys?: () => Promise<KeyMaterial>;
}

interface Call {
  readonly method: "GET" | "POST" | "PUT" | "DELETE";
  readonly path: string;
  readonly body?: unknown;
  readonly timeoutMs?: number;
  /**
   * A write of a CNF object: waited for up to writeTimeoutMs and never re-sent after a timeout,
   * so no attempt of it can land after the call returned (or after a newer write).
   */
  readonly objectWrite?: boolean;
  /** A 404 is an answer (absent), not an error anyone reads: no keys are looked up for it. */
  readonly absentIsAnswer?: boolean;
}

export class CnfClient {
  readonly baseUrl: string;
  private readonly credentials: CnfCredentials;
  private readonly sessions: CnfSessionCache;
  private readonly sessionKey: string;
  private readonly timeoutMs: number;
  private readonly writeTimeoutMs: number;
  private readonly restartTimeoutMs: number;
  private readonly retry: CnfRetryPolicy;

  private echoRedactor: Promise<Redact> | undefined;

  constructor(private readonly options: CnfClientOptions) {
    this.baseUrl = options.baseUrl.endsWith("/") ? options.baseUrl : `${options.baseUrl}/`;
    this.credentials = options.credentials;
    this.sessions = options.sessions ?? processCnfSessions;
    this.sessionKey = CnfSessionCache.key(this.baseUrl, this.credentials.username);
    this.timeoutMs = options.timeoutMs ?? DEFAULT_CNF_TUNING.timeoutMs;
    // Never shorter than a read's: a write is not re-sent, so it gets at least as long.
    this.writeTimeoutMs = Math.max(
      options.writeTimeoutMs ?? DEFAULT_CNF_TUNING.writeTimeoutMs,
      this.timeoutMs,
    );
    this.restartTimeoutMs = options.restartTimeoutMs ?? DEFAULT_CNF_TUNING.restartTimeoutMs;
    this.retry = { ...DEFAULT_CNF_TUNING.retry, ...options.retry };
  }

  /** GET the collection; `{"<collection>": {}}` (an empty Lua table) counts as empty. */
  async list(ref: CnfCollectionRef, schemas?: CnfReplySchemas): Promise<CnfReplyObject[]> {
    return this.call({ method: "GET", path: collectionPath(ref) }, (reply, site, redact) =>
      listItemsOf(site, reply, ref.collection, schemas?.list, redact),
    );
  }

  /** GET one object; undefined when the CNF has none by that name (404). */
  async get(
    ref: CnfCollectionRef,
    name: string,
    schemas?: CnfReplySchemas,
  ): Promise<CnfReplyObject | undefined> {
    const path = itemPath(ref, name);
    try {
      return await this.call({ method: "GET", path, absentIsAnswer: true }, (reply, site, redact) =>
        objectReplyOf(site, reply, schemas?.item, name, redact),
      );
    } catch (error) {
      if (error instanceof CnfHttpError && error.status === 404) return undefined;
      throw error;
    }
  }

  /** POST. Not repeated after a lost reply (a firewall duplicate would result); prefer update(). */
  async create(
    ref: CnfCollectionRef,
    body: CnfRequestBody,
    schemas?: CnfReplySchemas,
  ): Promise<CnfReplyObject> {
    const path = collectionPath(ref);
    return this.call({ method: "POST", path, body, objectWrite: true }, (reply, site, redact) =>
      objectReplyOf(site, reply, schemas?.item, body.name, redact),
    );
  }

  /** Create or replace `body.name`: PUT (upsert upstream), or DELETE then POST for collections without PUT. */
  async update(
    ref: CnfCollectionRef,
    body: CnfRequestBody,
    schemas?: CnfReplySchemas,
  ): Promise<CnfReplyObject> {
    if (ref.update === "delete-then-create") {
      await this.delete(ref, body.name);
      return this.create(ref, body, schemas);
    }
    const path = itemPath(ref, body.name);
    return this.call({ method: "PUT", path, body, objectWrite: true }, (reply, site, redact) =>
      objectReplyOf(site, reply, schemas?.item, body.name, redact),
    );
  }

  /** DELETE; "absent" when the CNF did not have it (404), which callers treat as done. */
  async delete(ref: CnfCollectionRef, name: string): Promise<"deleted" | "absent"> {
    try {
      const path = itemPath(ref, name);
      const call = { method: "DELETE", path, objectWrite: true, absentIsAnswer: true } as const;
      await this.call(call, ignoreBody);
      return "deleted";
    } catch (error) {
      if (error instanceof CnfHttpError && error.status === 404) return "absent";
      throw error;
    }
  }

  /** PUT sdewan/v1/service/<service> {"action": ...}: apply the configuration (reference 3.3). */
  async restartService(
    service: "mwan3" | "firewall" | "ipsec",
    action: CnfServiceAction = "restart",
  ): Promise<void> {
    const path = `sdewan/v1/service/${service}`;
    await this.call(
      { method: "PUT", path, body: { action }, timeoutMs: this.restartTimeoutMs },
      ignoreBody,
    );
  }

  toJSON(): Record<string, unknown> {
    return { baseUrl: this.baseUrl, credentials: this.credentials.toJSON() };
  }

  toString(): string {
    return `CnfClient(${this.baseUrl}, ${this.credentials.toString()})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }

  /**
   * One logical call: in-process retry around one authenticated exchange and the reading of its
   * reply (a garbled reply is retried like a lost one).
   */
  private async call<T>(
    call: Call,
    read: (reply: HttpExchange, site: CnfCallSite, redact: Redact) => T,
  ): Promise<T> {
    const idempotent = call.method !== "POST";
    // A write that timed out may still be applied by the CNF: sending it again would leave two
    // attempts in flight, the older able to land last (over a newer write of another event).
    const mayRetry = (error: unknown): boolean =>
      !(call.objectWrite === true && error instanceof CnfTimeoutError) &&
      isRetryableNow(error, idempotent);
    let attempts = 0;
    try {
      return await pRetry(
        async () => {
          attempts += 1;
          const reply = await this.authenticated(call);
          const site = this.site(call.method, call.path);
          try {
            // Reading a good reply quotes nothing; a bad one is read again with the keys.
            return read(reply, site, withhold);
          } catch (error) {
            if (!(error instanceof CnfBadReplyError)) throw error;
            return read(reply, site, await this.redactor());
          }
        },
        {
          retries: this.retry.retries,
          minTimeout: this.retry.minDelayMs,
          maxTimeout: this.retry.maxDelayMs,
          factor: 2,
          randomize: true,
          maxRetryTime: this.retry.budgetMs,
          ...(this.options.signal === undefined ? {} : { signal: this.options.signal }),
          shouldRetry: ({ error }) => mayRetry(error),
          onFailedAttempt: ({ error, attemptNumber, retriesLeft }) => {
            if (retriesLeft > 0 && mayRetry(error)) {
              this.options.log?.warn(
                {
                  endpoint: this.baseUrl,
                  operation: `${call.method} ${call.path}`,
                  attempt: attemptNumber,
                  error: retryLogText(error),
                },
                "CNF call failed, retrying",
              );
            }
          },
        },
      );
    } catch (error) {
      if (error instanceof CnfError) {
        error.attempts = attempts;
        this.countFailure(error);
        throw error;
      }
      // p-retry rejects with the signal's reason when the caller aborts during a back-off.
      if (this.options.signal?.aborted === true)
        throw new CnfAbortedError(this.site(call.method, call.path));
      throw error;
    }
  }

  /** Counts a failed call for the metrics; an abort or a 404 (absent is an answer) is no failure. */
  private countFailure(error: CnfError): void {
    const calls = this.options.calls;
    const reason = cnfFailureReason(error);
    if (calls === undefined || reason === undefined) return;
    const failures = (calls.cnfFailures ??= {});
    failures[reason] = (failures[reason] ?? 0) + 1;
  }

  /** One request with the session cookie; on 403, one fresh login and one more try (as upstream). */
  private async authenticated(call: Call): Promise<HttpExchange> {
    const token = await this.sessions.obtain(this.sessionKey, () => this.login());
    const first = await this.send(call, token);
    if (first.status !== 403) return await this.checked(call, first);
    this.sessions.forget(this.sessionKey, token);
    const fresh = await this.sessions.obtain(this.sessionKey, () => this.login());
    return this.checked(call, await this.send(call, fresh));
  }

  private async login(): Promise<string> {
    const site = this.site("POST", "(login)");
    const reply = await this.exchange(site, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: this.credentials.loginForm(),
      timeoutMs: this.timeoutMs,
      path: "",
    });
    if (reply.status !== 302) {
      throw new CnfLoginError(
        site,
        reply.status,
        `HTTP ${reply.status} for user ${this.credentials.username}`,
      );
    }
    const token = sysauthToken(reply.headers["set-cookie"]);
    if (token === undefined)
      throw new CnfLoginError(site, reply.status, "no sysauth cookie in the reply");
    this.options.log?.debug(
      { endpoint: this.baseUrl, user: this.credentials.username },
      "CNF login",
    );
    return token;
  }

  private send(call: Call, token: string): Promise<HttpExchange> {
    const body = call.body === undefined ? undefined : JSON.stringify(call.body);
    return this.exchange(this.site(call.method, call.path), {
      method: call.method,
      headers: {
        cookie: `sysauth=${token}`,
        accept: "application/json",
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body }),
      timeoutMs:
        call.timeoutMs ?? (call.objectWrite === true ? this.writeTimeoutMs : this.timeoutMs),
      path: call.path,
      inDoubtOnTimeout: call.objectWrite === true,
    });
  }

  private exchange(
    site: CnfCallSite,
    request: {
      method: string;
      headers: Record<string, string>;
      body?: string;
      timeoutMs: number;
      path: string;
      inDoubtOnTimeout?: boolean;
    },
  ): Promise<HttpExchange> {
    if (this.options.calls !== undefined) this.options.calls.cnf += 1;
    return exchange(site, {
      url: new URL(request.path, this.baseUrl),
      method: request.method,
      headers: request.headers,
      ...(request.body === undefined ? {} : { body: request.body }),
      timeoutMs: request.timeoutMs,
      ...(request.inDoubtOnTimeout === true ? { inDoubtOnTimeout: true } : {}),
      ...(this.options.signal === undefined ? {} : { signal: this.options.signal }),
      ...(this.options.ca === undefined ? {} : { ca: this.options.ca }),
    });
  }

  /** What every key of the CNF is taken out of a CNF's text with (loaded on first use). */
  private redactor(): Promise<Redact> {
    const load = this.options.keys;
    this.echoRedactor ??=
      load === undefined
        ? Promise.resolve((text: string) => KeyMaterial.NONE.redactEcho(text))
        : load()
            // Keys that cannot be looked up: every text of the CNF's is withheld (fails closed).
            .catch(() => new KeyMaterial([], false))
            .then((keys) => (text: string) => keys.redactEcho(text));
    return this.echoRedactor;
  }

  private async checked(call: Call, reply: HttpExchange): Promise<HttpExchange> {
    if (reply.status >= 200 && reply.status < 300) return reply;
    const site = this.site(call.method, call.path);
    const absent = reply.status === 404 && call.absentIsAnswer === true;
    const redact = absent ? withhold : await this.redactor();
    if (reply.status >= 300 && reply.status < 400) {
      throw new CnfBadReplyError(
        site,
        reply.status,
        `unexpected redirect to ${redact(String(reply.headers.location))}`,
      );
    }
    const shown = errorMessageOf(reply.body, redact);
    throw new CnfHttpError(site, reply.status, shown, errorMessageOf(reply.body, unchanged));
  }

  private site(method: string, path: string): CnfCallSite {
    return { endpoint: this.baseUrl, operation: `${method} ${path}`, method };
  }
}

/**
 * What a retry's warning says of the failure: an HTTP error by its status and class only (its
 * text is in the final error); every text is redacted again by the caller, as every line is.
 */
function retryLogText(error: Error): string {
  if (error instanceof CnfHttpError) return `HTTP ${error.status} (${error.rejection})`;
  return error.message;
}

/** The first reading of a reply: a text of the CNF's is never kept unless redacted with the keys. */
const withhold: Redact = () => WITHHELD_TEXT;
/** For classifying a CNF's error only: the text is never kept. */
const unchanged: Redact = (text) => text;

/** Success bodies of DELETE and the service endpoint carry nothing the caller needs. */
const ignoreBody = (): void => undefined;

function collectionPath(ref: CnfCollectionRef): string {
  return `sdewan/${ref.module}/v1/${ref.collection}`;
}

function itemPath(ref: CnfCollectionRef, name: string): string {
  return `${collectionPath(ref)}/${encodeURIComponent(name)}`;
}

function sysauthToken(setCookie: string[] | undefined): string | undefined {
  for (const cookie of setCookie ?? []) {
    const match = /(?:^|;\s*)sysauth=([^;]+)/.exec(cookie);
    if (match?.[1] !== undefined) return match[1];
  }
  return undefined;
}
