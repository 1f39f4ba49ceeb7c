/**
 * What a converged system does while nothing changes: per function, the events it handled and
 * how many of them were resyncs (its own metrics), the API requests it made, and, from the API
 * server's audit log, every request our identities made (the ServiceAccounts of sdewan-system),
 * writes apart. Issue 24 asks that at rest only the resyncs run, and that they write nothing.
 */
import { open, writeFile } from "node:fs/promises";
import https from "node:https";
import path from "node:path";
import { stringify } from "yaml";
import type { RunningSystem } from "./system.js";

/** Our identities' group: every process of the system runs as a ServiceAccount there. */
const OUR_GROUP = "system:serviceaccounts:sdewan-system";
const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);
/** CloudEvent types of the periodic resync (the connector's, and Knative's PingSource's). */
const RESYNC_TYPES = new Set(["org.akraino.sdewan.resync", "dev.knative.sources.ping"]);

/**
 * kube-apiserver flags that log every request of our identities, at Metadata level (who, verb,
 * object; never a body), as JSON lines in `<dir>/audit.log`; nothing else is logged.
 */
export async function auditArgs(dir: string): Promise<string[]> {
  const policy = path.join(dir, "audit-policy.yaml");
  await writeFile(
    policy,
    stringify({
      apiVersion: "audit.k8s.io/v1",
      kind: "Policy",
      omitStages: ["RequestReceived", "ResponseStarted"],
      rules: [{ level: "Metadata", userGroups: [OUR_GROUP] }, { level: "None" }],
    }),
  );
  return [
    `--audit-policy-file=${policy}`,
    `--audit-log-path=${auditLogPath(dir)}`,
    "--audit-log-format=json",
    "--audit-log-mode=blocking",
  ];
}

export const auditLogPath = (dir: string): string => path.join(dir, "audit.log");

/** One request our identities made, as the audit log has it. */
export interface AuditedRequest {
  readonly user: string;
  readonly verb: string;
  readonly resource: string;
  readonly object: string;
  readonly code: number;
  /** When the API server received it (ms since the epoch). */
  readonly at: number;
}

/** The audit log's requests from byte `from` on, and where the log ends now. */
export async function readAudit(
  file: string,
  from: number,
): Promise<{ readonly requests: AuditedRequest[]; readonly end: number }> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    const buffer = Buffer.alloc(Math.max(0, size - from));
    await handle.read(buffer, 0, buffer.length, from);
    const text = buffer.toString("utf8");
    // A line still being written belongs to the next read.
    const complete = text.slice(0, text.lastIndexOf("\n") + 1);
    const requests = complete
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as AuditLine)
      .map(toRequest);
    return { requests, end: from + Buffer.byteLength(complete) };
  } finally {
    await handle.close();
  }
}

interface AuditLine {
  readonly verb: string;
  readonly user?: { readonly username?: string };
  readonly objectRef?: {
    readonly resource?: string;
    readonly subresource?: string;
    readonly namespace?: string;
    readonly name?: string;
  };
  readonly responseStatus?: { readonly code?: number };
  readonly requestReceivedTimestamp?: string;
}

function toRequest(line: AuditLine): AuditedRequest {
  const ref = line.objectRef ?? {};
  const resource = ref.subresource ? `${ref.resource ?? ""}/${ref.subresource}` : ref.resource;
  return {
    user: (line.user?.username ?? "").replace(/^system:serviceaccount:sdewan-system:/, ""),
    verb: line.verb,
    resource: resource ?? "",
    object: [ref.namespace, ref.name].filter(Boolean).join("/"),
    code: line.responseStatus?.code ?? 0,
    at: Date.parse(line.requestReceivedTimestamp ?? "") || 0,
  };
}

export const isWrite = (request: AuditedRequest): boolean => WRITE_VERBS.has(request.verb);

/** Samples of a Prometheus text exposition: name, labels, value. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split("\n")) {
    const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match === null) continue;
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] ?? ""] = pair[2] ?? "";
    }
    samples.push({ name: match[1] ?? "", labels, value: Number(match[3]) });
  }
  return samples;
}

/** GET a /metrics page (https with `caPem`). */
export async function scrape(url: string, caPem?: string): Promise<Sample[]> {
  if (caPem === undefined) {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(10_000) });
    return parseExposition(await res.text());
  }
  const text = await new Promise<string>((resolve, reject) => {
    https
      .get(`${url}/metrics`, { ca: caPem, timeout: 10_000 }, (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
      })
      .on("error", reject);
  });
  return parseExposition(text);
}

/** Per function: events handled (resyncs apart) and the API requests they made. */
export interface FunctionWork {
  readonly events: number;
  readonly resyncs: number;
  readonly apiCalls: number;
}

