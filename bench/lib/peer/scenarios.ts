/**
 * The peer rows' scenarios, run the same way against any PeerWorld: 300 rules created at once,
 * a spec change of one rule, one CNF pod restarted (state lost), every rule deleted at once. Each
 * is timed from the first request the bench makes until the end state holds (both pods hold
 * exactly the objects, every status says applied) or its budget runs out; the controller's API
 * requests and the CNF's service restarts are counted until the controller goes quiet.
 */
import pLimit from "p-limit";
import { setTimeout as delay } from "node:timers/promises";
import type { CnfPod } from "../../../dev/world/index.js";
import {
  CHANGED_RULE,
  PEER_KINDS,
  expectedHoldings,
  ruleManifest,
  rulePath,
  type ListedRule,
  type PeerRule,
} from "./rules.js";
import { cnfWork, restartCnfPod, writeDeploymentStatus, type PeerWorld } from "./world.js";

export type ScenarioId = "create" | "spec-change" | "pod-restart" | "delete";

export interface Outcome {
  readonly converged: boolean;
  /** Time to the end state, or the budget when it was not reached. */
  readonly ms: number;
  readonly budgetMs: number;
  readonly apiRequests: number;
  readonly cnfRequests: number;
  readonly restarts: number;
  /** Work the controller put off to try again (PeerWorld.retries). */
  readonly retries: number;
  /** What was still wrong when the budget ran out. */
  readonly problem?: string;
  /** Runs the outcome is the median of (counts are then means per run); absent: one run. */
  readonly runs?: number;
  /** How the end state was reached after all (untimed), so the next scenario starts from it. */
  readonly recovery?: string;
}

export interface Budgets {
  readonly createMs: number;
  readonly specChangeMs: number;
  readonly podRestartMs: number;
  readonly deleteMs: number;
}

/** The spec-change row changes one rule's dest_port this many times (to these values). */
export const SPEC_CHANGE_PORTS = ["4321", "4322", "4323", "4324", "4325"];

/**
 * Repeated runs of one scenario as one outcome: the median time (a run that did not converge
 * counts as its budget), the mean counts per run, converged only if every run did.
 */
export function medianOutcome(outcomes: readonly Outcome[]): Outcome {
  const first = outcomes[0];
  if (first === undefined) throw new Error("no outcome");
  const times = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  const mean = (f: (o: Outcome) => number): number =>
    outcomes.reduce((sum, o) => sum + f(o), 0) / outcomes.length;
  const stuck = outcomes.find((o) => o.problem !== undefined);
  return {
    converged: outcomes.every((o) => o.converged),
    ms: times[Math.floor(times.length / 2)] ?? first.ms,
    budgetMs: first.budgetMs,
    apiRequests: mean((o) => o.apiRequests),
    cnfRequests: mean((o) => o.cnfRequests),
    restarts: mean((o) => o.restarts),
    retries: mean((o) => o.retries),
    ...(stuck?.problem === undefined ? {} : { problem: stuck.problem }),
    runs: outcomes.length,
  };
}

/** Creates and deletes are issued like `kubectl apply` of many objects: this many at a time. */
const USER_CONCURRENCY = 16;
const POLL_MS = 50;
/** API checks of the statuses, once the CNFs look right: at most this often. */
const STATUS_POLL_MS = 250;
/** The controller is quiet when its API request count stays the same this long. */
const QUIET_MS = 1_000;
const QUIET_MAX_MS = 10_000;

async function listRules(world: PeerWorld, plural: string): Promise<ListedRule[]> {
  const reply = await world.raw.must("GET", rulePath(world.namespace, plural));
  return (JSON.parse(reply.body) as { items: ListedRule[] }).items;
}

function holdingProblem(
  pods: readonly CnfPod[],
  expected: Readonly<Record<string, readonly string[]>>,
): string | undefined {
  for (const [i, pod] of pods.entries()) {
    const state = pod.sim.state().collections;
    for (const [collection, want] of Object.entries(expected)) {
      const held = (state[collection] ?? []).map((o) => String(o["name"])).sort();
      if (held.join(",") !== want.join(",")) {
        return `pod ${i} holds ${held.length} of ${want.length} ${collection}`;
      }
    }
  }
  return undefined;
}

async function statusProblem(world: PeerWorld, count: number): Promise<string | undefined> {
  let listed = 0;
  for (const { plural, kind } of PEER_KINDS) {
    const items = await listRules(world, plural);
    listed += items.length;
    const pending = items.filter((r) => !world.isApplied(r));
    if (pending.length > 0) return `${pending.length} ${kind} not applied`;
  }
  return listed === count ? undefined : `${listed} of ${count} rules listed`;
}

/** Resolves once the controller has made no API request for QUIET_MS (at most QUIET_MAX_MS). */
async function quiet(world: PeerWorld): Promise<number> {
  const end = Date.now() + QUIET_MAX_MS;
  let last = await world.apiRequests();
  let since = Date.now();
  while (Date.now() < end) {
    await delay(200);
    const now = await world.apiRequests();
    if (now !== last) {
      last = now;
      since = Date.now();
    } else if (Date.now() - since >= QUIET_MS) {
      break;
    }
  }
  return last;
}

/**
 * Runs `action`, then waits until `check` finds nothing wrong or `budgetMs` (from the start of
 * the action) has passed. `check` is cheap first (simulator state) and reads the API only when
 * the CNFs look right.
 */
