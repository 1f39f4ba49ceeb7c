/**
 * A real Prometheus on loopback for the demo and the alert-firing test: scrapes the given
 * targets, evaluates the given rule files, and answers its own HTTP API. The binary is Debian's
 * (`apt-get install prometheus`; .ci/run installs it), or $PROMETHEUS.
 *
 *   const prom = await startPrometheus({ workDir, targets: [{ job: "functions", url }], ruleFiles });
 *   await prom.waitForAlert("SdewanCnfRejectingRules", { state: "firing", timeoutMs: 30_000 });
 *   await prom.stop();
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { stringify } from "yaml";
import { freePort } from "../control-plane/control-plane.js";

/** The prometheus binary, or undefined when none is installed. */
export function prometheusBinary(): string | undefined {
  const binary = process.env["PROMETHEUS"] ?? "prometheus";
  const probe = spawnSync(binary, ["--version"], { encoding: "utf8" });
  return probe.status === 0 ? binary : undefined;
}

export interface ScrapeTarget {
  readonly job: string;
  /** Where /metrics is served, e.g. http://127.0.0.1:8080 or https://127.0.0.1:8443. */
  readonly url: string;
  /** CA bundle (PEM file) for an https target. */
  readonly caFile?: string;
}

export interface PrometheusOptions {
  /** Config, TSDB and log go here. */
  readonly workDir: string;
  readonly targets: readonly ScrapeTarget[];
  /** Absolute paths of rule files. */
  readonly ruleFiles: readonly string[];
  /** Scrape and rule evaluation interval. Default 5s. */
  readonly interval?: string;
  readonly binary?: string;
}

export interface Alert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly state: "pending" | "firing";
  readonly activeAt: string;
  readonly value: string;
}

export interface RunningPrometheus {
  /** e.g. http://127.0.0.1:41234 */
  readonly url: string;
  readonly logPath: string;
  /** GET /api/v1/alerts: the alerts pending or firing now. */
  alerts(): Promise<Alert[]>;
  /** The alert names of every loaded rule group (GET /api/v1/rules). */
  ruleNames(): Promise<string[]>;
  /** Targets and their scrape health (GET /api/v1/targets). */
  targetHealth(): Promise<{ job: string; health: string; lastError: string }[]>;
  /**
   * Polls the API until an alert named `name` whose labels include `labels` is in `state` (or,
   * for "pending", pending or already firing); rejects at the deadline with what was seen.
   */
  waitForAlert(
    name: string,
    options: {
      readonly state: "pending" | "firing";
      readonly labels?: Readonly<Record<string, string>>;
      readonly timeoutMs: number;
    },
  ): Promise<Alert>;
  stop(): Promise<void>;
}

/** prometheus.yml for the targets: one job each, `host:port` from the URL. */
export function prometheusConfig(
  options: Pick<PrometheusOptions, "targets" | "ruleFiles" | "interval">,
): string {
  const interval = options.interval ?? "5s";
  return stringify({
    global: { scrape_interval: interval, evaluation_interval: interval, scrape_timeout: interval },
    rule_files: options.ruleFiles,
    scrape_configs: options.targets.map((target) => {
      const url = new URL(target.url);
      return {
        job_name: target.job,
        scheme: url.protocol.replace(":", ""),
        metrics_path: `${url.pathname.replace(/\/$/, "")}/metrics`,
        ...(target.caFile === undefined ? {} : { tls_config: { ca_file: target.caFile } }),
        static_configs: [{ targets: [url.host] }],
      };
    }),
  });
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const binary = options.binary ?? prometheusBinary();
  if (binary === undefined)
    throw new Error("prometheus is not installed (apt-get install prometheus)");
  await mkdir(path.join(options.workDir, "data"), { recursive: true });
  const configPath = path.join(options.workDir, "prometheus.yml");
  await writeFile(configPath, prometheusConfig(options));
  const port = await freePort("127.0.0.1");
  const url = `http://127.0.0.1:${port}`;
  const logPath = path.join(options.workDir, "prometheus.log");
  const log = createWriteStream(logPath);
  const child: ChildProcess = spawn(
    binary,
    [
      `--config.file=${configPath}`,
      `--storage.tsdb.path=${path.join(options.workDir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--storage.tsdb.retention.time=1d",
      "--log.level=warn",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  let exit: string | undefined;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      exit = signal ?? `exit ${code ?? "?"}`;
      resolve();
    });
    child.once("error", (error) => {
      exit = `failed to start: ${error.message}`;
      resolve();
    });
  });

  const api = async <T>(pathname: string): Promise<T> => {
    const reply = await fetch(`${url}${pathname}`, { signal: AbortSignal.timeout(2_000) });
    const body = (await reply.json()) as { status: string; data: T; error?: string };
    if (body.status !== "success") throw new Error(`${pathname}: ${body.error ?? reply.status}`);
    return body.data;
  };

  const stop = async (): Promise<void> => {
    if (exit === undefined) {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
    log.end();
  };

  // Ready once /-/ready answers 200: config loaded, TSDB open.
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (exit !== undefined) throw new Error(`prometheus ended (${exit}); see ${logPath}`);
    try {
      const reply = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(1_000) });
      if (reply.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`prometheus was not ready within 30 s; see ${logPath}`);
    }
    await sleep(100);
  }

  const alerts = async (): Promise<Alert[]> =>
    (await api<{ alerts: Alert[] }>("/api/v1/alerts")).alerts;

  return {
    url,
    logPath,
    alerts,
    async ruleNames() {
      const data = await api<{ groups: { rules: { name: string }[] }[] }>("/api/v1/rules");
      return data.groups.flatMap((g) => g.rules.map((r) => r.name));
    },
    async targetHealth() {
      const data = await api<{
        activeTargets: { labels: Record<string, string>; health: string; lastError: string }[];
      }>("/api/v1/targets");
      return data.activeTargets.map((t) => ({
        job: t.labels["job"] ?? "",
        health: t.health,
        lastError: t.lastError,
      }));
    },
    async waitForAlert(name, { state, labels = {}, timeoutMs }) {
      const until = Date.now() + timeoutMs;
      let seen: Alert[] = [];
      for (;;) {
        seen = (await alerts()).filter((a) => a.labels["alertname"] === name);
        const match = seen.find(
          (a) =>
            Object.entries(labels).every(([k, v]) => a.labels[k] === v) &&
            (a.state === state || (state === "pending" && a.state === "firing")),
        );
        if (match !== undefined) return match;
        if (Date.now() > until) {
          throw new Error(
            `alert ${name} ${JSON.stringify(labels)} not ${state} within ${timeoutMs} ms; seen: ${JSON.stringify(seen)}`,
          );
        }
        await sleep(250);
      }
    },
    stop,
  };
}