export function functionWork(samples: readonly Sample[]): Map<string, FunctionWork> {
  const work = new Map<string, { events: number; resyncs: number; apiCalls: number }>();
  const of = (fn: string) => {
    const entry = work.get(fn) ?? { events: 0, resyncs: 0, apiCalls: 0 };
    work.set(fn, entry);
    return entry;
  };
  for (const s of samples) {
    const fn = s.labels["function"];
    if (fn === undefined) continue;
    if (s.name === "sdewan_events_total") {
      of(fn).events += s.value;
      if (RESYNC_TYPES.has(s.labels["type"] ?? "")) of(fn).resyncs += s.value;
    }
    if (s.name === "sdewan_api_calls_total") of(fn).apiCalls += s.value;
  }
  return work;
}

/** `after - before`, per key (keys only in `after` count from 0). */
export function workBetween(
  before: ReadonlyMap<string, FunctionWork>,
  after: ReadonlyMap<string, FunctionWork>,
): Map<string, FunctionWork> {
  const out = new Map<string, FunctionWork>();
  for (const [fn, a] of after) {
    const b = before.get(fn) ?? { events: 0, resyncs: 0, apiCalls: 0 };
    out.set(fn, {
      events: a.events - b.events,
      resyncs: a.resyncs - b.resyncs,
      apiCalls: a.apiCalls - b.apiCalls,
    });
  }
  return out;
}

/** One row per function and the writes, for a person to read (the demo, a test's log). */
export function restReport(
  seconds: number,
  work: ReadonlyMap<string, FunctionWork>,
  requests: readonly AuditedRequest[],
): string {
  const perMinute = (n: number) => ((n * 60) / seconds).toFixed(1);
  const rows = [...work.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([fn, w]) =>
        `  ${fn.padEnd(26)} events ${String(w.events).padStart(5)} (resyncs ${String(w.resyncs).padStart(5)})` +
        `  ${perMinute(w.events).padStart(6)}/min  API calls ${String(w.apiCalls).padStart(5)}`,
    );
  const byUser = new Map<string, { reads: number; writes: number }>();
  for (const r of requests) {
    const entry = byUser.get(r.user) ?? { reads: 0, writes: 0 };
    if (isWrite(r)) entry.writes += 1;
    else entry.reads += 1;
    byUser.set(r.user, entry);
  }
  const users = [...byUser.entries()].map(
    ([user, n]) => `  ${user.padEnd(26)} API reads ${n.reads}, writes ${n.writes} (audit log)`,
  );
  const writes = requests
    .filter(isWrite)
    .map((r) => `  WRITE ${r.user} ${r.verb} ${r.resource} ${r.object} -> ${r.code}`);
  return [`at rest for ${seconds.toFixed(0)} s:`, ...rows, ...users, ...writes].join("\n");
}

interface Snapshot {
  readonly work: Map<string, FunctionWork>;
  readonly auditEnd: number;
  readonly at: number;
}

async function snapshot(system: RunningSystem): Promise<Snapshot> {
  const samples = [
    ...(await scrape(system.functionsUrl)),
    ...(await scrape(system.webhookUrl, system.webhookCaPem)),
  ];
  const { end } = await readAudit(auditLogPath(system.workDir ?? ""), 0);
  return { work: functionWork(samples), auditEnd: end, at: Date.now() };
}

export interface RestMeasurement {
  readonly seconds: number;
  readonly work: Map<string, FunctionWork>;
  readonly requests: AuditedRequest[];
  readonly report: string;
}

/**
 * Waits until the system is quiet (a `quietMs` window in which every function handled nothing
 * but resyncs; the last echoes of convergence delivered), then measures `seconds` at rest. The
 * system's control plane must write the audit log (`auditArgs`).
 */
export async function measureAtRest(
  system: RunningSystem,
  seconds: number,
  options: { readonly quietMs?: number; readonly settleTimeoutMs?: number } = {},
): Promise<RestMeasurement> {
  const quietMs = options.quietMs ?? 3_000;
  const deadline = Date.now() + (options.settleTimeoutMs ?? 120_000);
  let last = await snapshot(system);
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, quietMs));
    const now = await snapshot(system);
    const busy = [...workBetween(last.work, now.work)].filter(([, w]) => w.events > w.resyncs);
    last = now;
    if (busy.length === 0) break;
    if (Date.now() > deadline) {
      throw new Error(
        `the system did not settle: still handling ${busy.map(([fn]) => fn).join(", ")}`,
      );
    }
  }
  const before = await snapshot(system);
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const after = await snapshot(system);
  const { requests } = await readAudit(auditLogPath(system.workDir ?? ""), before.auditEnd);
  const measured = (after.at - before.at) / 1000;
  const work = workBetween(before.work, after.work);
  return { seconds: measured, work, requests, report: restReport(measured, work, requests) };
}
