/**
 * The connector's configuration: a YAML file (--config or CONNECTOR_CONFIG) validated with zod,
 * with a few environment overrides applied before validation (so they are validated too).
 * Durations are Go-style strings ("250ms", "30s", "5m", "1h30m") or plain numbers of seconds.
 */
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import * as z from "zod";
import { compileLabelSelector, labelSelectorQuery } from "../shared/core/label-selector.js";
import { messageOf } from "../shared/core/error-message.js";

const DURATION_PART = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
const DURATION = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h))+$/;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;

/** "1m30s" -> 90000; a number means seconds. */
export function parseDuration(value: string | number): number | undefined {
  if (typeof value === "number")
    return Number.isFinite(value) && value >= 0 ? value * 1000 : undefined;
  const text = value.trim();
  if (!DURATION.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(DURATION_PART)) {
    total += Number(amount) * UNIT_MS[unit as keyof typeof UNIT_MS];
  }
  return Math.round(total);
}

const duration = (what: string) =>
  z.union([z.number(), z.string()]).transform((value, ctx) => {
    const ms = parseDuration(value);
    if (ms === undefined) {
      ctx.addIssue({
        code: "custom",
        message: `${what}: "${value}" is not a duration like 30s, 5m, 1h`,
      });
      return z.NEVER;
    }
    return ms;
  });

const positiveDuration = (what: string) =>
  duration(what).refine((ms) => ms > 0, { message: `${what} must be longer than 0` });

const labelValue = z.string();
const labelSelectorObject = z.strictObject({
  matchLabels: z.record(z.string(), labelValue).optional(),
  matchExpressions: z
    .array(
      z.strictObject({
        key: z.string().min(1),
        operator: z.enum(["In", "NotIn", "Exists", "DoesNotExist"]),
        values: z.array(labelValue).optional(),
      }),
    )
    .optional(),
});
export type LabelSelectorObject = z.infer<typeof labelSelectorObject>;

