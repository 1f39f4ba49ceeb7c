/**
 * A recording stand-in for the OpenFaaS CE gateway's API, on loopback only. OpenFaaS CE cannot
 * run offline (faas-netes exits when it cannot reach the Internet: a licence control, never
 * worked around here), so `faas-cli login`, `deploy`, `secret create`, `list` and `remove` talk
 * to this instead. It answers as the real pair does:
 *
 * - the gateway's part (faas/gateway main.go): its routes and methods (404 "404 page not
 *   found", 405), basic auth on every /system route (401 "invalid credentials" with
 *   `WWW-Authenticate: Basic realm="Restricted"`), /healthz open;
 * - faas-netes's part: deploys (POST/PUT /system/functions) and Secrets (/system/secrets) are
 *   answered by faas-netes's own code through the renderer (provider.ts), so faas-cli sees CE's
 *   real status codes and messages (PUT of an unknown function 404, then POST 202; CE's limits;
 *   a missing Secret 400); the list, status and delete follow faas-netes's handlers.
 *
 * Every request is recorded (method, path, user, status, body; Secret values and passwords
 * never), and each accepted deploy keeps the Deployment and Service faas-netes CE would create.
 */
import { timingSafeEqual } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import * as z from "zod";
import { isIntakeError } from "../../shared/events/errors.js";
import { messageOf } from "../../shared/core/error-message.js";
import { readBody } from "../../shared/runtime/body.js";
import {
  runRenderer,
  type KubeObject,
  type ProviderRequest,
  type ProviderResult,
  type ProviderSecret,
} from "./provider.js";

/** The chart's function namespace (functionNamespace: openfaas-fn). */
export const FUNCTION_NAMESPACE = "openfaas-fn";

/** The gateway's NameExpression: what a function name in a path may hold. */
const NAME = "[-a-zA-Z_0-9.]+";
const MAX_BODY_BYTES = 1024 * 1024;
/** faas-netes labels the Secrets it makes so, and lists only those. */
const MANAGED_BY = { "app.kubernetes.io/managed-by": "openfaas" };

export interface RecordedRequest {
  readonly method: string;
  /** Path and query. */
  readonly path: string;
  /** The basic-auth user sent, if any (never the password). */
  readonly user?: string;
  readonly status: number;
  /** A JSON body parsed (a Secret's value and rawValue replaced by their size), else the text. */
  readonly body?: unknown;
}

export interface DeployedFunction {
  readonly name: string;
  /** The deploy request faas-cli sent, as JSON. */
  readonly request: unknown;
  /** The Deployment and Service faas-netes CE would create for it. */
  readonly objects: readonly KubeObject[];
  /** faas-netes's steps that were not run offline, and why. */
  readonly notRun: readonly string[];
}

export interface RecordingGatewayOptions {
  /** The renderer dev/openfaas/build.sh builds. */
  readonly renderer: string;
  readonly password: string;
  readonly user?: string;
  /** Loopback only. */
  readonly host?: string;
  readonly port?: number;
  /** Secrets that exist before anything is deployed (e.g. made with kubectl). */
  readonly secrets?: readonly ProviderSecret[];
  /** The chart's functions.httpProbe (default true) and functions.setNonRootUser (false). */
  readonly httpProbe?: boolean;
  readonly setNonRootUser?: boolean;
}

interface Reply {
  readonly status: number;
  readonly body?: string;
  readonly contentType?: string;
  readonly headers?: Readonly<Record<string, string>>;
}

type Handler = (request: {
  readonly method: string;
  readonly url: URL;
  readonly params: readonly string[];
  readonly body: string;
}) => Promise<Reply>;

interface Route {
  readonly pattern: RegExp;
  readonly auth: boolean;
  readonly methods: Readonly<Record<string, Handler>>;
}

interface StoredSecret extends ProviderSecret {
  /** The Secret faas-netes would create, values included: in memory only, never recorded. */
  readonly object?: KubeObject;
}

const deleteRequestSchema = z.looseObject({ functionName: z.string().optional() });
const secretBodySchema = z.looseObject({
  value: z.string().optional(),
  rawValue: z.string().optional(),
});
const deploymentSchema = z.looseObject({
  metadata: z.looseObject({ name: z.string() }),
  spec: z.looseObject({ replicas: z.number().int().optional() }).optional(),
});
const secretObjectSchema = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    labels: z.record(z.string(), z.string()).optional(),
  }),
  type: z.string().optional(),
  data: z.record(z.string(), z.string()).optional(),
});

