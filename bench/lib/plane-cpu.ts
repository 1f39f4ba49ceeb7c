/**
 * CPU time the bench's kube-apiserver and etcd have used, read from /proc: the processes whose
 * command line names the control plane's folder. CPU, unlike wall time, barely moves when other
 * work shares the machine, so it says what a row costs the API server and etcd themselves.
 */
import { readFile, readdir } from "node:fs/promises";

async function planePids(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    const argv = cmdline.split("\0");
    const isServer = /(^|\/)(kube-apiserver|etcd)$/.test(argv[0] ?? "");
    if (isServer && argv.some((arg) => arg.includes(dir))) pids.push(Number(entry));
  }
  return pids;
}

/** utime + stime of a process in ms (fields 14 and 15 of /proc/<pid>/stat, 10 ms ticks). */
async function cpuMsOf(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8").catch(() => "");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * 10;
}

/** A meter: each call answers the API server's and etcd's CPU ms since the meter was made. */
export async function planeCpuMeter(dir: string): Promise<() => Promise<number>> {
  const pids = await planePids(dir);
  const total = async () => (await Promise.all(pids.map(cpuMsOf))).reduce((a, b) => a + b, 0);
  const start = await total();
  return async () => (await total()) - start;
}