/** metav1.LabelSelector -> the labelSelector query string, through shared/core's one selector module. */
function selectorQuery(selector: LabelSelectorObject, ctx: z.RefinementCtx): string {
  const compiled = compileLabelSelector(selector, "selector");
  if (compiled.ok) return labelSelectorQuery(compiled.selector) ?? "";
  for (const error of compiled.errors)
    ctx.addIssue({ code: "custom", message: `${error.path}: ${error.message}` });
  return z.NEVER;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

const resourceSchema = z.strictObject({
  apiVersion: z
    .string()
    .regex(/^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?v[0-9]+((alpha|beta)[0-9]+)?$/, {
      message: 'apiVersion must be "v1" or "<group>/<version>"',
    }),
  kind: z.string().regex(/^[A-Z][A-Za-z0-9]*$/, { message: "kind must be a Kind name like Pod" }),
  /** "app=x,tier in (a,b)" or a metav1.LabelSelector object, as in ApiServerSource. */
  selector: z
    .union([z.string(), labelSelectorObject])
    .transform((s, ctx) => (typeof s === "string" ? s : selectorQuery(s, ctx)))
    .optional()
    .transform((s) => (s === "" ? undefined : s)),
  /** Absent: all namespaces with one watch (and the only form for cluster-scoped kinds). */
  namespaces: z.array(z.string().regex(DNS_LABEL)).min(1).optional(),
});

const routeSchema = z
  .strictObject({
    name: z.string().regex(DNS_LABEL, { message: "route name must be a DNS label" }),
    url: z.url({ protocol: /^https?$/ }),
    mode: z.enum(["Reference", "Resource"]).default("Reference"),
    /** Emits RESYNC_EVENT_TYPE (data {}) to this route's URL on this period. */
    resync: positiveDuration("resync").optional(),
    resources: z.array(resourceSchema).default([]),
  })
  .refine((r) => r.resources.length > 0 || r.resync !== undefined, {
    message: "a route needs resources to watch, a resync period, or both",
  });

const configSchema = z
  .strictObject({
    /** ce-source of object events; default: the API server URL (as ApiServerSource does). */
    source: z.string().min(1).optional(),
    http: z
      .strictObject({
        host: z.string().default("0.0.0.0"),
        port: z.number().int().min(0).max(65535).default(8080),
      })
      .prefault({}),
    delivery: z
      .strictObject({
        concurrency: z.number().int().min(1).default(16),
        timeout: positiveDuration("delivery.timeout").default(30_000),
        backoff: z
          .strictObject({
            initial: positiveDuration("delivery.backoff.initial").default(200),
            max: positiveDuration("delivery.backoff.max").default(30_000),
          })
          .prefault({}),
        maxAttempts: z.number().int().min(1).default(12),
        maxAge: positiveDuration("delivery.maxAge").default(15 * 60_000),
        retryAfterMax: duration("delivery.retryAfterMax").default(5 * 60_000),
      })
      .prefault({}),
    watch: z
      .strictObject({
        /** Server-side timeoutSeconds of each watch (jittered +-10%); the stream then resumes. */
        timeout: positiveDuration("watch.timeout").default(5 * 60_000),
        /** No byte (event or bookmark) for this long: the watch is dead, list again. */
        inactivity: positiveDuration("watch.inactivity").default(3 * 60_000),
        pageSize: z.number().int().min(1).default(500),
        backoff: z
          .strictObject({
            initial: positiveDuration("watch.backoff.initial").default(1_000),
            max: positiveDuration("watch.backoff.max").default(30_000),
          })
          .prefault({}),
      })
      .prefault({}),
    /** On SIGTERM: how long in-flight and queued deliveries may take before they are handed back. */
    shutdownGrace: duration("shutdownGrace").default(20_000),
    routes: z.array(routeSchema).min(1),
  })
  .refine((c) => new Set(c.routes.map((r) => r.name)).size === c.routes.length, {
    message: "route names must be unique",
    path: ["routes"],
  });

export type ConnectorConfig = z.output<typeof configSchema>;
export type RouteConfig = ConnectorConfig["routes"][number];
export type ResourceConfig = RouteConfig["resources"][number];

export class ConfigError extends Error {
  readonly code = "connector-config";
  constructor(message: string) {
    super(message);
    this.name = "ConfigError";
  }
}

/** CONNECTOR_ROUTE_<NAME>_URL: route "reconcile-rule" -> CONNECTOR_ROUTE_RECONCILE_RULE_URL. */
export function routeEnvName(route: string, field: "URL" | "RESYNC"): string {
  return `CONNECTOR_ROUTE_${route.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_${field}`;
}

type Env = Readonly<Record<string, string | undefined>>;

/** Environment overrides, applied to the parsed YAML before validation. */
export function applyEnvOverrides(raw: unknown, env: Env): unknown {
  if (!isRecord(raw)) return raw;
  const config: Record<string, unknown> = { ...raw };
  const http = isRecord(config.http) ? { ...config.http } : {};
  if (env.CONNECTOR_HTTP_HOST) http.host = env.CONNECTOR_HTTP_HOST;
  if (env.CONNECTOR_HTTP_PORT) http.port = Number(env.CONNECTOR_HTTP_PORT);
  config.http = http;
  const delivery = isRecord(config.delivery) ? { ...config.delivery } : {};
  if (env.CONNECTOR_CONCURRENCY) delivery.concurrency = Number(env.CONNECTOR_CONCURRENCY);
  config.delivery = delivery;
  if (env.CONNECTOR_SOURCE) config.source = env.CONNECTOR_SOURCE;
  if (Array.isArray(config.routes)) {
    config.routes = config.routes.map((route: unknown) => {
      if (!isRecord(route) || typeof route.name !== "string") return route;
      const url = env[routeEnvName(route.name, "URL")];
      const resync = env[routeEnvName(route.name, "RESYNC")];
      return { ...route, ...(url ? { url } : {}), ...(resync ? { resync } : {}) };
    });
  }
  return config;
}

export function parseConfig(raw: unknown, env: Env = {}): ConnectorConfig {
  const parsed = configSchema.safeParse(applyEnvOverrides(raw, env));
  if (!parsed.success) {
    const lines = parsed.error.issues.map(
      (i) => `  ${i.path.join(".") || "(config)"}: ${i.message}`,
    );
    throw new ConfigError(`invalid connector config:\n${lines.join("\n")}`);
  }
  return parsed.data;
}

export function loadConfig(path: string, env: Env = {}): ConnectorConfig {
  let raw: unknown;
  try {
    raw = parseYaml(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ConfigError(`cannot read ${path}: ${messageOf(error)}`);
  }
  return parseConfig(raw, env);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
