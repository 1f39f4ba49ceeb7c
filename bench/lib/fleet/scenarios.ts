/**
 * The fleet rows' scenarios on a FleetWorld, in the order their start states need: every rule of
 * every CNF created at once; every CNF pod restarting at once (a node reboot: each CNF loses its
 * state, every pod turns not ready, every Deployment counts its pods unavailable, then all come
 * back); a rolling update of every CNF at once (per CNF a new ReplicaSet, then pod by pod a new
 * Ready pod and the old one deleted, as the Deployment controller does with maxSurge 1 and
 * maxUnavailable 0). Each is timed from the bench's first request until every pod holds exactly
 * its CNF's rules and every status says applied, and counted until the functions go quiet.
 */
import pLimit from "p-limit";
import { randomBytes } from "node:crypto";
import { setTimeout as delay } from "node:timers/promises";
import type { Cnf, CnfPod } from "../../../dev/world/index.js";
import {
  PEER_KINDS,
  expectedHoldings,
  peerRules,
  ruleManifest,
  rulePath,
  type ListedRule,
  type PeerRule,
} from "../peer/rules.js";
import { writeDeploymentStatus } from "../peer/world.js";
import { AuditCounter, countsSince, type FleetPlane, type FleetWorld } from "./world.js";

export type FleetScenario = "create" | "reboot" | "rollout";

export interface FleetOutcome {
  /** The end state held within the budget. */
  readonly converged: boolean;
  /** It held at all, within HARD_LIMIT_FACTOR x the budget (counts are then the whole work's). */
  readonly completed: boolean;
  /** Time to the end state, or the hard limit when it never held. */
  readonly ms: number;
  readonly budgetMs: number;
  /** The functions' API requests by "<verb> <resource>", from the audit log. */
  readonly api: ReadonlyMap<string, number>;
  readonly apiRequests: number;
  /** Of them, the writes (create, update, patch, delete). */
  readonly apiWrites: number;
  readonly cnfRequests: number;
  /** Service restarts per pod: the most any one service of any one pod had, and the mean. */
  readonly restartsMax: number;
  readonly restartsMean: number;
  /** Pods the restarts were counted on. */
  readonly pods: number;
  readonly etcdPuts: number;
  readonly etcdBytes: number;
  /** Resident memory of each function process after the scenario, and its peak so far (MiB). */
  readonly memory: Readonly<Record<string, { rssMb: number; peakMb: number }>>;
  readonly problem?: string;
}

const USER_CONCURRENCY = 16;
/**
 * The checks run in the bench's process, beside every CNF simulator: a look at every pod's
 * objects, and a list (and parse) of every rule, take the simulators' CPU at 100 pods and 10,000
 * rules (in a loaded run simulators' GETs missed the functions' 1.5 s timeout). Spaced with size.
 */
const pollMs = (pods: number): number => Math.max(200, pods * 10);
const statusPollMs = (rules: number): number => Math.max(1_000, rules / 5);
const QUIET_MS = 2_000;
const QUIET_MAX_MS = 30_000;
/**
 * Past its budget a scenario is still waited for, up to this many budgets: the next one must start
 * from its end state, and its counts must be of the whole work, not of the part done in time.
 */
const HARD_LIMIT_FACTOR = 4;

/** CNF i's rules: peerRules(perCnf) with names (and policy references) prefixed `c<i>`. */
export function fleetRules(cnfIndex: number, perCnf: number): PeerRule[] {
  const prefix = `c${cnfIndex}`;
  return peerRules(perCnf).map((rule) => ({
    ...rule,
    name: `${prefix}${rule.name}`,
    spec:
      typeof rule.spec["policy"] === "string"
        ? { ...rule.spec, policy: `${prefix}${rule.spec["policy"]}` }
        : rule.spec,
  }));
}

const isApplied = (rule: ListedRule): boolean =>
  rule.status?.["inSync"] === true && rule.status["appliedGeneration"] === rule.metadata.generation;

function holdingProblem(world: FleetWorld, expected: readonly Record<string, string[]>[]) {
  for (const [c, cnf] of world.cnfs.entries()) {
    const want = expected[c] ?? {};
    for (const [i, pod] of cnf.pods.entries()) {
      const state = pod.sim.state().collections;
      for (const [collection, names] of Object.entries(want)) {
        const held = (state[collection] ?? []).map((o) => String(o["name"])).sort();
        if (held.join(",") !== names.join(",")) {
          return `${cnf.name} pod ${i} holds ${held.length} of ${names.length} ${collection}`;
        }
      }
    }
  }
  return undefined;
}

