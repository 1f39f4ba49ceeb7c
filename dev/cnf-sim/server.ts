/**
 * The simulator's HTTP side: LuCI-style routing under /cgi-bin/luci/, the sysauth login, fault
 * injection, counting, and the control API under /_sim/. One instance is one CNF pod.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { once } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import * as z from "zod";
import type { SimCollection } from "./collection.js";
import {
  connectionModeSchema,
  countCollection,
  emptyCounters,
  FaultQueue,
  simFaultSchema,
  type SimCounters,
  type SimFault,
  type SimFaultInput,
  type SimRequestRecord,
} from "./control.js";
import { CnfModel } from "./model.js";
import { errorReply, objectReply, pageNotFound, type SimReply } from "./replies.js";
import {
  fakeClusterDns,
  handleServiceAction,
  handleServiceList,
  type ServiceAction,
  type ServiceResolver,
} from "./services.js";

export interface CnfSimOptions {
  /** Loopback address to bind, e.g. 127.0.0.2 (all of 127.0.0.0/8 is bindable on Linux). */
  readonly host?: string;
  /** 0 picks a free port. */
  readonly port?: number;
  /** Upstream: user `root`, password "" (DESIGN); HEAD reads the password from a Secret. */
  readonly username?: string;
  readonly password?: string;
  /**
   * Refuse CNF requests without a live sysauth cookie (403). Upstream LuCI probably does not
   * enforce it on the sdewan nodes (reference 2.1); the simulator does by default so the
   * client's login and re-login paths are exercised.
   */
  readonly requireLogin?: boolean;
  /** Pod interfaces the CNF knows (mwan3 and network interface sections). */
  readonly interfaces?: readonly string[];
  /** DNS for CNFService; undefined answers 408 as upstream does after its nslookup retries. */
  readonly resolveService?: ServiceResolver;
  readonly sessionIdleMs?: number;
}

export interface SimState {
  readonly collections: Record<string, Record<string, unknown>[]>;
  readonly sessions: number;
}

/** A running simulator. Control methods act at once; nothing here needs a sleep to take effect. */
export interface CnfSim {
  /** Base URL of the CNF REST API: http://<host>:<port>/cgi-bin/luci/ */
  readonly url: string;
  readonly origin: string;
  readonly host: string;
  readonly port: number;
  readonly username: string;
  /** Make matching requests fail, hang, slow down, answer garbage or reset. */
  failNext(fault: SimFaultInput): void;
  clearFaults(): void;
  /** Close the listener and every open connection: new connections are refused. */
  refuseConnections(): Promise<void>;
  /** Listen again on the same address and port. */
  acceptConnections(): Promise<void>;
  /** While on, every CNF request's socket is destroyed unanswered (control requests still work). */
  resetConnections(on: boolean): void;
  /** A CNF restart: drops every object and every session. Counters and logs are kept. */
  restartCnf(): void;
  /** Drops the LuCI sessions only, as an expired cookie would. */
  expireSessions(): void;
  counters(): SimCounters;
  resetCounters(): void;
  state(): SimState;
  /** Every accepted call of the service endpoint, oldest first. */
  serviceActions(): ServiceAction[];
  requests(): SimRequestRecord[];
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 1 << 20;
const MAX_LOG = 10_000;
const CNF_MODULES = new Set(["mwan3", "firewall", "ipsec", "service"]);
const LOGIN_PAGE = "<html><body><form method=post>LuCI login (cnf-sim)</form></body></html>";
/** uhttpd's front page on OpenWrt: no login, it sends the browser on to LuCI. */
const FRONT_PAGE =
  '<html><head><meta http-equiv="refresh" content="0; URL=/cgi-bin/luci/"></head>' +
  '<body><a href="/cgi-bin/luci/">LuCI (cnf-sim)</a></body></html>';

interface CnfRequest {
  readonly method: string;
  readonly segments: readonly string[];
  readonly body: string;
  readonly req: IncomingMessage;
  readonly res: ServerResponse;
}

type Target =
  | { readonly kind: "login" | "logout" | "help" | "services" | "not-found" }
  | { readonly kind: "restart"; readonly service: string }
  | { readonly kind: "collection"; readonly key: string; readonly collection: SimCollection };

export async function startCnfSim(options: CnfSimOptions = {}): Promise<CnfSim> {
  const sim = new Simulator(options);
  await sim.listen(options.port ?? 0);
  return sim.api();
}

class Simulator {
  private readonly host: string;
  private port = 0;
  private readonly server: Server;
  private model: CnfModel;
  private readonly faults = new FaultQueue();
  private counters = emptyCounters();
  private actions: ServiceAction[] = [];
  private log: SimRequestRecord[] = [];
  private seq = 0;
  private resetting = false;
  private reopenTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly options: CnfSimOptions) {
    this.host = options.host ?? "127.0.0.1";
    this.model = this.newModel();
    this.server = createServer((req, res) => {
      this.onRequest(req, res).catch((error: unknown) => {
        if (!res.headersSent) send(res, errorReply(500, `cnf-sim: ${String(error)}`));
      });
    });
  }