async function measure(
  world: PeerWorld,
  budgetMs: number,
  action: () => Promise<void>,
  check: () => Promise<string | undefined>,
): Promise<Outcome> {
  await quiet(world);
  const api0 = await world.apiRequests();
  const retries0 = await world.retries();
  for (const pod of world.cnf.pods) pod.sim.resetCounters();
  const started = performance.now();
  await action();
  let problem: string | undefined = "not checked";
  let elapsed = 0;
  for (;;) {
    problem = await check();
    elapsed = performance.now() - started;
    if (problem === undefined || elapsed > budgetMs) break;
    await delay(POLL_MS);
  }
  const api = (await quiet(world)) - api0;
  const work = cnfWork(world.cnf);
  return {
    converged: problem === undefined,
    ms: problem === undefined ? elapsed : budgetMs,
    budgetMs,
    apiRequests: api,
    cnfRequests: work.requests,
    restarts: work.restarts,
    retries: (await world.retries()) - retries0,
    ...(problem === undefined ? {} : { problem }),
  };
}

/** A check of the CNFs' holdings and then (rate-limited) of the statuses. */
function endState(
  world: PeerWorld,
  expected: Readonly<Record<string, readonly string[]>>,
  count: number,
  pods: readonly CnfPod[] = world.cnf.pods,
): () => Promise<string | undefined> {
  let lastStatusCheck = 0;
  return async () => {
    const held = holdingProblem(pods, expected);
    if (held !== undefined) return held;
    const wait = lastStatusCheck + STATUS_POLL_MS - performance.now();
    if (wait > 0) await delay(wait);
    lastStatusCheck = performance.now();
    return statusProblem(world, count);
  };
}

async function createAll(world: PeerWorld, rules: readonly PeerRule[]): Promise<void> {
  const limit = pLimit(USER_CONCURRENCY);
  await Promise.all(
    rules.map((rule) =>
      limit(() =>
        world.raw.must(
          "POST",
          rulePath(world.namespace, rule.plural),
          ruleManifest(rule, world.purpose),
        ),
      ),
    ),
  );
}

async function deleteAll(world: PeerWorld, rules: readonly PeerRule[]): Promise<void> {
  const limit = pLimit(USER_CONCURRENCY);
  await Promise.all(
    rules.map((rule) =>
      limit(() => world.raw.must("DELETE", rulePath(world.namespace, rule.plural, rule.name))),
    ),
  );
}

/** The four scenarios in the order their start states need: create, spec change, restart, delete. */
export async function runScenarios(
  world: PeerWorld,
  rules: readonly PeerRule[],
  budgets: Budgets,
  log: (line: string) => void,
): Promise<Record<ScenarioId, Outcome>> {
  const expected = expectedHoldings(rules);
  const say = (what: string, o: Outcome): void =>
    log(
      `${world.label} ${what}: ${o.converged ? `${Math.round(o.ms)} ms` : `did not converge in ${o.budgetMs / 1000} s (${o.problem})`}, ` +
        `${o.apiRequests} API requests, ${o.cnfRequests} CNF requests, ${o.restarts} restarts, ${o.retries} retries`,
    );

  let create = await measure(
    world,
    budgets.createMs,
    () => createAll(world, rules),
    endState(world, expected, rules.length),
  );
  say("create", create);
  if (!create.converged) {
    // The rows after this one need every rule applied: nudge the controller the way a cluster
    // would (a Deployment status change reconciles every rule of the CNF upstream), untimed.
    const started = performance.now();
    await writeDeploymentStatus(world.kube, world.cnf, world.cnf.pods.length - 1);
    await writeDeploymentStatus(world.kube, world.cnf, world.cnf.pods.length);
    const check = endState(world, expected, rules.length);
    let problem = await check();
    while (problem !== undefined && performance.now() - started < budgets.createMs) {
      await delay(POLL_MS);
      problem = await check();
    }
    const recovery =
      problem === undefined
        ? `complete ${((performance.now() - started) / 1000).toFixed(1)} s after a Deployment status event`
        : `still incomplete ${budgets.createMs / 1000} s after a Deployment status event (${problem})`;
    log(`${world.label} create: ${recovery}`);
    create = { ...create, recovery };
  }

  const changed = rules.find((r) => r.name === CHANGED_RULE);
  if (changed === undefined) throw new Error(`the rule set has no ${CHANGED_RULE}`);
  const specChanges: Outcome[] = [];
  for (const port of SPEC_CHANGE_PORTS) {
    specChanges.push(
      await measure(
        world,
        budgets.specChangeMs,
        async () => {
          await world.raw.mergePatch(rulePath(world.namespace, changed.plural, changed.name), {
            spec: { dest_port: port },
          });
        },
        async () => {
          const onPods = world.cnf.pods.every((pod) =>
            (pod.sim.state().collections[changed.collection] ?? []).some(
              (o) => o["name"] === changed.name && String(o["dest_port"]) === port,
            ),
          );
          if (!onPods) return `not on every pod yet`;
          const reply = await world.raw.must(
            "GET",
            rulePath(world.namespace, changed.plural, changed.name),
          );
          return world.isApplied(JSON.parse(reply.body) as ListedRule)
            ? undefined
            : "status behind";
        },
      ),
    );
  }
  const specChange = medianOutcome(specChanges);
  say("spec change", specChange);

  const pod = world.cnf.pods[0];
  if (pod === undefined) throw new Error("the CNF has no pod");
  const podRestart = await measure(
    world,
    budgets.podRestartMs,
    () => restartCnfPod(world, pod),
    endState(world, expected, rules.length),
  );
  say("pod restart", podRestart);

  const empty = Object.fromEntries(Object.keys(expected).map((c) => [c, []]));
  const del = await measure(
    world,
    budgets.deleteMs,
    () => deleteAll(world, rules),
    endState(world, empty, 0),
  );
  say("delete", del);
  return { create, "spec-change": specChange, "pod-restart": podRestart, delete: del };
}
