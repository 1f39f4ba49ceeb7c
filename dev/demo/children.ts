// Child processes of the demo (the functions' server, the connector): started with the repo's
// Node 24 through tsx, their output kept in a log file, stopped with SIGTERM and awaited.
import { spawn, type ChildProcess } from "node:child_process";
import { createWriteStream } from "node:fs";
import https from "node:https";
import { repoRoot } from "../control-plane/binaries.js";

export interface Child {
  readonly name: string;
  readonly logPath: string;
  /** Resolves with the exit code (or signal) once the process has ended. */
  readonly exited: Promise<string>;
  stop(timeoutMs?: number): Promise<string>;
}

/**
 * Runs `<script> ...args` on the demo's own Node (24, via npm run) with tsx as a loader
 * (`node --import tsx`), from the repository root; stdout and stderr go to `logPath`. tsx's CLI
 * would run the script in a grandchild that a SIGKILL of the child leaves behind.
 */
export function startChild(
  name: string,
  script: string,
  args: readonly string[],
  env: Readonly<Record<string, string>>,
  logPath: string,
): Child {
  const log = createWriteStream(logPath);
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", script, ...args], {
    cwd: repoRoot,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => resolve(signal ?? `exit ${code ?? "?"}`));
    child.once("error", (error) => resolve(`failed to start: ${error.message}`));
  });
  return {
    name,
    logPath,
    exited,
    async stop(timeoutMs = 15_000) {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      try {
        return await exited;
      } finally {
        clearTimeout(timer);
        log.end();
      }
    },
  };
}

/** GET over https trusting `caPem`; resolves with the status code. */
export function httpsStatus(url: string, caPem: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.get(url, { ca: caPem, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
  });
}

const httpStatus = async (url: string): Promise<number> =>
  (await fetch(url, { signal: AbortSignal.timeout(1_000) })).status;

/** Resolves when GET `url` answers 200, or rejects at the deadline / when the child exits. */
export async function waitForHttp(
  url: string,
  child: Child,
  timeoutMs: number,
  get: (url: string) => Promise<number> = httpStatus,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exit: string | undefined;
  void child.exited.then((how) => {
    exit = how;
  });
  for (;;) {
    if (exit !== undefined) {
      throw new Error(`${child.name} ended (${exit}) before ${url} answered; see ${child.logPath}`);
    }
    try {
      if ((await get(url)) === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`${url} did not answer 200 within ${timeoutMs} ms; see ${child.logPath}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}