  async listen(port: number): Promise<void> {
    this.server.listen({ host: this.host, port, exclusive: true });
    await once(this.server, "listening");
    const address = this.server.address();
    if (address === null || typeof address === "string") throw new Error("cnf-sim: no TCP address");
    this.port = address.port;
  }

  api(): CnfSim {
    const origin = `http://${this.host}:${this.port}`;
    return {
      url: `${origin}/cgi-bin/luci/`,
      origin,
      host: this.host,
      port: this.port,
      username: this.options.username ?? "root",
      failNext: (fault) => this.faults.add(fault),
      clearFaults: () => this.faults.clear(),
      refuseConnections: () => this.refuse(),
      acceptConnections: () => this.accept(),
      resetConnections: (on) => {
        this.resetting = on;
      },
      restartCnf: () => {
        this.model = this.newModel();
      },
      expireSessions: () => this.model.expireSessions(),
      counters: () => structuredClone(this.counters),
      resetCounters: () => {
        this.counters = emptyCounters();
        this.actions = [];
        this.log = [];
      },
      state: () => ({ collections: this.model.state(), sessions: this.model.sessionCount }),
      serviceActions: () => [...this.actions],
      requests: () => this.log.map((entry) => ({ ...entry })),
      close: () => this.close(),
    };
  }

  private newModel(): CnfModel {
    return new CnfModel({
      interfaces: this.options.interfaces ?? ["net0", "net1", "net2", "net3", "net4", "net5"],
      resolveService: this.options.resolveService ?? fakeClusterDns,
      sessionIdleMs: this.options.sessionIdleMs ?? 300_000,
    });
  }

  private async refuse(): Promise<void> {
    if (!this.server.listening) return;
    const closed = once(this.server, "close");
    this.server.close();
    this.server.closeAllConnections();
    await closed;
  }

  private async accept(): Promise<void> {
    clearTimeout(this.reopenTimer);
    this.resetting = false;
    if (this.server.listening || this.closed) return;
    await this.listen(this.port);
  }