async function statusProblem(
  fp: FleetPlane,
  namespace: string,
  count: number,
): Promise<string | undefined> {
  let listed = 0;
  for (const { plural, kind } of PEER_KINDS) {
    const reply = await fp.raw.must("GET", rulePath(namespace, plural));
    const items = (JSON.parse(reply.body) as { items: ListedRule[] }).items;
    listed += items.length;
    const pending = items.filter((r) => !isApplied(r)).length;
    if (pending > 0) return `${pending} ${kind} not applied`;
  }
  return listed === count ? undefined : `${listed} of ${count} rules listed`;
}

/** Resolves once the functions made no audited request for QUIET_MS (at most QUIET_MAX_MS). */
async function quiet(audit: AuditCounter): Promise<void> {
  const end = Date.now() + QUIET_MAX_MS;
  let last = await audit.size();
  let since = Date.now();
  while (Date.now() < end) {
    await delay(250);
    const now = await audit.size();
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= QUIET_MS) {
      return;
    }
  }
}

const allPods = (world: FleetWorld): CnfPod[] => world.cnfs.flatMap((c) => c.pods);

function cnfWork(pods: readonly CnfPod[]) {
  let requests = 0;
  let restartsMax = 0;
  let restarts = 0;
  for (const pod of pods) {
    const c = pod.sim.counters();
    requests +=
      c.logins +
      c.serviceActions +
      Object.values(c.collections).reduce((s, x) => s + x.reads + x.writes, 0);
    const perService = new Map<string, number>();
    for (const a of pod.sim.serviceActions()) {
      perService.set(a.service, (perService.get(a.service) ?? 0) + 1);
      restarts += 1;
    }
    restartsMax = Math.max(restartsMax, ...perService.values());
  }
  return { requests, restartsMax, restartsMean: pods.length === 0 ? 0 : restarts / pods.length };
}

const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);

interface Meter {
  readonly fp: FleetPlane;
  readonly world: FleetWorld;
  readonly audit: AuditCounter;
  /** The pods whose CNF work counts (after a rollout: the new ones). */
  readonly pods: () => readonly CnfPod[];
}

async function measure(
  { fp, world, audit, pods }: Meter,
  budgetMs: number,
  action: () => Promise<void>,
  check: () => Promise<string | undefined>,
): Promise<FleetOutcome> {
  await quiet(audit);
  await audit.update();
  const api0 = audit.snapshot();
  const etcd0 = await fp.etcdWrites();
  for (const pod of allPods(world)) pod.sim.resetCounters();
  const started = performance.now();
  await action();
  let problem: string | undefined;
  let elapsed = 0;
  for (;;) {
    problem = await check();
    elapsed = performance.now() - started;
    if (problem === undefined || elapsed > budgetMs * HARD_LIMIT_FACTOR) break;
    await delay(pollMs(pods().length));
  }
  await quiet(audit);
  await audit.update();
  const api = countsSince(api0, audit.snapshot());
  const etcd1 = await fp.etcdWrites();
  let apiRequests = 0;
  let apiWrites = 0;
  for (const [key, n] of api) {
    apiRequests += n;
    if (WRITE_VERBS.has(key.split(" ")[0] ?? "")) apiWrites += n;
  }
  const counted = pods();
  const work = cnfWork(counted);
  const memory: Record<string, { rssMb: number; peakMb: number }> = {};
  for (const [fn, proc] of world.functions) memory[fn] = await proc.memory();
  return {
    converged: problem === undefined && elapsed <= budgetMs,
    completed: problem === undefined,
    ms: elapsed,
    budgetMs,
    api,
    apiRequests,
    apiWrites,
    cnfRequests: work.requests,
    restartsMax: work.restartsMax,
    restartsMean: work.restartsMean,
    pods: counted.length,
    etcdPuts: etcd1.puts - etcd0.puts,
    etcdBytes: etcd1.bytes - etcd0.bytes,
    memory,
    ...(problem === undefined ? {} : { problem }),
  };
}

export interface FleetBudgets {
  readonly createMs: number;
  readonly rebootMs: number;
  readonly rolloutMs: number;
}

