// The world of the node scenarios (test/node): one real node (dev/node) per file, with the audit
// log of our identities; the install steps themselves are dev/node/install.ts (the demo's too).
import { mkdtemp } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import {
  auditArgs,
  auditLogPath,
  type AuditedRequest,
  isWrite,
  readAudit,
} from "../../../dev/demo/at-rest.js";
import {
  cnfHolds,
  type InstalledWorld,
  progress,
  readyPods,
  RULE_RESOURCES,
  setProgress,
  worldOf,
} from "../../../dev/node/install.js";
import { startNode } from "../../../dev/node/node.js";

export * from "../../../dev/node/install.js";
import { waitFor } from "../../e2e/world.js";

export { waitFor };

const started = Date.now();
setProgress((line) =>
  process.stderr.write(`[node e2e ${((Date.now() - started) / 1000).toFixed(1)} s] ${line}\n`),
);

export async function startInstalledWorld(): Promise<InstalledWorld> {
  const auditDir = await mkdtemp(path.join(os.tmpdir(), "sdewan-node-audit-"));
  const scratch = await mkdtemp(path.join(os.tmpdir(), "sdewan-node-user-"));
  const node = await startNode({
    log: progress,
    extraApiserverArgs: await auditArgs(auditDir),
  });
  return worldOf(node, scratch, auditDir);
}

interface RuleView {
  kind: string;
  metadata: { name: string; generation: number };
  status?: { inSync?: boolean; observedGeneration?: number; message?: string };
}

/** Why the rules of `namespace` (all, or those `named`) are not all in sync, or undefined. */
export async function rulesNotInSync(
  world: InstalledWorld,
  namespace: string,
  named?: (name: string) => boolean,
): Promise<string | undefined> {
  const rules = await world.getJson<{ items: RuleView[] }>(["-n", namespace, RULE_RESOURCES]);
  const ours = rules.items.filter((r) => named?.(r.metadata.name) ?? true);
  if (ours.length === 0) return "no rules";
  const behind = ours.filter(
    (r) => r.status?.inSync !== true || r.status.observedGeneration !== r.metadata.generation,
  );
  return behind.length === 0
    ? undefined
    : `${behind.length}/${ours.length} not in sync, e.g. ${behind[0]?.kind} ${behind[0]?.metadata.name}: ${behind[0]?.status?.message ?? "no status"}`;
}

/** Why the `pods` ready CNF pods (label `selector`) do not each hold `expected` items, or undefined. */
export async function cnfPodsPending(
  world: InstalledWorld,
  namespace: string,
  selector: string,
  expected: number,
  pods = 2,
): Promise<string | undefined> {
  const ready = await readyPods(world, namespace, selector);
  if (ready.length !== pods) return `${ready.length}/${pods} CNF pods ready`;
  for (const pod of ready) {
    const held = await cnfHolds(world, namespace, pod.metadata.name);
    if (held.size !== expected) return `${pod.metadata.name} holds ${held.size}/${expected}`;
  }
  return undefined;
}

/**
 * The audit log read on from where the last read ended, so a poll parses only the lines written
 * since; `requests` holds every request read so far.
 */
export class AuditTail {
  readonly requests: AuditedRequest[] = [];

  private constructor(
    private readonly file: string,
    private offset: number,
  ) {}

  /** A tail from the log's first line, or from its end now (what comes next). */
  static async of(world: InstalledWorld, from: "start" | "now"): Promise<AuditTail> {
    const file = auditLogPath(world.auditDir);
    return new AuditTail(file, from === "start" ? 0 : (await readAudit(file, 0)).end);
  }

  /** The requests written since the last read (also added to `requests`). */
  async read(): Promise<AuditedRequest[]> {
    const { requests, end } = await readAudit(this.file, this.offset);
    this.offset = end;
    this.requests.push(...requests);
    return requests;
  }
}

/** When reconcile-rule first read `object` ("<namespace>/<name>") in `tail`, polled every `pollMs`. */
export async function firstRead(tail: AuditTail, object: string, pollMs: number): Promise<number> {
  const readOf = (r: AuditedRequest) =>
    r.user === "sdewan-reconcile-rule" && r.verb === "get" && r.object === object;
  let at: number | undefined;
  await waitFor(
    `reconcile-rule reads ${object}`,
    async () => {
      await tail.read();
      at = tail.requests.find(readOf)?.at;
      return at === undefined ? "not yet" : undefined;
    },
    120_000,
    pollMs,
  );
  return at as number;
}

/** The requests our identities made in a 60 s window once a 10 s window had no write. */
export async function atRestFor60s(world: InstalledWorld): Promise<AuditedRequest[]> {
  const tail = await AuditTail.of(world, "now");
  await waitFor(
    "quiet",
    async () => {
      await new Promise((resolve) => setTimeout(resolve, 10_000));
      const writes = (await tail.read()).filter(isWrite);
      return writes.length === 0
        ? undefined
        : `${writes.length} writes, e.g. ${writes[0]?.user} ${writes[0]?.verb} ${writes[0]?.resource}`;
    },
    180_000,
    0,
  );
  await new Promise((resolve) => setTimeout(resolve, 60_000)); // the window measured, not a wait
  return tail.read();
}

/**
 * Event -> function latency, `count` times: a FirewallRule created (after kubectl returns: the
 * event is out by then) -> reconcile-rule's first read of it, as the API server's audit log has
 * it (one clock: the API server runs on this host). Then waits until each is in sync.
 */
export async function eventToFunctionMs(
  world: InstalledWorld,
  namespace: string,
  count: number,
): Promise<number[]> {
  const latencies: number[] = [];
  for (let i = 0; i < count; i += 1) {
    const name = `latency-${String(i).padStart(2, "0")}`;
    const tail = await AuditTail.of(world, "now");
    await world.kubectl(
      ["-n", namespace, "create", "-f", "-"],
      `apiVersion: batch.sdewan.akraino.org/v1alpha1
kind: FirewallRule
metadata: {name: ${name}, labels: {sdewanPurpose: cnf-1}}
spec: {src: lan1, src_port: "${2000 + i}", proto: tcp, target: REJECT}
`,
    );
    const created = Date.now();
    const read = await firstRead(tail, `${namespace}/${name}`, 50);
    latencies.push(Math.max(0, read - created));
  }
  await waitFor(
    "latency rules in sync",
    () => rulesNotInSync(world, namespace, (n) => n.startsWith("latency-")),
    120_000,
    500,
  );
  return latencies;
}

/** p50 / p99 / max of `values`, for a measured line. */
export function percentiles(values: readonly number[]): string {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number): number =>
    sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] ?? 0;
  return `p50 ${at(0.5)} ms / p99 ${at(0.99)} ms (max ${sorted.at(-1) ?? 0} ms, n=${sorted.length})`;
}
