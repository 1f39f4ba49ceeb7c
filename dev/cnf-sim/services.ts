/**
 * The two "service" areas of the upstream CNF:
 * - `sdewan/service/v1/services` (CNFService): a DNAT per Kubernetes service, kept by upstream in a
 *   flat file rather than UCI, with its own status codes (POST 200, 416 bad port, 409 duplicate,
 *   408 DNS timeout, DELETE 200 with an empty body even when absent, no PUT);
 * - `sdewan/v1/service/<mwan3|firewall|ipsec>` (PUT {"action"}): the restart endpoint, which the
 *   simulator records instead of running /etc/init.d scripts.
 */
import { serviceAddress } from "../control-plane/addresses.js";
import type { SimCollection } from "./collection.js";
import {
  badUri,
  errorReply,
  methodNotAllowed,
  objectReply,
  parseBody,
  successReply,
  type SimReply,
} from "./replies.js";
import { integerBetween, isRecord, oneOf, validateObject } from "./validate.js";

export const RESTARTABLE_SERVICES = ["mwan3", "firewall", "ipsec"] as const;
export type RestartableService = (typeof RESTARTABLE_SERVICES)[number];

/** One call of the restart endpoint, with the command the CNF would have run. */
export interface ServiceAction {
  readonly seq: number;
  readonly service: RestartableService;
  readonly action: "start" | "stop" | "restart" | "reload";
  readonly command: string;
  readonly at: string;
}

interface DnatRecord {
  readonly name: string;
  readonly fullname: string;
  readonly port: string;
  readonly dport: string;
  readonly ip: string;
}

/** Resolves a service's DNS name to an IP, or undefined when it does not resolve (upstream: nslookup). */
export type ServiceResolver = (fullname: string) => string | undefined;

/** Deterministic stand-in for cluster DNS: every name resolves to a stable ClusterIP. */
export const fakeClusterDns: ServiceResolver = (fullname) => {
  let hash = 0;
  for (const char of fullname) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return serviceAddress(1 + (hash % 65_534));
};

const validPort = integerBetween(0, 65535);

export function cnfServiceCollection(resolve: ServiceResolver): SimCollection {
  let records: DnatRecord[] = [];
  const view = (record: DnatRecord): Record<string, unknown> => ({
    name: record.name,
    fullname: record.fullname,
    port: record.port,
    dport: record.dport,
  });
  const create = (body: string): SimReply => {
    const parsed = parseBody(body);
    if (!parsed.ok) return parsed.reply;
    const value = isRecord(parsed.value) ? parsed.value : {};
    // Upstream writes the error, then still appends the echoed body: the reply is two JSON texts.
    const echo = JSON.stringify(value);
    const failWith = (status: number, message: string): SimReply => {
      const reply = errorReply(status, message);
      return { ...reply, body: reply.body + echo };
    };
    if (!validPort(value["port"]).ok || !validPort(value["dport"]).ok) {
      return failWith(416, "Invalid Port Range");
    }
    // Upstream's duplicate check compares the port against the fullname column (a bug, kept).
    if (records.some((r) => r.name === value["name"] || r.fullname === value["port"])) {
      return failWith(409, "Duplicated Service Configuration");
    }
    if (typeof value["name"] !== "string" || typeof value["fullname"] !== "string") {
      // Upstream concatenates nil here and the Lua runtime error becomes a 500 page.
      return {
        status: 500,
        body: "Runtime error",
        contentType: "text/plain",
        reason: "Internal Server Error",
      };
    }
    const ip = resolve(value["fullname"]);
    if (ip === undefined) return failWith(408, "Timeout: waiting for service ready...");
    records.push({
      name: value["name"],
      fullname: value["fullname"],
      port: String(value["port"]),
      dport: String(value["dport"]),
      ip,
    });
    return objectReply(200, value);
  };
  const get = (segments: readonly string[]): SimReply => {
    if (segments.length === 6) return objectReply(200, { services: records.map(view) });
    if (segments.length !== 7) return badUri();
    const name = segments[6] ?? "";
    const found = records.find((record) => record.name === name);
    return found === undefined
      ? errorReply(404, `Cannot find service[${name}]`)
      : objectReply(200, view(found));
  };
  const remove = (segments: readonly string[]): SimReply => {
    if (segments.length !== 7) return badUri();
    records = records.filter((record) => record.name !== segments[6]);
    return { status: 200, body: "", contentType: "text/html" };
  };
  return {
    module: "service",
    collection: "services",
    list: () => records.map(view),
    handle(method, segments, body) {
      if (method === "GET") return get(segments);
      if (method === "POST") return create(body); // no URI check upstream
      if (method === "DELETE") return remove(segments);
      return methodNotAllowed();
    },
  };
}

const actionRule = {
  fields: [{ name: "action", required: true, check: oneOf("start", "stop", "restart", "reload"), message: "wrong action" }],
}; // prettier-ignore

/** What `/etc/init.d/<service> <action>` the CNF runs; reload is remapped per service upstream. */
function commandFor(service: RestartableService, action: ServiceAction["action"]): string {
  if (action !== "reload") return `/etc/init.d/${service} ${action}`;
  return service === "firewall" ? "fw3 reload" : `/etc/init.d/${service} restart`;
}

/** PUT sdewan/v1/service/<service> {"action": ...}; `record` receives each accepted action. */
export function handleServiceAction(
  method: string,
  segments: readonly string[],
  body: string,
  record: (service: RestartableService, action: ServiceAction["action"], command: string) => void,
): SimReply {
  if (method !== "PUT") return methodNotAllowed();
  const service = segments[5] ?? "";
  if (segments.length !== 6 || !isRestartable(service)) return badUri();
  const parsed = parseBody(body);
  if (!parsed.ok) return parsed.reply;
  const validated = validateObject(actionRule, parsed.value);
  if (!validated.ok) return errorReply(400, validated.message);
  const action = validated.value["action"] as ServiceAction["action"];
  record(service, action, commandFor(service, action));
  return successReply();
}

export function handleServiceList(method: string): SimReply {
  return method === "GET"
    ? objectReply(200, { services: RESTARTABLE_SERVICES })
    : methodNotAllowed();
}

function isRestartable(name: string): name is RestartableService {
  return (RESTARTABLE_SERVICES as readonly string[]).includes(name);
}