/** The three scenarios, one after the other, on `world` with `perCnf` rules per CNF. */
export async function runFleetScenarios(
  fp: FleetPlane,
  world: FleetWorld,
  perCnf: number,
  budgets: FleetBudgets,
  log: (line: string) => void,
): Promise<Record<FleetScenario, FleetOutcome>> {
  const audit = new AuditCounter(fp.auditLog);
  const rules = world.cnfs.map((_, i) => fleetRules(i, perCnf));
  const total = rules.reduce((s, r) => s + r.length, 0);
  const expected = rules.map((r) => expectedHoldings(r));
  const endState = (): (() => Promise<string | undefined>) => {
    let lastStatusCheck = 0;
    return async () => {
      const held = holdingProblem(world, expected);
      if (held !== undefined) return held;
      const wait = lastStatusCheck + statusPollMs(total) - performance.now();
      if (wait > 0) await delay(wait);
      lastStatusCheck = performance.now();
      return statusProblem(fp, world.namespace, total);
    };
  };
  const say = (what: string, o: FleetOutcome): void =>
    log(
      `fleet ${world.cnfs.length} CNFs ${what}: ${Math.round(o.ms)} ms${o.converged ? "" : ` (budget ${o.budgetMs / 1000} s)`}${o.problem === undefined ? "" : `, still ${o.problem}`}, ` +
        `${o.apiRequests} API requests (${o.apiWrites} writes), ${o.cnfRequests} CNF requests, ` +
        `restarts per service per pod max ${o.restartsMax}, etcd ${o.etcdPuts} puts / ${o.etcdBytes} B`,
    );
  const limit = pLimit(USER_CONCURRENCY);
  const pods = (): CnfPod[] => allPods(world);

  const meter: Meter = { fp, world, audit, pods: () => allPods(world) };
  const create = await measure(
    meter,
    budgets.createMs,
    async () => {
      // Policies first within each CNF (what a user's kubectl apply of one file would do), the
      // CNFs' creates interleaved.
      await Promise.all(
        world.cnfs.flatMap((cnf, c) =>
          (rules[c] ?? []).map((rule) =>
            limit(() =>
              fp.raw.must(
                "POST",
                rulePath(world.namespace, rule.plural),
                ruleManifest(rule, cnf.purpose),
              ),
            ),
          ),
        ),
      );
    },
    endState(),
  );
  say("create", create);

  const reboot = await measure(
    meter,
    budgets.rebootMs,
    async () => {
      await Promise.all(pods().map((pod) => limit(() => world.fleet.crashPod(pod))));
      await Promise.all(
        world.cnfs.map((cnf) => limit(() => writeDeploymentStatus(world.kube, cnf, 0))),
      );
      await Promise.all(pods().map((pod) => limit(() => world.fleet.setPodReady(pod, true))));
      await Promise.all(
        world.cnfs.map((cnf) =>
          limit(() => writeDeploymentStatus(world.kube, cnf, cnf.pods.length)),
        ),
      );
    },
    endState(),
  );
  say("reboot", reboot);

  const rollout = await measure(
    meter,
    budgets.rolloutMs,
    async () => {
      await Promise.all(world.cnfs.map((cnf) => limit(() => rollOut(world, cnf))));
    },
    endState(),
  );
  say("rollout", rollout);
  return { create, reboot, rollout };
}

/**
 * A Deployment controller's rolling update of `cnf` (maxSurge 1, maxUnavailable 0): a new
 * ReplicaSet; per old pod, a new Ready pod, then the old one deleted and the ReplicaSets scaled.
 */
async function rollOut(world: FleetWorld, cnf: Cnf): Promise<void> {
  const hash = randomBytes(4).toString("hex");
  const old = [...cnf.pods];
  await world.fleet.createReplicaSet(cnf, hash, 0);
  for (const [i, pod] of old.entries()) {
    await world.fleet.scaleReplicaSet(cnf, hash, i + 1);
    await world.fleet.addPod(cnf, hash);
    await writeDeploymentStatus(world.kube, cnf, cnf.pods.length);
    await world.fleet.scaleReplicaSet(cnf, cnf.hash, old.length - i - 1);
    await world.fleet.deletePod(cnf, pod);
    await writeDeploymentStatus(world.kube, cnf, cnf.pods.length);
  }
}