  private async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.reopenTimer);
    await this.refuse();
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const method = req.method ?? "GET";
    // REQUEST_URI is split raw upstream (no percent-decoding); the query string is ignored here.
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    const body = await readBody(req);
    if (path === "/_sim" || path.startsWith("/_sim/")) {
      send(res, this.control(method, path, body));
      return;
    }
    // The web server's front page, what a CNF Deployment's readiness probe asks (GET / on the
    // CNF port): served by uhttpd, not LuCI, so it is no CNF request (not logged, not faulted).
    if (path === "/" && (method === "GET" || method === "HEAD")) {
      send(res, { status: 200, body: FRONT_PAGE, contentType: "text/html" });
      return;
    }
    const record: SimRequestRecord = { seq: ++this.seq, method, path, status: null, fault: null };
    this.log.push(record);
    if (this.log.length > MAX_LOG) this.log.shift();
    if (this.resetting) {
      req.socket.destroy();
      return;
    }
    const segments = path.split("/").filter((segment) => segment.length > 0);
    const target = this.route(segments);
    const fault = this.faults.take(method, targetNames(target));
    if (fault !== undefined) {
      record.fault = fault.kind;
      if (fault.kind === "delay") await delay(fault.ms);
      else if (fault.kind === "lie" && target.kind === "collection") {
        const reply = lieAbout(target.collection, method, segments, body, () =>
          this.serve({ method, segments, body, req, res }, target),
        );
        record.status = reply.status;
        send(res, reply);
        return;
      } else if (fault.kind !== "lie") {
        applyFault(fault, req, res, record);
        return;
      }
    }
    const reply = this.serve({ method, segments, body, req, res }, target);
    record.status = reply.status;
    send(res, reply);
  }

  private route(segments: readonly string[]): Target {
    const [cgi, luci, area, second, third, fourth] = segments;
    if (cgi !== "cgi-bin" || luci !== "luci") return { kind: "not-found" };
    if (area === undefined) return { kind: "login" };
    if (area === "admin" && second === "logout" && segments.length === 4) return { kind: "logout" };
    if (area !== "sdewan") return { kind: "not-found" };
    if (second === "v1") {
      if (third === undefined) return { kind: "help" };
      if (third === "services" && segments.length === 5) return { kind: "services" };
      // The service node is a LuCI leaf: extra segments reach the handler, which checks them.
      if (third === "service") return { kind: "restart", service: fourth ?? "" };
      return { kind: "not-found" };
    }
    if (second === undefined || !CNF_MODULES.has(second) || third !== "v1")
      return { kind: "not-found" };
    if (fourth === undefined) return { kind: "help" };
    const collection = this.model.collection(second, fourth);
    if (collection === undefined) return { kind: "not-found" };
    return { kind: "collection", key: `${second}/${fourth}`, collection };
  }

  private serve(request: CnfRequest, target: Target): SimReply {
    const { method, segments, body, req, res } = request;
    if (target.kind === "login") return this.login(method, body, req, res);
    if (target.kind === "not-found") return pageNotFound();
    const now = Date.now();
    const cookie = sysauthCookie(req.headers.cookie);
    if (this.options.requireLogin !== false && !this.model.touchSession(cookie, now)) {
      this.counters.unauthorized += 1;
      return { status: 403, body: LOGIN_PAGE, contentType: "text/html", reason: "Forbidden" };
    }
    switch (target.kind) {
      case "logout":
        this.model.closeSession(cookie);
        res.setHeader("Location", "/cgi-bin/luci/");
        return { status: 302, body: "", contentType: "text/html" };
      case "help":
        return objectReply(200, { message: "sdewan restful API service v1" });
      case "services":
        return handleServiceList(method);
      case "restart":
        this.counters.serviceActions += 1;
        return handleServiceAction(method, segments, body, (service, action, command) => {
          this.actions.push({
            seq: this.actions.length + 1,
            service,
            action,
            command,
            at: new Date(now).toISOString(),
          });
        });
      case "collection":
        countCollection(this.counters, target.key, method);
        return target.collection.handle(method, segments, body);
    }
  }

  /** LuCI's login: POST luci_username/luci_password; 302 + sysauth cookie, else the login page with 403. */
  private login(method: string, body: string, req: IncomingMessage, res: ServerResponse): SimReply {
    if (method !== "POST") {
      const live = this.model.touchSession(sysauthCookie(req.headers.cookie), Date.now());
      return { status: live ? 200 : 403, body: LOGIN_PAGE, contentType: "text/html" };
    }
    const form = new URLSearchParams(body);
    const valid =
      form.get("luci_username") === (this.options.username ?? "root") &&
      (form.get("luci_password") ?? "") === (this.options.password ?? "");
    if (!valid) {
      this.counters.failedLogins += 1;
      return { status: 403, body: LOGIN_PAGE, contentType: "text/html", reason: "Forbidden" };
    }
    this.counters.logins += 1;
    const token = this.model.openSession(Date.now());
    res.setHeader("Set-Cookie", `sysauth=${token}; path=/cgi-bin/luci/; HttpOnly`);
    res.setHeader("Location", "/cgi-bin/luci/");
    return { status: 302, body: "", contentType: "text/html" };
  }

  private control(method: string, path: string, body: string): SimReply {
    try {
      return this.controlRoute(`${method} ${path.replace(/\/+$/, "")}`, body);
    } catch (error) {
      const message = error instanceof z.ZodError ? z.prettifyError(error) : String(error);
      return { status: 400, body: JSON.stringify({ message }), contentType: "application/json" };
    }
  }

  private controlRoute(route: string, body: string): SimReply {
    const json = (): unknown => (body.trim() === "" ? {} : JSON.parse(body));
    const api = this.api();
    switch (route) {
      case "GET /_sim/state":
        return objectReply(200, api.state());
      case "GET /_sim/counters":
        return objectReply(200, api.counters());
      case "DELETE /_sim/counters":
        api.resetCounters();
        return objectReply(200, { message: "counters reset" });
      case "GET /_sim/restarts":
        return objectReply(200, api.serviceActions());
      case "GET /_sim/requests":
        return objectReply(200, api.requests());
      case "GET /_sim/faults":
        return objectReply(200, this.faults.list());
      case "POST /_sim/faults": {
        const parsed = z.union([simFaultSchema, z.array(simFaultSchema)]).parse(json());
        for (const fault of Array.isArray(parsed) ? parsed : [parsed]) this.faults.add(fault);
        return objectReply(201, this.faults.list());
      }
      case "DELETE /_sim/faults":
        this.faults.clear();
        return objectReply(200, { message: "faults cleared" });
      case "POST /_sim/restart":
        api.restartCnf();
        return objectReply(200, { message: "cnf restarted: state dropped" });
      case "POST /_sim/sessions/expire":
        api.expireSessions();
        return objectReply(200, { message: "sessions expired" });
      case "POST /_sim/connections":
        return this.connectionsControl(connectionModeSchema.parse(json()));
      default:
        return {
          status: 404,
          body: JSON.stringify({ message: `no control route ${route}` }),
          contentType: "application/json",
        };
    }
  }

  private connectionsControl(mode: z.output<typeof connectionModeSchema>): SimReply {
    if (mode.mode === "reset" || mode.mode === "accept") {
      this.resetting = mode.mode === "reset";
      return objectReply(200, { message: `connections: ${mode.mode}` });
    }
    // The listener closes after this reply is written; it comes back by itself after forMs.
    setImmediate(() => {
      void this.refuse().then(() => {
        this.reopenTimer = setTimeout(() => void this.accept(), mode.forMs);
      });
    });
    return objectReply(200, { message: `connections refused for ${mode.forMs} ms` });
  }
}