/** http.Error's reply: text/plain, the message and a newline. */
const textError = (status: number, message: string): Reply => ({
  status,
  body: `${message}\n`,
  contentType: "text/plain; charset=utf-8",
  headers: { "X-Content-Type-Options": "nosniff" },
});
const json = (value: unknown): Reply => ({
  status: 200,
  body: JSON.stringify(value),
  contentType: "application/json",
});

/** A Secret request's body with its value and rawValue replaced by their size. */
function redactSecret(body: unknown): unknown {
  const parsed = secretBodySchema.safeParse(body);
  if (!parsed.success) return "<unparsable Secret request, not recorded>";
  const redacted: Record<string, unknown> = { ...parsed.data };
  for (const field of ["value", "rawValue"] as const) {
    const value = parsed.data[field];
    if (value !== undefined) redacted[field] = `<redacted: ${value.length} characters>`;
  }
  return redacted;
}

/** The JSON value of `text`, or undefined when it is not JSON. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function recordedBody(path: string, text: string): unknown {
  const parsed = parseJson(text);
  if (path.startsWith("/system/secrets")) {
    return parsed === undefined
      ? "<unparsable Secret request, not recorded>"
      : redactSecret(parsed);
  }
  return parsed ?? text;
}

function isLoopback(host: string): boolean {
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

export class RecordingGateway {
  readonly requests: RecordedRequest[] = [];
  private readonly deployed = new Map<string, DeployedFunction>();
  private readonly secrets = new Map<string, StoredSecret>();
  private readonly routes: readonly Route[];
  /** One request at a time: each sees the state the previous one left. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly server: Server,
    private readonly options: Required<Omit<RecordingGatewayOptions, "port" | "secrets">>,
    secrets: readonly ProviderSecret[],
  ) {
    for (const secret of secrets) this.secrets.set(secret.name, secret);
    const forward =
      (kind: ProviderRequest["kind"]): Handler =>
      (r) =>
        this.forward(kind, r.method, r.url, r.body);
    this.routes = [
      { pattern: /^\/healthz$/, auth: false, methods: { GET: ok } },
      { pattern: /^\/system\/info$/, auth: true, methods: { GET: () => this.info() } },
      {
        pattern: /^\/system\/functions$/,
        auth: true,
        methods: {
          GET: (r) => this.list(r.url),
          POST: forward("deploy"),
          PUT: forward("deploy"),
          DELETE: (r) => this.remove(r.url, r.body),
        },
      },
      {
        pattern: new RegExp(`^/system/function/(${NAME})$`),
        auth: true,
        methods: { GET: (r) => this.status(r.url, r.params[0] ?? "") },
      },
      {
        pattern: /^\/system\/secrets$/,
        auth: true,
        methods: {
          GET: forward("secret"),
          POST: forward("secret"),
          PUT: forward("secret"),
          DELETE: forward("secret"),
        },
      },
      {
        pattern: /^\/system\/namespaces$/,
        auth: true,
        methods: { GET: () => Promise.resolve(json([FUNCTION_NAMESPACE])) },
      },
      ...[
        [new RegExp(`^/system/scale-function/${NAME}$`), ["POST"]],
        [/^\/system\/logs$/, ["GET"]],
        [/^\/system\/alert$/, ["POST"]],
        [/^\/system\/telemetry$/, ["GET"]],
        [new RegExp(`^/system/namespace/[-a-zA-Z_0-9.]*$`), ["GET", "POST", "PUT", "DELETE"]],
      ].map(([pattern, methods]): Route => ({
        pattern: pattern as RegExp,
        auth: true,
        methods: Object.fromEntries((methods as string[]).map((m) => [m, notServed])),
      })),
      {
        pattern: new RegExp(`^/function/${NAME}(/.*)?$`),
        auth: false,
        methods: Object.fromEntries(
          ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"].map((m) => [m, notServed]),
        ),
      },
    ];
  }

  static async start(options: RecordingGatewayOptions): Promise<RecordingGateway> {
    const host = options.host ?? "127.0.0.1";
    if (!isLoopback(host))
      throw new Error(`the gateway stand-in listens on loopback only, not ${host}`);
    if (options.password === "") throw new Error("a password is required (basic auth is on)");
    const server = createServer();
    const gateway = new RecordingGateway(
      server,
      {
        renderer: options.renderer,
        password: options.password,
        user: options.user ?? "admin",
        host,
        httpProbe: options.httpProbe ?? true,
        setNonRootUser: options.setNonRootUser ?? false,
      },
      options.secrets ?? [],
    );
    server.on("request", (req: IncomingMessage, res: ServerResponse) => {
      // handle() answers every failure itself; this only keeps one broken reply from stopping
      // the requests queued behind it.
      gateway.queue = gateway.queue
        .then(() => gateway.handle(req, res))
        .catch(() => {
          if (!res.headersSent) res.statusCode = 500;
          res.end();
        });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(options.port ?? 0, host, () => resolve());
    });
    return gateway;
  }

  get url(): string {
    const { port } = this.server.address() as AddressInfo;
    return `http://${this.options.host}:${port}`;
  }

  /** The functions deployed, in the order they were first deployed. */
  get functions(): readonly DeployedFunction[] {
    return [...this.deployed.values()];
  }

  /** Every Deployment and Service faas-netes CE would have created, function by function. */
  get objects(): readonly KubeObject[] {
    return this.functions.flatMap((fn) => fn.objects);
  }

  /** The Secrets made through the gateway, as faas-netes would create them (values included). */
  get secretObjects(): readonly KubeObject[] {
    return [...this.secrets.values()].flatMap((s) => (s.object === undefined ? [] : [s.object]));
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://gateway");
    const method = req.method ?? "GET";
    const path = `${url.pathname}${url.search}`;
    const user = basicAuth(req)?.user;
    let text = "";
    let reply: Reply;
    try {
      text = (await readBody(req, MAX_BODY_BYTES))?.toString("utf8") ?? "";
      reply = await this.route(req, method, url, text);
    } catch (error) {
      // An unreadable body is the client's fault; anything else (the renderer failed) is ours.
      reply = isIntakeError(error)
        ? textError(error.httpStatus, error.message)
        : textError(500, `recording gateway stand-in: ${messageOf(error)}`);
    }
    this.requests.push({
      method,
      path,
      ...(user === undefined ? {} : { user }),
      status: reply.status,
      ...(text === "" ? {} : { body: recordedBody(url.pathname, text) }),
    });
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    if (reply.contentType !== undefined) res.setHeader("Content-Type", reply.contentType);
    res.statusCode = reply.status;
    res.end(reply.body ?? "");
  }

  private route(req: IncomingMessage, method: string, url: URL, body: string): Promise<Reply> {
    for (const route of this.routes) {
      const match = route.pattern.exec(url.pathname);
      if (match === null) continue;
      const handler = route.methods[method];
      if (handler === undefined) return Promise.resolve({ status: 405 });
      if (route.auth && !this.authorised(req)) {
        return Promise.resolve({
          status: 401,
          body: "invalid credentials",
          headers: { "WWW-Authenticate": 'Basic realm="Restricted"' },
        });
      }
      return handler({ method, url, params: match.slice(1), body });
    }
    return Promise.resolve(textError(404, "404 page not found"));
  }

  private authorised(req: IncomingMessage): boolean {
    const given = basicAuth(req);
    if (given === undefined || given.user !== this.options.user) return false;
    const expected = Buffer.from(this.options.password);
    const actual = Buffer.from(given.password);
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  }

  private info(): Promise<Reply> {
    return Promise.resolve(
      json({
        provider: {
          provider: "faas-netes-ce (recording stand-in: renders, runs nothing)",
          orchestration: "kubernetes",
          version: { release: "stand-in", sha: "" },
        },
        version: { release: "stand-in", sha: "" },
        arch: process.arch,
      }),
    );
  }

  /** faas-netes's namespace rule for the list, status and delete: only the function namespace. */
  private wrongNamespace(url: URL): Reply | undefined {
    const namespace = url.searchParams.get("namespace") || FUNCTION_NAMESPACE;
    if (namespace === "kube-system") {
      return textError(401, "unable to list within the kube-system namespace");
    }
    if (namespace !== FUNCTION_NAMESPACE) {
      return textError(400, `namespace must be: ${FUNCTION_NAMESPACE}`);
    }
    return undefined;
  }

  private functionStatus(fn: DeployedFunction): Record<string, unknown> {
    const request = z.looseObject({}).catch({}).parse(fn.request);
    const deployment = deploymentSchema.safeParse(fn.objects.find((o) => o.kind === "Deployment"));
    return {
      ...request,
      name: fn.name,
      namespace: FUNCTION_NAMESPACE,
      invocationCount: 0,
      replicas: deployment.success ? (deployment.data.spec?.replicas ?? 1) : 1,
      // Nothing runs: the stand-in only renders.
      availableReplicas: 0,
    };
  }

  private list(url: URL): Promise<Reply> {
    const wrong = this.wrongNamespace(url);
    if (wrong !== undefined) return Promise.resolve(wrong);
    return Promise.resolve(json(this.functions.map((fn) => this.functionStatus(fn))));
  }

  private status(url: URL, name: string): Promise<Reply> {
    const wrong = this.wrongNamespace(url);
    if (wrong !== undefined) return Promise.resolve(wrong);
    const fn = this.deployed.get(name);
    return Promise.resolve(fn === undefined ? { status: 404 } : json(this.functionStatus(fn)));
  }

  /** faas-netes's MakeDeleteHandler: the Deployment and Service go; an unknown name is 404. */
  private remove(url: URL, body: string): Promise<Reply> {
    const wrong = this.wrongNamespace(url);
    if (wrong !== undefined) return Promise.resolve(wrong);
    const request = deleteRequestSchema.safeParse(parseJson(body));
    const name = request.success ? (request.data.functionName ?? "") : "";
    if (name === "") return Promise.resolve({ status: 400 });
    if (!this.deployed.delete(name)) {
      return Promise.resolve({ status: 404, body: `deployments.apps "${name}" not found` });
    }
    return Promise.resolve({ status: 202 });
  }

  /** Deploys and Secrets: faas-netes's own answer, from the renderer. */
  private async forward(
    kind: ProviderRequest["kind"],
    method: string,
    url: URL,
    body: string,
  ): Promise<Reply> {
    const [result] = await runRenderer(this.options.renderer, {
      namespace: FUNCTION_NAMESPACE,
      httpProbe: this.options.httpProbe,
      setNonRootUser: this.options.setNonRootUser,
      functions: [...this.deployed.keys()],
      secrets: [...this.secrets.values()].map(({ name, keys, type, labels }) => ({
        name,
        keys,
        ...(type === undefined ? {} : { type }),
        ...(labels === undefined ? {} : { labels }),
      })),
      requests: [{ kind, method, query: url.search.replace(/^\?/, ""), body }],
    });
    if (result === undefined) throw new Error("the renderer gave no result");
    const success = result.status >= 200 && result.status < 300;
    if (success) this.apply(kind, method, body, result);
    if (result.body === "") return { status: result.status };
    // faas-netes answers errors with http.Error and the Secret list as JSON.
    return success
      ? { status: result.status, body: result.body, contentType: "application/json" }
      : textError(result.status, result.body.replace(/\n$/, ""));
  }

  /** Keeps what an accepted request changed. */
  private apply(
    kind: ProviderRequest["kind"],
    method: string,
    body: string,
    result: ProviderResult,
  ): void {
    if (kind === "deploy") {
      const deployment = deploymentSchema.safeParse(
        result.objects.find((o) => o.kind === "Deployment"),
      );
      if (!deployment.success) return;
      const name = deployment.data.metadata.name;
      this.deployed.set(name, {
        name,
        request: parseJson(body),
        objects: result.objects,
        notRun: result.notRun ?? [],
      });
      return;
    }
    if (method === "DELETE") {
      const name = z.looseObject({ name: z.string() }).safeParse(parseJson(body));
      if (name.success) this.secrets.delete(name.data.name);
      return;
    }
    for (const object of result.objects) {
      const secret = secretObjectSchema.safeParse(object);
      if (!secret.success) continue;
      const { name, labels } = secret.data.metadata;
      this.secrets.set(name, {
        name,
        keys: Object.keys(secret.data.data ?? {}),
        type: secret.data.type ?? "Opaque",
        labels: labels ?? MANAGED_BY,
        object,
      });
    }
  }
}

const ok: Handler = () => Promise.resolve({ status: 200 });
const notServed: Handler = (r) =>
  Promise.resolve(
    textError(
      501,
      `${r.url.pathname}: not served by the recording stand-in of the OpenFaaS gateway (it records and renders deploys; it runs no functions)`,
    ),
  );

function basicAuth(req: IncomingMessage): { user: string; password: string } | undefined {
  const header = req.headers.authorization;
  if (header === undefined || !/^basic /i.test(header)) return undefined;
  const decoded = Buffer.from(header.slice(6).trim(), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return undefined;
  return { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}
