/**
 * `npm run netpol -- check --batch [<file>|-]`: packets one per line (the five fields of `check`,
 * separated by blanks), answers one per line in the same order, so `paste` pairs them. Checks run
 * a few at a time and share one TableReader: a Pod asked about many times is read once.
 * Exit 0 when every line was answered, 2 when some line was not a packet (its answer says
 * `invalid line N: ...`), 3 when some check met an API error (`error line N: ...`).
 */
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { KubeClient } from "../../shared/kube/index.js";
import {
  EXIT_API_ERROR,
  EXIT_USAGE,
  TableReader,
  checkPacket,
  formatDecision,
  parsePacketFields,
} from "./check.js";

/** Checks in flight at once: enough to hide the API server's latency, few enough to be polite. */
const IN_FLIGHT = 16;

interface Answered {
  readonly text: string;
  readonly exit: number;
}

async function answer(kube: KubeClient, reader: TableReader, line: string, n: number) {
  const fields = line.trim().split(/\s+/).filter(Boolean);
  if (fields.length === 0) return { text: `invalid line ${n}: empty`, exit: EXIT_USAGE };
  const parsed = parsePacketFields(fields);
  if (!parsed.ok) return { text: `invalid line ${n}: ${parsed.message}`, exit: EXIT_USAGE };
  try {
    const checked = await checkPacket(kube, parsed.packet, reader);
    return { text: formatDecision(parsed.packet, checked), exit: 0 };
  } catch (error) {
    return { text: `error line ${n}: ${(error as Error).message}`, exit: EXIT_API_ERROR };
  }
}

/** Answers every line of `lines` through `write`, in order; returns the exit code. */
export async function runBatch(
  kube: KubeClient,
  lines: AsyncIterable<string>,
  write: (line: string) => void,
): Promise<number> {
  const reader = new TableReader(kube);
  const pending: Promise<Answered>[] = [];
  let exit = 0;
  const flush = async (keep: number): Promise<void> => {
    for (let next = pending.shift(); next !== undefined; next = pending.shift()) {
      const answered = await next;
      write(answered.text);
      exit = Math.max(exit, answered.exit);
      if (pending.length <= keep) return;
    }
  };
  let n = 0;
  for await (const line of lines) {
    n += 1;
    pending.push(answer(kube, reader, line, n));
    if (pending.length >= IN_FLIGHT) await flush(IN_FLIGHT - 1);
  }
  await flush(0);
  return exit;
}

/** The lines of a file, or of stdin for "-". */
export function linesOf(source: string): AsyncIterable<string> {
  const input = source === "-" ? process.stdin : createReadStream(source, "utf8");
  return createInterface({ input, crlfDelay: Infinity });
}
