// Knative's real ApiServerSource receive adapter (./cmd/apiserver_receive_adapter, built by
// dev/knative/build.sh from the vendored eventing sources) run outside a cluster against the test
// control plane, as Knative would run it for an ApiServerSource of manifests/knative: its
// K_SOURCE_CONFIG and K_CE_OVERRIDES are made from the manifest (mode, resources, selectors,
// ceOverrides). One deviation, for the same reason as the connector e2e's: the control plane is
// shared with the integration tests, so the watch is narrowed from every namespace to the test's.
//
// The adapter's sink (K_SINK) is a loopback stand-in for the Broker that routes each event by the
// filters of manifests/knative/triggers.yaml to the function server's path the Trigger names, and
// answers the adapter with the function's own reply, so the adapter's retry policy meets the
// functions' answers. It records every delivery (for the tests' counts and latencies).
//
// The adapter binds *:8080 (probes, fixed) and *:8008 (pprof): each runs in a network namespace of
// its own (`unshare -n`, netns-relay.ts), reaching the API server and the sink through Unix sockets.
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { createWriteStream, existsSync, readFileSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import http from "node:http";
import { once } from "node:events";
import { connect, createServer, type AddressInfo, type Server } from "node:net";
import os from "node:os";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { repoRoot } from "../../dev/control-plane/binaries.js";
import { compileLabelSelector, labelSelectorQuery } from "../../shared/core/label-selector.js";
import { isRuleKind, requireKind } from "../../shared/kinds/index.js";
import { inCi } from "../support/in-ci.js";

/** Where the tests run (CI or not), and the `unshare` to probe network namespaces with. */
export interface AvailabilityOptions {
  readonly ci?: boolean;
  readonly unshare?: string;
}

/**
 * The adapter binary, or why the tests that need it skip. In CI nothing skips: the reason is
 * thrown instead, so the test file fails with it.
 */
export function adapterAvailability(options: AvailabilityOptions = {}): {
  binary: string;
  skip?: string;
} {
  const dir =
    execFileSync("bash", [path.join(repoRoot, "dev/knative/build.sh"), "--print-path"], {
      encoding: "utf8",
    })
      .trim()
      .split("\n")
      .pop() ?? "";
  const binary = path.join(dir, "apiserver_receive_adapter");
  const missing = adapterMissing(binary, dir, options.unshare ?? "unshare");
  return { binary, ...skipUnlessCi(options.ci ?? inCi, missing) };
}

/** Why the adapter cannot run here, or undefined when it can. */
function adapterMissing(binary: string, dir: string, unshare: string): string | undefined {
  // Each adapter runs in a network namespace of its own: that takes root (CAP_SYS_ADMIN).
  const netns = spawnSync(unshare, ["-n", "true"], { encoding: "utf8" });
  if (netns.error !== undefined || netns.status !== 0) {
    const why = netns.error?.message ?? netns.stderr.trim();
    return `\`unshare -n\` is not permitted here (run as root): ${why}`;
  }
  if (existsSync(binary)) return undefined;
  const record = path.join(dir, "UNAVAILABLE");
  if (existsSync(record)) return readFileSync(record, "utf8").trim();
  return "run `npm run knative:build`";
}

/** `{ skip: reason }` outside CI; in CI the reason is an error (.ci/run provides every tool). */
export function skipUnlessCi(ci: boolean, reason: string | undefined): { skip?: string } {
  if (reason === undefined) return {};
  if (ci) throw new Error(`CI=true, so this cannot be skipped: ${reason}`);
  return { skip: reason };
}

type Doc = Record<string, unknown>;
const docsOf = (file: string): Doc[] =>
  parseAllDocuments(readFileSync(path.join(repoRoot, file), "utf8"))
    .map((d) => d.toJS() as Doc | null)
    .filter((d): d is Doc => d !== null);

const CORE_PLURALS: Record<string, string> = {
  Pod: "pods",
  Deployment: "deployments",
  Namespace: "namespaces",
  Egress: "egresses",
  Service: "services",
  EndpointSlice: "endpointslices",
  NetworkPolicy: "networkpolicies",
  Export: "exports",
  Import: "imports",
  Peer: "peers",
};

interface SourceResource {
  apiVersion: string;
  kind: string;
  selector?: { matchLabels?: Record<string, string>; matchExpressions?: unknown[] };
}

/**
 * The adapter's environment for ApiServerSource `name` of the manifests, scoped to `namespace`
 * (null: every namespace, as the manifest has it, on a control plane of the test's own).
 */
export function adapterEnvironment(
  name: string,
  namespace: string | null,
  mode?: "Reference" | "Resource",
): Record<string, string> {
  const source = docsOf("manifests/knative/apiserversources.yaml").find(
    (d) => d["kind"] === "ApiServerSource" && (d["metadata"] as Doc)["name"] === name,
  );
  if (source === undefined) throw new Error(`no ApiServerSource ${name} in manifests/knative`);
  const spec = source["spec"] as {
    mode: string;
    resources: SourceResource[];
    ceOverrides?: object;
  };
  const resources = spec.resources.map((r) => {
    const [group, version] = r.apiVersion.includes("/")
      ? r.apiVersion.split("/")
      : ["", r.apiVersion];
    const plural = isRuleKind(r.kind) ? requireKind(r.kind).plural : CORE_PLURALS[r.kind];
    if (plural === undefined) throw new Error(`no plural known for ${r.kind}`);
    const watch: { gvr: object; selector?: string } = {
      gvr: { Group: group, Version: version, Resource: plural },
    };
    if (r.selector !== undefined) {
      const compiled = compileLabelSelector(r.selector as never, "selector");
      if (!compiled.ok) throw new Error(`selector of ${r.kind}: ${JSON.stringify(compiled)}`);
      watch.selector = labelSelectorQuery(compiled.selector) ?? "";
    }
    return watch;
  });
  const config = {
    namespaces: namespace === null ? [] : [namespace],
    allNamespaces: namespace === null,
    mode: mode ?? spec.mode,
    resources,
  };
  return {
    NAME: name,
    NAMESPACE: namespace ?? "sdewan-system",
    K_SOURCE_CONFIG: JSON.stringify(config),
    ...(spec.ceOverrides === undefined ? {} : { K_CE_OVERRIDES: JSON.stringify(spec.ceOverrides) }),
  };
}

/** A Subscriptions API filter of a Trigger (the dialects the manifests use). */
type Filter =
  | { exact: Record<string, string> }
  | { prefix: Record<string, string> }
  | { suffix: Record<string, string> }
  | { any: Filter[] }
  | { all: Filter[] }
  | { not: Filter };

function matches(filter: Filter, attributes: Record<string, string>): boolean {
  const each = (m: Record<string, string>, test: (have: string, want: string) => boolean) =>
    Object.entries(m).every(
      ([k, want]) => attributes[k] !== undefined && test(attributes[k], want),
    );
  if ("exact" in filter) return each(filter.exact, (have, want) => have === want);
  if ("prefix" in filter) return each(filter.prefix, (have, want) => have.startsWith(want));
  if ("suffix" in filter) return each(filter.suffix, (have, want) => have.endsWith(want));
  if ("any" in filter) return filter.any.some((f) => matches(f, attributes));
  if ("all" in filter) return filter.all.every((f) => matches(f, attributes));
  return !matches(filter.not, attributes);
}

interface Trigger {
  readonly name: string;
  readonly filters: Filter[];
  readonly uri: string;
  readonly delivery: { retry?: number; backoffPolicy?: string; backoffDelay?: string };
}

/** Seconds of an ISO 8601 time duration (PT8S, PT0.5S, PT1M). */
function isoSeconds(duration: string): number {
  const match = /^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?$/.exec(duration);
  if (match === null) throw new Error(`not an ISO 8601 time duration: ${duration}`);
  return Number(match[1] ?? 0) * 3600 + Number(match[2] ?? 0) * 60 + Number(match[3] ?? 0);
}

/** Knative's Broker retries these answers; any other failure goes to the dead-letter sink. */
const RETRYABLE = (status: number) => status >= 500 || [404, 408, 409, 429].includes(status);

/**
 * How the stand-in Broker delivers. "direct": synchronously, the function's answer goes back to
 * the adapter (so the adapter's own retry policy applies, as with a sink that is the function).
 * "broker": as Knative's Broker does, accept at once (202), then deliver per the Trigger's
 * `delivery` (retry, backoffPolicy, backoffDelay; Retry-After ignored, as without the
 * delivery-retryafter feature), and dead-letter what is still failing when the retries run out;
 * every wait multiplied by `timeScale` (1/60: a minute of the Broker's time is a second here).
 * Retry n waits backoffDelay x n (linear) or x 2^n (exponential), n from 0: the shorter reading.
 */
export type DeliveryMode = { mode: "direct" } | { mode: "broker"; timeScale: number };

/** An event the stand-in Broker gave up on (it would go to the Trigger's dead-letter sink). */
export interface DeadLetter {
  readonly trigger: string;
  readonly kind: string;
  readonly name: string;
  readonly attempts: number;
  readonly lastStatus: number;
}

/** One event as the stand-in Broker saw it, and what the function answered. */
export interface Delivery {
  /** When the delivery to the function started, and when its answer came (ms since epoch). */
  readonly sentAt: number;
  readonly at: number;
  readonly trigger: string;
  readonly type: string;
  readonly kind: string;
  readonly name: string;
  readonly status: number;
}

/** The stand-in Broker: Triggers of manifests/knative routed to `functionsUrl`. */
export class TriggerRouter {
  readonly deliveries: Delivery[] = [];
  /** Every delivery as it starts (a Delivery is recorded when the answer comes). */
  readonly sends: { readonly kind: string; readonly name: string; readonly at: number }[] = [];
  readonly deadLetters: DeadLetter[] = [];
  /** "direct" until set (see DeliveryMode). */
  delivery: DeliveryMode = { mode: "direct" };
  /** Events the stand-in Broker accepted for a Trigger in "broker" mode. */
  accepted = 0;
  private closed = false;
  private readonly inFlight = new Set<Promise<void>>();
  /** Events no Trigger took (by type and kind). */
  readonly unrouted: string[] = [];
  private constructor(
    private readonly server: http.Server,
    readonly port: number,
  ) {}

  static async start(functionsUrl: string, functions: readonly string[]): Promise<TriggerRouter> {
    const triggers: Trigger[] = docsOf("manifests/knative/triggers.yaml")
      .filter((d) => d["kind"] === "Trigger")
      .map((d) => {
        const spec = d["spec"] as {
          filters?: Filter[];
          subscriber: { uri: string };
          delivery?: Trigger["delivery"];
        };
        return {
          name: (d["metadata"] as Doc)["name"] as string,
          filters: spec.filters ?? [],
          uri: spec.subscriber.uri,
          delivery: spec.delivery ?? {},
        };
      })
      .filter((t) => functions.includes(t.uri.replace(/^\//, "")));
    const holder: { router?: TriggerRouter } = {};
    const server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        void holder.router?.route(triggers, functionsUrl, req, Buffer.concat(chunks)).then(
          ({ status, body }) => res.writeHead(status).end(body),
          () => res.writeHead(502).end(),
        );
      });
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    holder.router = new TriggerRouter(server, (server.address() as AddressInfo).port);
    return holder.router;
  }

  private async route(
    triggers: readonly Trigger[],
    functionsUrl: string,
    req: http.IncomingMessage,
    body: Buffer,
  ): Promise<{ status: number; body: string }> {
    const attributes: Record<string, string> = {};
    const headers: Record<string, string> = {};
    for (const [key, value] of Object.entries(req.headers)) {
      if (key.startsWith("ce-")) attributes[key.slice(3)] = String(value);
      if (key.startsWith("ce-") || key === "content-type") headers[key] = String(value);
    }
    const taken = triggers.filter((t) => t.filters.every((f) => matches(f, attributes)));
    if (taken.length === 0) {
      this.unrouted.push(`${attributes["type"]} ${attributes["kind"]}`);
      return { status: 202, body: "" };
    }
    const send = (trigger: Trigger) =>
      this.send(trigger, `${functionsUrl}${trigger.uri}`, headers, body, attributes);
    const delivery = this.delivery;
    if (delivery.mode === "broker") {
      for (const trigger of taken) {
        this.accepted += 1;
        const job = this.dispatch(trigger, () => send(trigger), delivery.timeScale, attributes);
        this.inFlight.add(job);
        void job.finally(() => this.inFlight.delete(job));
      }
      return { status: 202, body: "" };
    }
    let worst = { status: 200, body: "" };
    for (const trigger of taken) {
      const reply = await send(trigger);
      if (reply.status >= worst.status) worst = reply;
    }
    return worst;
  }

  private async send(
    trigger: Trigger,
    url: string,
    headers: Record<string, string>,
    body: Buffer,
    attributes: Record<string, string>,
  ): Promise<{ status: number; body: string }> {
    const sentAt = Date.now();
    this.sends.push({ kind: attributes["kind"] ?? "", name: attributes["name"] ?? "", at: sentAt });
    const reply = await fetch(url, {
      method: "POST",
      headers,
      body,
      signal: AbortSignal.timeout(60_000),
    }).catch(() => undefined);
    const status = reply?.status ?? 502;
    const text = (await reply?.text().catch(() => "")) ?? "";
    this.deliveries.push({
      sentAt,
      at: Date.now(),
      trigger: trigger.name,
      type: attributes["type"] ?? "",
      kind: attributes["kind"] ?? "",
      name: attributes["name"] ?? "",
      status,
    });
    return { status, body: text };
  }

  /** The Broker's delivery of one event to one Trigger: retries, then the dead-letter sink. */
  private async dispatch(
    trigger: Trigger,
    send: () => Promise<{ status: number }>,
    timeScale: number,
    attributes: Record<string, string>,
  ): Promise<void> {
    const retries = trigger.delivery.retry ?? 0;
    const delay = isoSeconds(trigger.delivery.backoffDelay ?? "PT0S");
    let status = 0;
    let attempts = 0;
    for (let attempt = 0; attempt <= retries && !this.closed; attempt += 1) {
      if (attempt > 0) {
        const n = attempt - 1;
        const wait = trigger.delivery.backoffPolicy === "linear" ? delay * n : delay * 2 ** n;
        await new Promise((resolve) => setTimeout(resolve, wait * 1000 * timeScale));
        if (this.closed) return;
      }
      status = (await send()).status;
      attempts += 1;
      if (status < 300) return;
      if (!RETRYABLE(status)) break;
    }
    if (this.closed) return;
    this.deadLetters.push({
      trigger: trigger.name,
      kind: attributes["kind"] ?? "",
      name: attributes["name"] ?? "",
      attempts,
      lastStatus: status,
    });
  }

  /** Events the stand-in Broker is still delivering (retrying). */
  get inFlightCount(): number {
    return this.inFlight.size;
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.inFlight);
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Relays <dir>/<port>.sock to 127.0.0.1:<port> (the outer side of netns-relay.ts). */
async function unixRelay(dir: string, port: number): Promise<Server> {
  const server = createServer((inner) => {
    const outer = connect(port, "127.0.0.1");
    inner.pipe(outer).pipe(inner);
    const drop = () => {
      inner.destroy();
      outer.destroy();
    };
    inner.on("error", drop).on("close", drop);
    outer.on("error", drop).on("close", drop);
  });
  server.listen(path.join(dir, `${port}.sock`));
  await once(server, "listening");
  return server;
}

export interface AdapterOptions {
  readonly binary: string;
  readonly kubeconfigPath: string;
  readonly apiServer: string;
  readonly sinkPort: number;
  readonly env: Record<string, string>;
}

/** One adapter process in its own network namespace. */
export class KnativeAdapter {
  private readonly dir: string;
  readonly logPath: string;
  private readonly relays: Server[];
  private readonly child: ReturnType<typeof spawn>;
  readonly exited: Promise<string>;
  /** How many watches it opens (one per resource of its source, in one namespace). */
  readonly watches: number;

  private constructor(parts: {
    dir: string;
    logPath: string;
    relays: Server[];
    child: ReturnType<typeof spawn>;
    exited: Promise<string>;
    watches: number;
  }) {
    this.dir = parts.dir;
    this.logPath = parts.logPath;
    this.relays = parts.relays;
    this.child = parts.child;
    this.exited = parts.exited;
    this.watches = parts.watches;
  }

  /** Starts it and resolves once every watch has listed (so no later change is missed). */
  static async start(options: AdapterOptions, timeoutMs = 60_000): Promise<KnativeAdapter> {
    const dir = await mkdtemp(path.join(os.tmpdir(), "sdewan-kn-adapter-"));
    const apiPort = Number(new URL(options.apiServer).port);
    const relays = [await unixRelay(dir, apiPort), await unixRelay(dir, options.sinkPort)];
    const logPath = path.join(dir, "adapter.log");
    const log = createWriteStream(logPath);
    const watches = (JSON.parse(options.env["K_SOURCE_CONFIG"] ?? "{}") as { resources?: [] })
      .resources?.length;
    const child = spawn(
      "unshare",
      [
        "-n",
        "--",
        process.execPath,
        "--import",
        "tsx",
        path.join(repoRoot, "test/e2e/netns-relay.ts"),
        dir,
        `${apiPort},${options.sinkPort}`,
        "--",
        options.binary,
      ],
      {
        cwd: repoRoot,
        env: {
          PATH: process.env["PATH"] ?? "/usr/bin:/bin",
          KUBECONFIG: options.kubeconfigPath,
          K_SINK: `http://127.0.0.1:${options.sinkPort}/`,
          // "Caches populated" per watch (client-go's reflector, klog V(2)): the readiness signal.
          K_KLOG_VERBOSITY: "2",
          ...options.env,
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    child.stdout?.pipe(log, { end: false });
    child.stderr?.pipe(log, { end: false });
    const exited = new Promise<string>((resolve) => {
      child.once("exit", (code, signal) => resolve(signal ?? `exit ${code ?? "?"}`));
    });
    void exited.then(() => log.end());
    const adapter = new KnativeAdapter({
      dir,
      logPath,
      relays,
      child,
      exited,
      watches: watches ?? 0,
    });
    const started = Date.now();
    for (;;) {
      const populated = (await adapter.log()).split("Caches populated").length - 1;
      if (populated >= adapter.watches) break;
      const done = await Promise.race([
        exited,
        new Promise<undefined>((resolve) => setTimeout(resolve, 100, undefined)),
      ]);
      if (done !== undefined || Date.now() - started > timeoutMs) {
        const tail = (await adapter.log()).split("\n").slice(-20).join("\n");
        await adapter.stop();
        throw new Error(
          `adapter not watching (${populated}/${adapter.watches}): ${done ?? "timeout"}\n${tail}`,
        );
      }
    }
    return adapter;
  }

  log(): Promise<string> {
    return readFile(this.logPath, "utf8").catch(() => "");
  }

  async stop(keepLog = false): Promise<string> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill("SIGTERM");
    const timer = setTimeout(() => this.child.kill("SIGKILL"), 10_000);
    const how = await this.exited;
    clearTimeout(timer);
    await Promise.all(
      this.relays.map((r) => new Promise<void>((resolve) => r.close(() => resolve()))),
    );
    if (keepLog) process.stderr.write(`adapter log kept in ${this.logPath}\n`);
    else await rm(this.dir, { recursive: true, force: true });
    return how;
  }
}
