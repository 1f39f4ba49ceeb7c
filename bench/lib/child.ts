/**
 * A function server as its own process, started the way `npm start` starts it but with node
 * directly (`node --import tsx functions/server.ts`; npm and the tsx CLI each add a process), or
 * as the image runs it (`node dist/bundle/server.js`, after buildDist()).
 * Its log goes to a file; the "listening" line is noticed as it is written.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import { readFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { fileURLToPath } from "node:url";

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

export interface FunctionProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly port: number;
  readonly logFile: string;
  /** performance.now() when the process was spawned, and when it logged "listening". */
  readonly spawnedAt: number;
  listeningAt(): number | undefined;
  /** Resident set size now and at its peak (VmRSS / VmHWM), in MiB. */
  memory(): Promise<{ rssMb: number; peakMb: number }>;
  /** CPU time the process has used (user + system, all threads), in ms. */
  cpuMs(): Promise<number>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with how it ended. */
  stop(graceMs?: number): Promise<string>;
  readonly exited: Promise<string>;
}

export async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** The bundled server the image runs (Dockerfile: npm run bundle). */
export const DIST_SERVER = "dist/bundle/server.js";

/** Bundles the server into dist/bundle/ as the image build does (scripts/bundle.ts). */
export async function buildDist(): Promise<void> {
  const child = spawn(process.execPath, ["--import", "tsx", "scripts/bundle.ts"], {
    cwd: REPO_ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString("utf8")));
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`scripts/bundle.ts failed (${code}): ${output}`);
}

/** The NODE_OPTIONS the image sets (Dockerfile ENV), so a row runs the server as shipped. */
export async function dockerfileNodeOptions(): Promise<string> {
  const dockerfile = await readFile(path.join(REPO_ROOT, "Dockerfile"), "utf8");
  const found = /^ENV NODE_OPTIONS="?([^"\n]*?)"? *\\?$/m.exec(dockerfile);
  if (found?.[1] === undefined) throw new Error("the Dockerfile sets no NODE_OPTIONS");
  return found[1].trim();
}

/**
 * Node's own flags in the image's CMD (`["node", <flags>, "dist/bundle/server.js"]`): V8 flags
 * NODE_OPTIONS refuses (e.g. --lite-mode) are set there.
 */
export async function dockerfileNodeArgs(): Promise<string[]> {
  const dockerfile = await readFile(path.join(REPO_ROOT, "Dockerfile"), "utf8");
  const found = /^CMD (\[.*\])\s*$/m.exec(dockerfile);
  if (found?.[1] === undefined) throw new Error("the Dockerfile has no CMD");
  const cmd = JSON.parse(found[1]) as string[];
  if (cmd[0] !== "node" || cmd.at(-1) !== DIST_SERVER) {
    throw new Error(`the Dockerfile's CMD is not node ... ${DIST_SERVER}: ${found[1]}`);
  }
  return cmd.slice(1, -1);
}

export interface SpawnOptions {
  readonly logFile: string;
  readonly env: Record<string, string>;
  readonly port?: number;
  /** Script to run; default functions/server.ts. A .js script runs without tsx. */
  readonly script?: string;
  readonly args?: readonly string[];
  /** Node's own flags, before the script (V8 flags NODE_OPTIONS does not accept). */
  readonly nodeArgs?: readonly string[];
}

export async function spawnFunctionServer(options: SpawnOptions): Promise<FunctionProcess> {
  const port = options.port ?? (await freePort());
  const log = createWriteStream(options.logFile, { flags: "a" });
  const spawnedAt = performance.now();
  const script = options.script ?? "functions/server.ts";
  const loader = script.endsWith(".ts") ? ["--import", "tsx"] : [];
  const child = spawn(
    process.execPath,
    [...(options.nodeArgs ?? []), ...loader, script, ...(options.args ?? [])],
    {
      cwd: REPO_ROOT,
      env: { ...process.env, PORT: String(port), HOST: "127.0.0.1", ...options.env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let listening: number | undefined;
  let pending = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    log.write(chunk);
    if (listening !== undefined) return;
    pending += chunk.toString("utf8");
    if (/"msg":"listening"/.test(pending)) listening = performance.now();
    pending = pending.slice(-200);
  });
  child.stderr?.on("data", (chunk: Buffer) => log.write(chunk));
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => {
      log.end();
      resolve(signal ? `killed by ${signal}` : `exit code ${code}`);
    });
  });
  return {
    child,
    port,
    url: `http://127.0.0.1:${port}`,
    logFile: options.logFile,
    spawnedAt,
    listeningAt: () => listening,
    exited,
    async memory() {
      const status = await readFile(`/proc/${child.pid}/status`, "utf8");
      const kb = (field: string): number =>
        Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? NaN);
      return { rssMb: kb("VmRSS") / 1024, peakMb: kb("VmHWM") / 1024 };
    },
    async cpuMs() {
      // /proc/<pid>/stat: fields 14 and 15 (utime, stime) in clock ticks of 10 ms, after "(comm)".
      const stat = await readFile(`/proc/${child.pid}/stat`, "utf8");
      const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      return (Number(fields[11]) + Number(fields[12])) * 10;
    },
    async stop(graceMs = 10_000) {
      if (child.exitCode !== null || child.signalCode !== null) return exited;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
      const how = await exited;
      clearTimeout(timer);
      return how;
    },
  };
}

/** Polls `url` every 100 ms until it answers 200 (a server's /_/ready); `what` names it in the error. */
export async function waitReady(url: string, what: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const ok = await fetch(url).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs} ms`);
    await delay(100);
  }
}
