// The demo's first step: kube-apiserver and etcd from dev/control-plane/build.sh, cached after
// the first build (~30 min cold on 2 cores). Its progress is the demo's: each line the script
// writes to stderr as it comes, and a line every 30 s of quiet (go list downloading modules,
// waiting for another build's lock), so a fresh clone never sits silent.
import { buildScript } from "../control-plane/binaries.js";
import { runWithProgress } from "../lib/progress.js";

export interface BuildOptions {
  readonly say: (line: string) => void;
  /** Default dev/control-plane/build.sh. */
  readonly script?: string;
  readonly env?: NodeJS.ProcessEnv;
  /** Longest silence before "still running" is said; default 30 s. */
  readonly everyMs?: number;
}

/** Builds (or finds cached) the control-plane binaries; resolves with their directory. */
export function buildControlPlane({
  say,
  script = buildScript,
  env,
  everyMs,
}: BuildOptions): Promise<string> {
  return runWithProgress("control-plane build", "bash", [script], {
    say,
    ...(env === undefined ? {} : { env }),
    ...(everyMs === undefined ? {} : { everyMs }),
  });
}
