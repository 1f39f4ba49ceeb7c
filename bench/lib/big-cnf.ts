/**
 * The 1,000-rule CNF: one namespace, a CNF with 2 pods, `count` rules over every rule kind, applied
 * once. `restartRun` is the scenario the on-deployment-ready row and the RSS measurement share:
 * both pods restart (their CNFs lose every object), turn not ready (statuses say so), turn ready
 * again, and one CNF event brings every rule back on both pods with statuses true.
 */
import { ruleResource, type KubeClient } from "../../shared/kube/index.js";
import {
  RULE_KIND_NAMES,
  exampleRules,
  requireKind,
  type RuleStatus,
} from "../../shared/kinds/index.js";
import type { Cnf } from "../../dev/world/index.js";
import type { BenchContext } from "./context.js";
import { postObjectEvent, type EventReply } from "./events.js";
import { createRules, ruleCollections, type GeneratedRule } from "./rules.js";

export const BIG_PURPOSE = "big";

export interface BigCnf {
  readonly cnf: Cnf;
  /** Whether every rule has been applied once (by whichever row came first). */
  applied: boolean;
  readonly rules: readonly GeneratedRule[];
  /** Per rule collection, the sorted names each pod must hold. */
  readonly expected: Readonly<Record<string, string[]>>;
}

export interface RunResult {
  /** The final (timed) delivery and its redeliveries after 503. */
  readonly replies: readonly EventReply[];
  readonly ms: number;
  /** The deliveries before it (the pods' not-ready event), untimed. */
  readonly before?: readonly EventReply[];
}

let cached: Promise<BigCnf> | undefined;

function expectedHoldings(rules: readonly GeneratedRule[]): Record<string, string[]> {
  const expected: Record<string, string[]> = {};
  for (const rule of rules) {
    const { module, collection } = requireKind(rule.kind).cnf;
    (expected[`${module}/${collection}`] ??= []).push(rule.name);
  }
  for (const names of Object.values(expected)) names.sort();
  return expected;
}

/** The 1,000-rule CNF of this run, created on first use (rules created, not yet applied). */
export function bigCnf(ctx: BenchContext): Promise<BigCnf> {
  cached ??= (async () => {
    const namespace = await ctx.cluster.namespace("bench-big");
    const cnf = await ctx.fleet.createCnf(BIG_PURPOSE, { namespace, pods: 2 });
    const rules = exampleRules(ctx.sizes.restartRules);
    const started = performance.now();
    await createRules(ctx.cluster.raw, namespace, BIG_PURPOSE, rules);
    ctx.log(`created ${rules.length} rules in ${Math.round(performance.now() - started)} ms`);
    return { cnf, rules, expected: expectedHoldings(rules), applied: false };
  })();
  return cached;
}

/** Delivers one Deployment event, redelivering after 503 as the connector would (no backoff). */
export async function deliverUntilDone(url: string, cnf: Cnf, attempts = 5): Promise<EventReply[]> {
  const ref = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    namespace: cnf.namespace,
    name: cnf.name,
  };
  const replies: EventReply[] = [];
  for (let i = 0; i < attempts; i += 1) {
    const reply = await postObjectEvent(url, ref);
    replies.push(reply);
    if (reply.status !== 503) break;
  }
  return replies;
}

/** The first sync of every rule through `url` (one Deployment event); throws unless it converged. */
export async function applyAll(big: BigCnf, url: string, kube: KubeClient): Promise<RunResult> {
  const started = performance.now();
  const replies = await deliverUntilDone(url, big.cnf);
  const ms = performance.now() - started;
  const problems = await endStateProblems(big, kube);
  if (replies.at(-1)?.status !== 202 || problems.length > 0) {
    throw new Error(
      `first sync: ${JSON.stringify(replies.at(-1))}; ${problems.slice(0, 3).join("; ")}`,
    );
  }
  big.applied = true;
  return { replies, ms };
}

/** Restart both pods, not ready -> event, ready -> the timed event (and its redeliveries). */
export async function restartRun(
  ctx: BenchContext,
  big: BigCnf,
  url: string,
  beforeTimed: () => void = () => undefined,
): Promise<RunResult> {
  const { cnf } = big;
  for (const pod of cnf.pods) await ctx.fleet.crashPod(pod);
  const notReady = await deliverUntilDone(url, cnf);
  if (notReady.at(-1)?.status !== 202) {
    throw new Error(`the not-ready event was answered ${JSON.stringify(notReady.at(-1))}`);
  }
  for (const pod of cnf.pods) await ctx.fleet.setPodReady(pod, true);
  beforeTimed();
  const started = performance.now();
  const replies = await deliverUntilDone(url, cnf);
  return { replies, ms: performance.now() - started, before: notReady };
}

/** What is wrong with the end state: pods missing or holding extra objects, statuses not true. */
export async function endStateProblems(big: BigCnf, kube: KubeClient): Promise<string[]> {
  const problems: string[] = [];
  const collections = ruleCollections();
  big.cnf.pods.forEach((pod, i) => {
    const state = pod.sim.state().collections;
    for (const collection of collections) {
      const held = (state[collection] ?? []).map((o) => String(o["name"])).sort();
      const want = big.expected[collection] ?? [];
      if (held.join(",") !== want.join(",")) {
        problems.push(`pod ${i} ${collection}: holds ${held.length}, expected ${want.length}`);
      }
    }
  });
  for (const kind of RULE_KIND_NAMES) {
    const items = (await kube.list(ruleResource(requireKind(kind)), {
      namespace: big.cnf.namespace,
    })) as { metadata: { name: string; generation?: number }; status?: RuleStatus }[];
    const bad = items.filter(
      (r) => r.status?.inSync !== true || r.status.appliedGeneration !== r.metadata.generation,
    );
    if (bad.length > 0)
      problems.push(`${bad.length} ${kind} not inSync (e.g. ${bad[0]?.metadata.name})`);
  }
  return problems;
}