function applyFault(
  fault: SimFault,
  req: IncomingMessage,
  res: ServerResponse,
  record: SimRequestRecord,
): void {
  switch (fault.kind) {
    case "status": {
      const reply = errorReply(fault.status, fault.message ?? `cnf-sim injected ${fault.status}`);
      record.status = reply.status;
      send(res, reply);
      return;
    }
    case "garbage":
      record.status = fault.status;
      send(res, { status: fault.status, body: fault.body, contentType: "application/json" });
      return;
    case "reset":
      req.socket.destroy();
      return;
    case "hang":
    case "delay":
    case "lie":
      return; // hang: the response is never written; close() destroys the socket
  }
}

/**
 * Serves a collection write, then puts the object back as it was: the reply is the CNF's own,
 * the state unchanged ("lie" fault). Reads are served as they are.
 */
function lieAbout(
  collection: SimCollection,
  method: string,
  segments: readonly string[],
  body: string,
  serve: () => SimReply,
): SimReply {
  if (method !== "POST" && method !== "PUT" && method !== "DELETE") return serve();
  const name = method === "POST" ? nameIn(body) : segments[6];
  const before = collection.list().find((o) => o["name"] === name);
  const reply = serve();
  if (reply.status >= 300 || name === undefined) return reply;
  const base = segments.slice(0, 6);
  if (before === undefined) collection.handle("DELETE", [...base, name], "");
  else if (method === "DELETE") collection.handle("POST", base, JSON.stringify(before));
  else collection.handle("PUT", [...base, name], JSON.stringify(before));
  return reply;
}

function nameIn(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    const name = (parsed as { name?: unknown } | null)?.name;
    return typeof name === "string" ? name : undefined;
  } catch {
    return undefined;
  }
}

function targetNames(target: Target): string[] {
  switch (target.kind) {
    case "collection":
      return [target.key, target.key.split("/")[1] ?? ""];
    case "restart":
      return ["restart", `restart/${target.service}`];
    default:
      return [target.kind];
  }
}

function sysauthCookie(header: string | undefined): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const [key, ...value] = part.trim().split("=");
    if (key === "sysauth") return value.join("=");
  }
  return undefined;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > MAX_BODY_BYTES) throw new Error("request body too large");
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString("utf8");
}

function send(res: ServerResponse, reply: SimReply): void {
  if (res.headersSent || res.destroyed) return;
  res.statusCode = reply.status;
  if (reply.reason !== undefined) res.statusMessage = statusLineSafe(reply.reason);
  res.setHeader("Content-Type", reply.contentType);
  res.end(reply.body);
}

/** A reason phrase may hold only visible ASCII and spaces. */
function statusLineSafe(reason: string): string {
  return reason.replace(/[^\x20-\x7e]/g, "?").slice(0, 200);
}
