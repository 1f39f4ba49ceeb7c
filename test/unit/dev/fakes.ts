// Fakes for the build tests: a gate a fake script waits on, and executable files.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import path from "node:path";

/** A FIFO a fake waits on (`read -t 20 -u 3` after `exec 3<>`); `release` never blocks. */
export function gate(dir: string): { fifo: string; release: () => void } {
  const fifo = path.join(dir, "gate");
  execFileSync("mkfifo", [fifo]);
  const release = () => {
    const fd = openSync(fifo, constants.O_RDWR);
    writeSync(fd, "go\n");
    closeSync(fd);
  };
  return { fifo, release };
}

export function executable(file: string, text: string): string {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, text);
  chmodSync(file, 0o755);
  return file;
}
