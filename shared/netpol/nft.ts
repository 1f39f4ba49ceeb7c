/**
 * The node agent's one effect: a script handed to `nft -f -` (Debian's nftables), which the
 * kernel commits as one transaction or not at all. `command` is how to run nft: ["nft"] in the
 * agent's container, ["ip", "netns", "exec", <ns>, "nft"] in the tests.
 */
import { spawn } from "node:child_process";

export class NftError extends Error {
  readonly code = "nft-failed";
  constructor(message: string) {
    super(message);
    this.name = "NftError";
  }
}

/** nft's answer is bounded: a script it refuses names the line, which is enough. */
const MAX_MESSAGE = 2_000;
const DEFAULT_TIMEOUT_MS = 30_000;

export type NftApply = (script: string) => Promise<void>;

export function nftApplier(
  command: readonly string[] = ["nft"],
  timeoutMs = DEFAULT_TIMEOUT_MS,
): NftApply {
  const [program = "nft", ...prefix] = command;
  return (script) =>
    new Promise((resolve, reject) => {
      const child = spawn(program, [...prefix, "-f", "-"], { stdio: ["pipe", "ignore", "pipe"] });
      let stderr = "";
      const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
      child.stderr.on("data", (chunk: Buffer) => {
        if (stderr.length < MAX_MESSAGE) stderr += chunk.toString();
      });
      child.once("error", (error) => {
        clearTimeout(timer);
        reject(new NftError(`${program}: ${error.message}`));
      });
      child.once("close", (code, signal) => {
        clearTimeout(timer);
        if (code === 0) resolve();
        else {
          const why = signal === null ? `exit ${code}` : `killed (${signal}) after ${timeoutMs} ms`;
          reject(
            new NftError(
              `nft -f refused the ruleset (${why}): ${stderr.slice(0, MAX_MESSAGE).trim()}`,
            ),
          );
        }
      });
      // A closed stdin (nft exited early) is reported by `close` with nft's own words.
      child.stdin.on("error", () => undefined);
      child.stdin.end(script);
    });
}
