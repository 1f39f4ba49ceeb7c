// Progress for the long steps of the dev tools (the demo's build and start-up): what runs, each
// progress line a build script writes, and at least one line every 30 s with the time elapsed,
// as dev/lib/go-tool.sh's builds do.
import { spawn } from "node:child_process";

/** How long a step may stay silent: go-tool.sh's heartbeat period. */
export const HEARTBEAT_MS = 30_000;

/** "1m05s", as go_tool_elapsed prints it. */
export function elapsed(ms: number): string {
  const s = Math.floor(ms / 1000);
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, "0")}s`;
}

const still = (what: string, started: number): string =>
  `${what}: still running, ${elapsed(Date.now() - started)} elapsed`;

export interface ProgressOptions {
  readonly say: (line: string) => void;
  /** Default HEARTBEAT_MS. */
  readonly everyMs?: number;
}

/** Awaits `work`, saying "<what>: still running, <elapsed> elapsed" every `everyMs` until it settles. */
export async function withHeartbeat<T>(
  what: string,
  work: Promise<T>,
  { say, everyMs = HEARTBEAT_MS }: ProgressOptions,
): Promise<T> {
  const started = Date.now();
  const timer = setInterval(() => say(still(what, started)), everyMs);
  try {
    return await work;
  } finally {
    clearInterval(timer);
  }
}

export interface CommandOptions extends ProgressOptions {
  readonly env?: NodeJS.ProcessEnv;
}

/**
 * A command's longest silence before it is said to be still running: longer than go-tool.sh's own
 * 30 s heartbeat, so a script that keeps the convention is never doubled.
 */
export const COMMAND_QUIET_MS = HEARTBEAT_MS + 5_000;

export class CommandError extends Error {
  override readonly name = "CommandError";
}

/**
 * Runs a command that writes its progress to stderr and its result as the last line of stdout
 * (dev/lib/go-tool.sh's convention). Each stderr line is said as it comes; after `everyMs`
 * (default COMMAND_QUIET_MS) without one, "<what>: still running, <elapsed> elapsed" is. Resolves with stdout's last line; rejects with the
 * exit status and the last stderr lines.
 */
export function runWithProgress(
  what: string,
  command: string,
  args: readonly string[],
  { say, everyMs = COMMAND_QUIET_MS, env = process.env }: CommandOptions,
): Promise<string> {
  const started = Date.now();
  const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let partial = "";
  const recent: string[] = [];
  let quiet: NodeJS.Timeout | undefined;
  const arm = () => {
    clearTimeout(quiet);
    quiet = setTimeout(() => {
      say(still(what, started));
      arm();
    }, everyMs);
  };
  const line = (text: string) => {
    if (text.trim() === "") return;
    say(text);
    recent.push(text);
    if (recent.length > 20) recent.shift();
  };
  arm();
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    lines.forEach(line);
    if (lines.length > 0) arm();
  });
  return new Promise<string>((resolve, reject) => {
    child.once("error", (error) => {
      clearTimeout(quiet);
      reject(new CommandError(`${what}: ${command} could not be started: ${error.message}`));
    });
    child.once("close", (code, signal) => {
      clearTimeout(quiet);
      line(partial);
      const result = stdout.trimEnd().split("\n").pop() ?? "";
      if (code === 0) {
        resolve(result);
        return;
      }
      const how = signal === null ? `exit code ${code ?? "?"}` : `signal ${signal}`;
      reject(
        new CommandError(
          `${what} failed (${how}) after ${elapsed(Date.now() - started)}; its last lines:\n` +
            recent.join("\n"),
        ),
      );
    });
  });
}
